"""What several wire models share: the error body, and the descriptions of a passage's place."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.wire.mirror import Mirror

REGION_HELP = (
    "for text read by OCR: where it sits on the page or image, as left,top,right,bottom"
    " fractions of its width and height (origin top left)"
)


CONFIDENCE_HELP = "for text read by OCR: the engine's lowest confidence in it, 0-1"


TIME_START_HELP = "for a transcribed recording: seconds from its start to where the passage begins"


TIME_END_HELP = "for a transcribed recording: seconds from its start to where the passage ends"


class ErrorOut(BaseModel):
    error: str = Field(description="stable machine-readable code, e.g. not_found")
    message: str = Field(description="one line a person can read")


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
