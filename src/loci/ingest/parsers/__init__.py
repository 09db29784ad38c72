"""Bytes of a file → `ParsedDocument`, one parser per format, chosen here.

The file name's extension picks the parser, but magic bytes win when they disagree: a PDF saved
as `notes.txt` is still parsed as a PDF, and a `.pdf` that is really an HTML error page is read as
HTML. A zip archive is a DOCX, PPTX, XLSX, EPUB or ODT by its members (`[Content_Types].xml` and
the main part's folder, or the `mimetype` member), whatever its name; any other zip is refused.
An image is recognised by its header (PNG, JPEG, WebP, TIFF, GIF, BMP, HEIC) and read by OCR; a
recording by its header too (WAV, MP3, M4A/MP4, Ogg/Opus, WebM, FLAC) and read by the configured
speech-to-text service (`transcriber`), which is the only parser that leaves the machine.

Parsers run under `ParseBudgets` because files come from users and the web: a zip bomb, a
100,000-page PDF or a pathological layout must fail with a clear message, not take the worker down.

Parser modules are imported on first use: pdfium and trafilatura take a noticeable time to load,
and a process that only ever parses markdown should not pay for them.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from loci.errors import BudgetExceeded, EncryptedDocument, NoParser, ParseError
from loci.ingest.ocr.images import IMAGE_EXTENSIONS, sniff_image
from loci.ingest.parsers.audio import AUDIO_EXTENSIONS, MP3_EXTENSIONS, mp3_frame, sniff_audio
from loci.models import Block, ParsedDocument

if TYPE_CHECKING:
    from loci.llm.transcribe import Transcriber

__all__ = [
    "Deadline",
    "ParseBudgets",
    "choose_parser",
    "parse",
    "parse_as",
    "supported_extensions",
    "trimmed",
]


@dataclass(frozen=True)
class ParseBudgets:
    """Limits one parse may not pass; each parser checks the ones that apply to its format."""

    max_decompressed_bytes: int = 200 * 1024 * 1024
    max_compression_ratio: float = 100.0
    # One XML part of a package (a sheet, a shared-strings table, a slide, a chapter) is held
    # in memory while it is read, so it has a budget of its own below the package's.
    max_part_bytes: int = 64 * 1024 * 1024
    # Elements and attributes of the XML parts parsed into memory, in all: a parsed element
    # costs lxml and python-docx some 150 bytes however small it is in the file, so 63 MB of
    # tiny Word paragraphs took 1.4 GB. At this limit the worst shapes measured peak at 260 MB
    # over the baseline (bench/parse_xml_bomb.py); real documents have a few hundred thousand.
    max_xml_nodes: int = 2_000_000
    max_pdf_pages: int = 5000
    timeout_s: float = 120.0
    # Images are decoded whole: the pixel count is checked on the header first (bombs).
    max_image_pixels: int = 40_000_000
    # OCR is slow by nature (about a second a page here): each page read by OCR adds this much
    # time to the parse's budget, so a 300-page scan is not cut off by a limit set for text.
    ocr_seconds_per_page: float = 30.0
    ocr_processes: int = 2  # scanned pages read at once (one single-threaded Tesseract each)
    max_ocr_pages: int = 1000
    # Where Tesseract reads little or nothing, RapidOCR reads the image too, if installed.
    ocr_fallback: bool = True
    # The memory of the process a file is read in (`loci.ingest.parse_process`), MB:
    # what the budgets above miss fails here, alone. 0 reads in the calling process, uncapped.
    max_memory_mb: int = 1024
    # What one file's parse hands on (`trimmed`): the indexing process holds the document's
    # text several times over and an object per block, about 4 bytes a character and 1 KB a
    # block, so a file of 66 MB of text or 500,000 tiny paragraphs grew it by 250-530 MB.
    # Only the first `max_chunks` (1024) chunks are indexed, some 800,000 characters: text
    # past these is never searched, only shown.
    max_text_chars: int = 8_000_000
    max_blocks: int = 50_000


class Deadline:
    """The time budget of one parse, checked between pages or elements (parsers cannot be
    interrupted mid-call, so the check sits in their loops)."""

    def __init__(self, budgets: ParseBudgets, what: str) -> None:
        self._timeout = budgets.timeout_s
        self._what = what
        self._ends = time.monotonic() + budgets.timeout_s

    def check(self) -> None:
        if time.monotonic() > self._ends:
            raise BudgetExceeded(
                f"parsing this {self._what} took longer than the {self._timeout:g} s budget"
            )

    def extend(self, seconds: float) -> None:
        """More time for slow work the budget was not sized for (OCR of one more page)."""
        self._ends += seconds
        self._timeout += seconds

    def remaining(self) -> float:
        return max(0.1, self._ends - time.monotonic())


_TEXT = frozenset({".txt", ".text", ".log"})
_MARKDOWN = frozenset({".md", ".markdown", ".mdown", ".mkd"})
_HTML = frozenset({".html", ".htm", ".xhtml"})
_PDF = frozenset({".pdf"})
_CSV = frozenset({".csv", ".tsv"})
_RTF = frozenset({".rtf"})
_EML = frozenset({".eml"})
_MBOX = frozenset({".mbox", ".mbx"})
# Zip-based formats by extension; which one a zip really is comes from its members.
_PACKAGES = frozenset({".docx", ".pptx", ".xlsx", ".xlsm", ".epub", ".odt"})
_IMAGES = IMAGE_EXTENSIONS
_AUDIO = AUDIO_EXTENSIONS

_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy Office files and encrypted OOXML
_HTML_PREFIXES = (b"<!doctype html", b"<html", b"<head", b"<body")


def supported_extensions() -> tuple[str, ...]:
    from loci.ingest.parsers.code import LANGUAGES

    plain = _TEXT | _MARKDOWN | _HTML | _PDF | _CSV | _RTF | _EML | _MBOX | _IMAGES | _AUDIO
    return tuple(sorted(plain | _PACKAGES | set(LANGUAGES)))


def parse(
    data: bytes, name: str, budgets: ParseBudgets, transcriber: Transcriber | None = None
) -> ParsedDocument:
    """Parse a file's bytes; `name` is only used for its extension, never as a path.
    A recording needs `transcriber` (None: it fails, saying which setting is missing)."""
    if not data.strip():
        raise ParseError("the file is empty")
    return parse_as(choose_parser(data, name), data, name, budgets, transcriber)


def parse_as(
    kind: str,
    data: bytes,
    name: str,
    budgets: ParseBudgets,
    transcriber: Transcriber | None = None,
) -> ParsedDocument:
    """Parse with the parser `choose_parser` picked (`loci.ingest.plan` picks it once, so the
    dry run and the indexer read a file the same way)."""
    path = PurePath(name)
    if kind == "audio":
        from loci.ingest.parsers.audio import parse_audio

        return parse_audio(data, audio_format(data), transcriber)
    if kind == "pdf":
        from loci.ingest.parsers.pdf import parse_pdf

        return parse_pdf(data, budgets)
    if kind == "image":
        from loci.ingest.parsers.image import parse_image

        return parse_image(data, budgets)
    if kind == "docx":
        from loci.ingest.parsers.docx import parse_docx

        return parse_docx(data, budgets)
    if kind == "pptx":
        from loci.ingest.parsers.pptx import parse_pptx

        return parse_pptx(data, budgets)
    if kind == "xlsx":
        from loci.ingest.parsers.xlsx import parse_xlsx

        return parse_xlsx(data, budgets)
    if kind == "epub":
        from loci.ingest.parsers.epub import parse_epub

        return parse_epub(data, budgets)
    if kind == "odt":
        from loci.ingest.parsers.odt import parse_odt

        return parse_odt(data, budgets)
    if kind == "csv":
        from loci.ingest.parsers.delimited import parse_delimited

        return parse_delimited(data, budgets, tab=path.suffix.lower() == ".tsv")
    if kind == "rtf":
        from loci.ingest.parsers.rtf import parse_rtf

        return parse_rtf(data, budgets)
    if kind in ("eml", "mbox"):
        from loci.ingest.parsers.mail import parse_eml, parse_mbox

        return parse_eml(data, budgets) if kind == "eml" else parse_mbox(data, budgets)
    if kind == "code":
        from loci.ingest.parsers.code import parse_code

        return parse_code(data, name)
    if kind == "html":
        from loci.ingest.parsers.html import decode_html, parse_html

        return parse_html(decode_html(data))
    if kind == "markdown":
        from loci.ingest.parsers.markdown import parse_markdown

        return parse_markdown(data)
    from loci.ingest.parsers.text import parse_text

    return parse_text(data)


def trimmed(parsed: ParsedDocument, budgets: ParseBudgets) -> ParsedDocument:
    """`parsed` cut to `max_text_chars` characters of text and `max_blocks` blocks, with a
    warning saying so: what a file's parse hands on stays bounded however much it held."""
    chars = -2  # the first block has no blank line before it
    for index, block in enumerate(parsed.blocks):
        if index == budgets.max_blocks:
            kept: tuple[Block, ...] = parsed.blocks[:index]
            cut = f"its first {budgets.max_blocks:,} paragraphs"
            break
        chars += 2 + len(block.text)
        if chars > budgets.max_text_chars:
            room = len(block.text) - (chars - budgets.max_text_chars)
            kept = parsed.blocks[:index]
            if room > 0:
                kept += (dataclasses.replace(block, text=block.text[:room]),)
            cut = f"the first {budgets.max_text_chars:,} characters of its text"
            break
    else:
        return parsed
    warning = f"only {cut} were kept: the file holds more"
    return dataclasses.replace(parsed, blocks=kept, warnings=(*parsed.warnings, warning))


def choose_parser(data: bytes, name: str) -> str:
    """The parser these bytes get ("pdf", "markdown", "image", …): magic bytes first, then the
    name's extension. Raises ParseError (NoParser, EncryptedDocument, …) as parsing would."""
    from loci.ingest.parsers.code import language_of

    path = PurePath(name)
    extension, filename = path.suffix.lower(), path.name
    sniffed = _sniff(data)
    if sniffed in ("pdf", "docx", "pptx", "xlsx", "epub", "odt", "rtf"):
        return sniffed
    if sniffed == "zip" and extension in _PACKAGES:
        from loci.ingest.parsers.package import readable_zip

        if not readable_zip(data):  # cut short before the members that name the format
            label = extension.lstrip(".").upper()
            raise ParseError(f"corrupt {label}: the zip archive is cut short or damaged")
    if sniffed == "zip":
        raise NoParser(
            "no parser for this type (a zip archive that is not a Word, PowerPoint, Excel, "
            "EPUB or OpenDocument file)"
        )
    if sniffed == "ole2":
        if "EncryptedPackage".encode("utf-16-le") in data:
            raise EncryptedDocument("password-protected Office document")
        raise NoParser(
            "no parser for this type (legacy .doc/.xls/.ppt; save it as .docx, .xlsx or .pptx)"
        )
    if sniffed in ("image", "audio"):
        return sniffed
    if extension in MP3_EXTENSIONS and mp3_frame(data):
        return "audio"
    if extension in _AUDIO:
        raise ParseError(
            f"not a {extension.lstrip('.').upper()} recording: its first bytes are not an audio"
            " header (corrupt, or another kind of file)"
        )
    if extension in _IMAGES:
        raise ParseError(
            f"not a {extension.lstrip('.').upper()} image: its first bytes are not an image"
            " header (corrupt, or another kind of file)"
        )
    if extension in _PDF:
        if sniffed == "html":
            return "html"
        raise ParseError("not a PDF: the file does not start with a PDF header")
    if extension in _PACKAGES:
        label = extension.lstrip(".").upper()
        raise ParseError(f"not a {label}: the file is not a zip archive (corrupt or truncated)")
    if extension in _RTF:
        raise ParseError("not an RTF file: it does not start with {\\rtf")
    if extension in _MARKDOWN:
        return "markdown"
    if extension in _HTML or sniffed == "html":
        return "html"
    if extension in _CSV:
        return "csv"
    if extension in _EML:
        return "eml"
    if extension in _MBOX:
        return "mbox"
    if language_of(filename) is not None:
        return "code"
    if extension in _TEXT or not extension or _utf8_text(data):
        return "text"
    raise NoParser("no parser for this type")


def _utf8_text(data: bytes) -> bool:
    """Whether bytes under a suffix no parser claims are plain text all the same: a name that
    ends in a dot and digits ("Apache-2.0", "minutes 3.4") says nothing of its content. Only
    UTF-8 without control characters counts: a legacy code page decodes any bytes, so guessing
    one here would read every unknown binary file as text."""
    sample = data[:_TEXT_SAMPLE]
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(sample) - 3:  # not just a character cut by the sample's end
            return False
        text = sample[: error.start].decode("utf-8")
    return bool(text.strip()) and not any(c < " " and c not in "\t\n\r\f" for c in text)


_TEXT_SAMPLE = 8192


def _sniff(data: bytes) -> str | None:
    head = data[:1024]
    # The PDF spec lets junk precede the header; readers look in the first kilobyte.
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        from loci.ingest.parsers.package import package_kind

        return package_kind(data)
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if head.startswith(_OLE2_MAGIC):
        return "ole2"
    if sniff_image(head) is not None:
        return "image"
    if sniff_audio(head) is not None:
        return "audio"
    lowered = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if lowered.startswith(_HTML_PREFIXES):
        return "html"
    return None


def audio_format(data: bytes) -> str:
    """The format a recording is sent to the transcription service as: its header's, or MP3
    (`choose_parser` takes a file without one only as an .mp3 starting with an MPEG frame)."""
    return sniff_audio(data[:1024]) or "mp3"
