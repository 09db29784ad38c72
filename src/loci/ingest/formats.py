"""What format a document is, in the words a person filters by: PDF, Word, image, web page, note…

A document's `kind` says how it arrived (a file, a web page, a note, a page of the graph); its
format says what it is. Both come from what the row already holds — the kind, the file name's
extension and the declared MIME type — so a document has its format from the moment it is added,
before (or without) a successful parse.
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePath
from typing import Literal, get_args

from loci.ingest.ocr.images import IMAGE_EXTENSIONS
from loci.ingest.parsers.audio import AUDIO_EXTENSIONS
from loci.models import Document, DocumentKind

Format = Literal[
    "pdf",
    "word",
    "slides",
    "spreadsheet",
    "ebook",
    "image",
    "audio",
    "web",
    "email",
    "text",
    "note",
    "page",
    "other",
]
FORMATS: tuple[Format, ...] = get_args(Format)

# How a person names each, for lists and filters (the CLI's help, the web app's menu).
FORMAT_LABELS: dict[Format, str] = {
    "pdf": "PDF",
    "word": "Word document",
    "slides": "Slides",
    "spreadsheet": "Spreadsheet",
    "ebook": "E-book",
    "image": "Image",
    "audio": "Recording",
    "web": "Web page",
    "email": "Email",
    "text": "Text",
    "note": "Note",
    "page": "Brain page",
    "other": "Other",
}

_BY_EXTENSION: dict[str, Format] = {
    ".pdf": "pdf",
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf"), "word"),
    **dict.fromkeys((".pptx", ".ppt", ".odp"), "slides"),
    **dict.fromkeys((".xlsx", ".xlsm", ".xls", ".ods", ".csv", ".tsv"), "spreadsheet"),
    ".epub": "ebook",
    **dict.fromkeys((".html", ".htm", ".xhtml"), "web"),
    **dict.fromkeys((".eml", ".mbox", ".mbx"), "email"),
    **dict.fromkeys(IMAGE_EXTENSIONS, "image"),
    **dict.fromkeys(AUDIO_EXTENSIONS, "audio"),
}
_BY_MIME_PREFIX: tuple[tuple[str, Format], ...] = (
    ("application/pdf", "pdf"),
    ("image/", "image"),
    ("audio/", "audio"),
    ("text/html", "web"),
    ("message/", "email"),
    ("text/", "text"),
)
# Graph pages, evidence and captured items are pages of the brain, whatever their bytes.
_PAGE_KINDS: frozenset[DocumentKind] = frozenset({"page", "evidence", "item"})


def format_of(kind: DocumentKind, name: str, mime_type: str | None) -> Format:
    """The format of a document of `kind` named `name` (declared as `mime_type`)."""
    if kind in _PAGE_KINDS:
        return "page"
    if kind == "note":
        return "note"
    by_name = _BY_EXTENSION.get(PurePath(name).suffix.lower())
    if kind == "web":
        # A PDF or a Word file fetched from an address is a PDF or a Word file; an HTML page,
        # or the Markdown a browser extension kept for one, is a web page.
        return by_name if by_name not in (None, "web", "text") else "web"
    if by_name is not None:
        return by_name
    for prefix, found in _BY_MIME_PREFIX:
        if (mime_type or "").startswith(prefix):
            return found
    return "text" if _is_text_name(name) else "other"


def document_format(document: Document) -> Format:
    return format_of(document.kind, document.name, document.mime_type)


@cache
def _parsed_extensions() -> frozenset[str]:
    from loci.ingest.parsers import supported_extensions

    return frozenset(supported_extensions())


def _is_text_name(name: str) -> bool:
    # Every other format Loci parses is read as text: Markdown, plain text, source code.
    return PurePath(name).suffix.lower() in _parsed_extensions()
