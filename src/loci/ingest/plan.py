"""What a file will become: decided once, for adding, for indexing and for the dry run.

From the bytes, the name and how they came (a file, or a page fetched from a URL with its content
type), `plan_file` says whether they are refused before anything is stored (over the size cap,
or empty), which parser reads them, whether they are a web page whose HTML is cleaned down to
its main content, whether OCR or transcription will run, and why parsing will fail when it will.
`Library.add_bytes` refuses what the plan refuses, the indexer parses as the plan says, and the
preflight reports the plan: a dry run cannot predict one thing while the add does another.

Choosing the parser is cheap (magic bytes, a zip's directory); finding the scanned pages of a
PDF opens it, so `ocr_pages` is worked out only when asked (the dry run asks, adding does not).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from loci.errors import InvalidInput, ParseError
from loci.ingest.encoding import decode_text
from loci.ingest.ocr_preview import ocr_targets
from loci.ingest.parsers import ParseBudgets, choose_parser, parse_as, trimmed
from loci.ingest.size_cap import over_cap
from loci.models import ParsedDocument

if TYPE_CHECKING:
    from loci.llm.transcribe import Transcriber

__all__ = ["FilePlan", "plan_file"]

_WEB_HTML = ("text/html", "application/xhtml")


@dataclass(frozen=True)
class FilePlan:
    name: str
    parser: str | None  # "pdf", "markdown", "html", "image", "audio", …; None: refused or unread
    web_page: bool  # a fetched HTML page: cleaned to its main content, whatever its name says
    refusal: InvalidInput | None  # not stored at all (FileTooLarge: over the cap; or empty)
    failure: ParseError | None  # stored, then marked failed with this reason
    source_url: str | None = None
    data: bytes = field(default=b"", repr=False)

    @property
    def transcribes(self) -> bool:
        """A recording: its words come from the speech-to-text service."""
        return self.parser == "audio"

    @cached_property
    def ocr_pages(self) -> tuple[int, ...]:
        """What OCR will read, by the parser's own test: (1,) for an image, the scanned pages
        of a PDF, () otherwise (and whether an OCR engine is installed is not asked here)."""
        if self.parser not in ("image", "pdf"):
            return ()
        return tuple(ocr_targets(self.data, self.parser))

    def parse(
        self, budgets: ParseBudgets, transcriber: Transcriber | None = None
    ) -> ParsedDocument:
        """The parsed document, read as planned (raises the planned refusal or failure), cut to
        the budgets' size for what a parse hands on (`trimmed`)."""
        if self.refusal is not None:
            raise self.refusal
        if self.failure is not None:
            raise self.failure
        assert self.parser is not None  # neither refused nor failed: a parser was chosen
        if self.web_page:
            from loci.ingest.parsers.html import parse_html

            return trimmed(parse_html(decode_text(self.data), url=self.source_url), budgets)
        return trimmed(parse_as(self.parser, self.data, self.name, budgets, transcriber), budgets)


def plan_file(
    name: str,
    data: bytes,
    *,
    kind: str = "file",
    mime_type: str | None = None,
    source_url: str | None = None,
    max_bytes: int | None = None,
) -> FilePlan:
    """The plan for `data` named `name` (already cleaned: see `sources.clean_name`).

    `kind` and `mime_type` are the document's: a `web` document served as HTML is a page.
    `max_bytes` is the size cap when adding; None when indexing what is already stored, which
    is never refused (an empty blob fails to parse instead)."""
    web_page = kind == "web" and (mime_type or "").startswith(_WEB_HTML)
    refusal: InvalidInput | None = None
    if max_bytes is not None:  # adding: refused before anything is stored
        refusal = over_cap(name, len(data), max_bytes)
        if refusal is None and not data:
            refusal = InvalidInput(f"{name} is empty")
    parser: str | None = None
    failure: ParseError | None = None
    if refusal is None:
        try:
            # In `parse`'s order: whitespace is an empty file, whatever its name says.
            if not data.strip():
                raise ParseError("the file is empty")
            parser = "html" if web_page else choose_parser(data, name)
        except ParseError as error:
            failure = error
    return FilePlan(name, parser, web_page, refusal, failure, source_url, data)
