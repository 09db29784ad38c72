"""Preflight: what adding these files and URLs would do, worked out without writing anything.

Before a large import a person (or an agent) wants to know what will happen: which items are new,
which are already in the brain (and as what), which will be refused or fail and why, whether OCR
will run, and roughly how many chunks and how long. Seed 004 asks for this as one object with a
`status` (ok | warning | error), `warnings`, `errors` and `existing_rows`; Loci adds the items
and the totals.

Each item follows the same steps as `Loci.add_*` and the indexer, minus the writes: the size cap,
the empty check, the content hash against the brain (and against the items before it, as a real
add would dedupe a file given twice), the parser the bytes choose, then parse and chunk with the
embedder's own token counter — so chunk counts are exact for anything that does not need OCR.
Nothing is embedded; the time is the measured parse time plus the chunks at the embedder's
measured throughput. URLs get the fetcher's address check first; a refused address is never
connected to. An allowed URL is fetched (a GET, as `add` would) to see what it holds.

An item's `outcome` predicts what `add` reports for it:
  add        stored and indexed
  duplicate  already in the brain (or earlier in this batch): nothing new is stored
  fail       stored, but indexing will fail (seed 000: "other" is kept and marked failed)
  refuse     not stored at all (too large, empty, unreadable, blocked or unfetchable URL)
"""

from __future__ import annotations

import math
import mimetypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Literal

from loci.errors import LociError, ParseError
from loci.ingest.chunking import chunk_document
from loci.ingest.encoding import decode_text
from loci.ingest.fetch_page import WebPage
from loci.ingest.indexer import CONTEXT_TOKENS
from loci.ingest.parsers import ParseBudgets, _choose, parse
from loci.ingest.sources import clean_name, page_name
from loci.models import Document, ParsedDocument
from loci.store.blobs import sha256_hex

__all__ = [
    "LOCAL_EMBED_CHUNKS_PER_S",
    "Preflight",
    "PreflightItem",
    "PreflightSettings",
    "Preflighter",
    "ocr_needed",
    "summarize",
]

Outcome = Literal["add", "duplicate", "fail", "refuse"]

# Passages a second the shipped local model (int8 MiniLM, ONNX) embeds on 2 cores: 40.4 chunks/s
# for ~200-word chunks, and ~40 passages/s through the whole worker on SciFact (docs/benchmarks.md,
# "Embedding model — speed and fidelity", `bench/embed_throughput.py`). A remote embedder's speed
# depends on its server: set `ingest_chunks_per_s` for it.
LOCAL_EMBED_CHUNKS_PER_S = 40.0

# OCR has no measured figure in docs/benchmarks.md yet (the OCR engine is being added): until it
# does, a page is assumed to take this long and to hold this much text. Replace both with the
# OCR benchmark's figures when they land.
OCR_SECONDS_PER_PAGE = 2.0
OCR_CHARS_PER_PAGE = 1800
CHARS_PER_TOKEN = 4  # for the OCR estimate only; everything else counts real tokens
# A PDF page with fewer characters than this in its text layer is a scan (or a picture).
PDF_TEXT_CHARS_MIN = 20
PDF_PAGES_CHECKED = 3

_IMAGE_EXTENSIONS = frozenset(
    {".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".gif", ".bmp", ".heic"}
)


@dataclass(frozen=True)
class PreflightSettings:
    max_file_bytes: int
    max_chunks: int
    overlap_tokens: int
    budgets: ParseBudgets
    chunks_per_s: float = LOCAL_EMBED_CHUNKS_PER_S


@dataclass(frozen=True)
class ExistingRef:
    id: int | None  # None: an earlier item of this same batch, not yet stored
    name: str
    status: str | None = None  # the existing document's: "failed" means add reports a failure


@dataclass(frozen=True)
class PreflightItem:
    source: str  # the path or URL as given
    outcome: Outcome
    kind: Literal["file", "web"] = "file"
    name: str | None = None
    size_bytes: int | None = None
    media_type: str | None = None
    parser: str | None = None  # the format the parsers read it as: "pdf", "markdown", …
    duplicate_of: ExistingRef | None = None
    over_limit: str | None = None
    ocr: bool = False
    ocr_reason: str | None = None
    chunks: int = 0
    chunks_exact: bool = True  # False: estimated (OCR'd text cannot be counted before OCR)
    seconds: float = 0.0
    address: str | None = None  # for a URL: the addresses it resolves to, all allowed
    rendered: bool = False  # for a URL: its page is rendered in a browser before indexing
    warnings: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class PreflightTotals:
    items: int = 0
    add: int = 0
    duplicate: int = 0
    fail: int = 0
    refuse: int = 0
    new_bytes: int = 0  # what would be stored: items to add and items that will fail
    chunks: int = 0
    ocr: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Preflight:
    status: Literal["ok", "warning", "error"]
    warnings: list[str]
    errors: list[str]
    existing_rows: int  # distinct documents already in the brain that items duplicate
    items: list[PreflightItem]
    totals: PreflightTotals = field(default_factory=PreflightTotals)


def ocr_needed(name: str, data: bytes) -> tuple[bool, str | None]:
    """Whether ingesting this file will run OCR, and why.

    Decided here from the media type and the PDF text layer until the OCR module
    (`loci.ingest.ocr`, being written alongside) exposes its own test; the lead should point this
    at that function so the preflight and the parser can never disagree.
    """
    if PurePath(name).suffix.lower() in _IMAGE_EXTENSIONS or _image_magic(data):
        return True, "an image: its text comes from OCR"
    if b"%PDF-" not in data[:1024]:
        return False, None
    scanned, checked = _pdf_pages_without_text(data)
    if scanned:
        return True, f"{scanned} of the first {checked} pages have no text layer"
    return False, None


def _image_magic(data: bytes) -> bool:
    head = data[:16]
    return head.startswith(
        (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")
    ) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def _pdf_pages_without_text(data: bytes) -> tuple[int, int]:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    try:
        pdf = pdfium.PdfDocument(data)
    except Exception:  # encrypted or corrupt: the parser reports it with its own reason
        return 0, 0
    try:
        checked = min(len(pdf), PDF_PAGES_CHECKED)
        scanned = 0
        for index in range(checked):
            page = pdf[index]
            text = page.get_textpage().get_text_range()
            if len("".join(text.split())) < PDF_TEXT_CHARS_MIN:
                scanned += 1
        return scanned, checked
    finally:
        pdf.close()


def _pdf_pages(data: bytes) -> int:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except Exception:
        return 1
    try:
        return len(pdf)
    finally:
        pdf.close()


class Preflighter:
    """Works out one batch's items; remembers hashes so a file given twice is a duplicate."""

    def __init__(
        self,
        settings: PreflightSettings,
        find_by_hash: Callable[[str], Document | None],
        count_tokens: Callable[[str], int],
        max_tokens: int,
    ) -> None:
        self._settings = settings
        self._find_by_hash = find_by_hash
        self._count_tokens = count_tokens
        self._chunk_tokens = max_tokens - CONTEXT_TOKENS  # as the indexer chunks
        self._seen: dict[str, str] = {}  # content hash -> name, for this batch

    def file(self, path: Path) -> PreflightItem:
        item = PreflightItem(str(path), "refuse", name=clean_name(path.name))
        try:
            size = path.stat().st_size
            if size > self._settings.max_file_bytes:  # as add_file: refused before reading
                return self._too_large(replace(item, size_bytes=size))
            data = path.read_bytes()
        except OSError as error:
            return replace(item, error=f"cannot read: {error.strerror}")
        return self.data(str(path), path.name, data)

    def data(
        self,
        source: str,
        name: str,
        data: bytes,
        *,
        kind: Literal["file", "web"] = "file",
        media_type: str | None = None,
        url: str | None = None,
        address: str | None = None,
        rendered: bool = False,
    ) -> PreflightItem:
        name = clean_name(name)
        item = PreflightItem(
            source,
            "refuse",
            kind=kind,
            name=name,
            size_bytes=len(data),
            media_type=media_type or mimetypes.guess_type(name)[0],
            address=address,
            rendered=rendered,
        )
        if len(data) > self._settings.max_file_bytes:
            return self._too_large(item)
        if not data:
            return replace(item, error=f"{name} is empty")
        digest = sha256_hex(data)
        existing = self._find_by_hash(digest)
        if existing is not None:
            ref = ExistingRef(existing.id, existing.name, existing.status)
        elif digest in self._seen:
            ref = ExistingRef(None, self._seen[digest])
        else:
            self._seen[digest] = name
            return self._parsed(item, data, url)
        return replace(item, outcome="duplicate", duplicate_of=ref, parser=_parser_of(item, data))

    def web(self, source: str, page: WebPage, address: str | None) -> PreflightItem:
        fetched = page.page
        return self.data(
            source,
            page_name(fetched.url, fetched.content_type),
            fetched.body,
            kind="web",
            media_type=fetched.content_type,
            url=fetched.url,
            address=address,
            rendered=page.rendered,
        )

    def too_large(
        self, source: str, name: str, size: int, kind: Literal["file", "web"] = "file"
    ) -> PreflightItem:
        """An item known to be over the cap by its size alone (an upload not read to its end)."""
        return self._too_large(PreflightItem(source, "refuse", kind, clean_name(name), size))

    def _too_large(self, item: PreflightItem) -> PreflightItem:
        limit, size = self._settings.max_file_bytes, item.size_bytes or 0
        reason = f"{item.name} is {size / 1048576:.1f} MB; the limit is {limit / 1048576:g} MB"
        return replace(item, outcome="refuse", over_limit=reason, error=reason)

    def _parsed(self, item: PreflightItem, data: bytes, url: str | None) -> PreflightItem:
        name = item.name or "untitled"
        web_html = _is_web_html(item)
        stored = replace(item, outcome="fail")  # a parse failure is stored and marked failed
        try:
            parser = _choose_parser(item, data)
            if not data.strip():
                raise ParseError("the file is empty")
        except ParseError as error:
            return replace(stored, error=error.message)
        ocr, ocr_reason = (False, None) if web_html else ocr_needed(name, data)
        stored = replace(stored, parser=parser, ocr=ocr, ocr_reason=ocr_reason)
        if ocr:
            return self._ocr_estimate(replace(stored, outcome="add"), data)
        started = time.monotonic()
        try:
            parsed = self._parse(data, name, web_html, url)
        except LociError as error:  # what the worker would record as the failure
            return replace(stored, error=error.message)
        result = chunk_document(
            parsed,
            self._count_tokens,
            max_tokens=self._chunk_tokens,
            overlap_tokens=self._settings.overlap_tokens,
            max_chunks=self._settings.max_chunks,
        )
        chunks = len(result.chunks)
        warnings = list(parsed.warnings)
        if result.truncated:
            warnings.append(f"only the first {self._settings.max_chunks} chunks will be indexed")
        if not chunks:
            warnings.append("no text found in this file")
        seconds = time.monotonic() - started + chunks / self._settings.chunks_per_s
        return replace(
            stored,
            outcome="add",
            chunks=chunks,
            seconds=round(seconds, 2),
            warnings=tuple(warnings),
        )

    def _parse(self, data: bytes, name: str, web_html: bool, url: str | None) -> ParsedDocument:
        # As `indexer.parse_stored` chooses for a stored document of this kind.
        if web_html:
            from loci.ingest.parsers.html import parse_html

            return parse_html(decode_text(data), url=url)
        return parse(data, name, self._settings.budgets)

    def _ocr_estimate(self, item: PreflightItem, data: bytes) -> PreflightItem:
        pages = _pdf_pages(data) if item.parser == "pdf" else 1
        tokens = pages * OCR_CHARS_PER_PAGE / CHARS_PER_TOKEN
        chunks = min(self._settings.max_chunks, math.ceil(tokens / self._chunk_tokens))
        seconds = pages * OCR_SECONDS_PER_PAGE + chunks / self._settings.chunks_per_s
        plural = "s" if pages != 1 else ""
        warning = f"OCR of {pages} page{plural}: chunks and time are estimates"
        return replace(
            item,
            chunks=chunks,
            chunks_exact=False,
            seconds=round(seconds, 2),
            warnings=(warning,),
        )


def _is_web_html(item: PreflightItem) -> bool:
    # A fetched HTML page is read by the HTML parser whatever its name (`indexer.parse_stored`).
    return item.kind == "web" and (item.media_type or "").startswith(
        ("text/html", "application/xhtml")
    )


def _choose_parser(item: PreflightItem, data: bytes) -> str:
    """The parser the bytes will get (raises ParseError, e.g. NoParser, as parsing would)."""
    if _is_web_html(item):
        return "html"
    name = item.name or "untitled"
    return _choose(data, PurePath(name).suffix.lower(), name)


def _parser_of(item: PreflightItem, data: bytes) -> str | None:
    try:
        return _choose_parser(item, data)
    except ParseError:
        return None


def summarize(items: Sequence[PreflightItem]) -> Preflight:
    """Seed 004's preflight object over the items: an item that will be refused or fail is an
    error (the others still go ahead, as with `add`); duplicates and item warnings are warnings."""
    errors = [f"{item.source}: {item.error}" for item in items if item.error]
    warnings: list[str] = []
    existing: set[int] = set()
    for item in items:
        ref = item.duplicate_of
        if ref is not None:
            if ref.id is not None:
                existing.add(ref.id)
                state = f" ({ref.status})" if ref.status not in (None, "ready") else ""
                warnings.append(
                    f"{item.source}: already in this brain as #{ref.id} {ref.name}{state}"
                )
            else:
                warnings.append(
                    f"{item.source}: the same content as {ref.name} earlier in this batch"
                )
        warnings.extend(f"{item.source}: {warning}" for warning in item.warnings)
    adding = [item for item in items if item.outcome == "add"]
    stored = [item for item in items if item.outcome in ("add", "fail")]
    totals = PreflightTotals(
        items=len(items),
        add=len(adding),
        duplicate=sum(item.outcome == "duplicate" for item in items),
        fail=sum(item.outcome == "fail" for item in items),
        refuse=sum(item.outcome == "refuse" for item in items),
        new_bytes=sum(item.size_bytes or 0 for item in stored),
        chunks=sum(item.chunks for item in adding),
        ocr=sum(item.ocr for item in adding),
        seconds=round(sum(item.seconds for item in adding), 2),
    )
    status: Literal["ok", "warning", "error"] = (
        "error" if errors else "warning" if warnings else "ok"
    )
    return Preflight(status, warnings, errors, len(existing), list(items), totals)
