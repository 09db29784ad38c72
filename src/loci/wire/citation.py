"""Where a passage is, and a numbered citation of an answer.

`CitationFields` are the fields of `loci.models.Citation`, flat (its location's fields beside
the rest), which a search hit also carries at its top level; `CitationOut` shows them on their
own (a graph hit's). `Citation` is what an answer's [n] cites: the same fields, with its number,
its brain, the passage's snippet and how a person reads where it is. The answer stream's
`sources` and `done` events, `POST …/answer`, `loci ask --json`, a digest's recap, a quiz
question and a flashcard all carry it; MCP's is a subset of it (`loci.mcp.outputs`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.wire.common import (
    CONFIDENCE_HELP,
    HIGHLIGHTS_HELP,
    REGION_HELP,
    TIME_END_HELP,
    TIME_START_HELP,
)
from loci.wire.mirror import Mirror


class CitationFields(BaseModel):
    """Where a passage is: the fields of `loci.models.Citation`, which a search hit also
    carries at its top level."""

    document_id: int
    name: str
    title: str | None
    chunk_index: int
    page: int | None
    line_start: int | None
    line_end: int | None
    heading_path: list[str]
    source_url: str | None
    region: str | None = Field(default=None, description=REGION_HELP)
    ocr_confidence: float | None = Field(default=None, description=CONFIDENCE_HELP)
    time_start: float | None = Field(default=None, description=TIME_START_HELP)
    time_end: float | None = Field(default=None, description=TIME_END_HELP)


class CitationOut(CitationFields, Mirror):
    """A citation on its own (a graph hit's)."""


class _Numbered(BaseModel):
    # First on the wire: what the answer's mark is, then where it points.
    number: int = Field(description="the [n] the answer cites")
    label: str = Field(description='"Source n"')
    brain: str = Field(description="the brain the passage is in")


class Citation(CitationFields, _Numbered):
    """A numbered source of an answer: the passage's citation fields, then the passage itself
    (`chunk_id`, `snippet`) and `where`, as a person reads it. Every field is always present
    (null where it does not apply)."""

    chunk_id: int
    snippet: str = Field(description="an excerpt of the passage, as plain text")
    highlights: list[tuple[int, int]] = Field(description=HIGHLIGHTS_HELP)
    where: str = Field(description="file, page and section, as a person reads it")
