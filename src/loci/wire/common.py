"""What several wire models share: the error body, and the descriptions of a passage's place."""

from __future__ import annotations

from pydantic import BaseModel, Field

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


HIGHLIGHTS_HELP = (
    "where the query's terms are in the snippet: [start, end] offsets in characters (Unicode "
    "code points), end exclusive, in order"
)
