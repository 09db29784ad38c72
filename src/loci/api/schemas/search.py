"""Search: the query, its filters and the hits with their citations."""

from __future__ import annotations

import datetime as dt

from pydantic import Field, field_validator

from loci.api.schemas.common import NOT_BLANK, RequestIn, json_integers
from loci.models import DocumentKind, SearchFilters, SearchMode


class FiltersIn(RequestIn):
    name: str | None = Field(default=None, max_length=300, description="file name; * and ? glob")
    kinds: list[DocumentKind] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list, max_length=20)
    created_after: dt.date | None = None
    created_before: dt.date | None = None

    @field_validator("created_after", "created_before", mode="before")
    @classmethod
    def _iso_date(cls, value: object) -> object:
        # Pydantic would read a number as a Unix time; the schema promises a YYYY-MM-DD string.
        if value is not None and not isinstance(value, str | dt.date):
            raise ValueError("a date is a string, YYYY-MM-DD")
        return value

    def to_filters(self) -> SearchFilters:
        return SearchFilters(
            name=self.name,
            kinds=tuple(self.kinds),
            tags=tuple(self.tags),
            created_after=self.created_after.isoformat() if self.created_after else None,
            created_before=self.created_before.isoformat() if self.created_before else None,
        )


class SearchIn(RequestIn):
    query: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)
    limit: int = Field(default=10, ge=1, le=30)
    mode: SearchMode = "hybrid"
    filters: FiltersIn = Field(default_factory=FiltersIn)
    min_similarity: float | None = Field(default=None, ge=-1, le=1, strict=True)
    include_archived: bool = Field(
        default=False,
        strict=True,
        description="hybrid search leaves merged and archived brain pages out unless this is set",
    )

    _integers = json_integers("limit")
