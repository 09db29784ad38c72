"""The brain graph: pages, evidence, links, timeline, versions, graph search and
capture."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, field_validator

from loci.api.schemas.common import NOT_BLANK, RequestIn, json_integers
from loci.graph import links

EXPECTED_HASH = Field(
    default=None,
    min_length=64,
    max_length=64,
    description="the content_hash you read; a document changed since is a 409, not overwritten",
)


SOURCE_REF = Field(
    default=None,
    pattern=r"^[a-z0-9][a-z0-9_-]{0,31}:[^\s\]|]{1,220}$",  # loci.graph.links.SOURCE_REF
    description="where it came from, provider:id (e.g. slack:C01/1712345)",
)


ISO_DAY = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


class GraphQueryIn(RequestIn):
    query: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)
    limit: int = Field(default=10, ge=1, le=30)
    include_merged: bool = Field(default=False, strict=True)
    include_archived: bool = Field(default=False, strict=True)

    _integers = json_integers("limit")


GraphType = Literal[
    "person", "company", "project", "meeting", "concept", "source", "analysis", "note",
    "media", "email", "writing",
]  # fmt: skip  # the last three are older names (media and email: source; writing: analysis)


GraphStatus = Literal["draft", "active", "archived", "merged"]


SLUG = rf"^{links.SLUG}$"


# Levels of letters (lowercase where the script has case), digits, marks, '.', '_' and '-'
# (loci.graph.validate.is_folder_segment, which also bounds their length).
_LEVEL = r"[\p{Ll}\p{Lo}\p{Lm}\p{Nd}][\p{Ll}\p{Lo}\p{Lm}\p{Nd}\p{M}._-]{0,63}"


FOLDER = rf"^{_LEVEL}(?:/{_LEVEL})*/?$"


class GraphCreateIn(RequestIn):
    type: GraphType | None = Field(default=None, description="needed unless text has frontmatter")
    title: str | None = Field(default=None, max_length=300, pattern=NOT_BLANK)
    folder: str | None = Field(
        default=None, max_length=300, pattern=FOLDER, description="default: per type"
    )
    id: str | None = Field(default=None, pattern=SLUG, description="default: the title's slug")
    status: Literal["draft", "active", "archived"] | None = Field(
        default=None, description="default: draft"
    )
    text: str = Field(
        default="",
        max_length=1_000_000,
        description="the compiled truth, or a whole Markdown document (frontmatter first)",
    )


class GraphTruthIn(RequestIn):
    truth: str = Field(max_length=1_000_000, description="the new compiled truth (Markdown)")
    expected_hash: str | None = EXPECTED_HASH


class GraphFieldsIn(RequestIn):
    fields: dict[str, str] = Field(
        min_length=1,
        max_length=10,
        description="title, type, status, folder, aliases, relations or sources; lists "
        "comma-separated, relations as type:target",
    )
    expected_hash: str | None = EXPECTED_HASH


class GraphTimelineIn(RequestIn):
    text: str = Field(min_length=1, max_length=10_000, pattern=NOT_BLANK)
    at: dt.date | None = Field(default=None, description="default: today")
    source: str | None = SOURCE_REF
    expected_hash: str | None = EXPECTED_HASH

    @field_validator("at", mode="before")
    @classmethod
    def _iso_date(cls, value: object) -> object:
        if value is not None and not isinstance(value, str | dt.date):
            raise ValueError("a date is a string, YYYY-MM-DD")
        return value


class GraphEvidenceIn(RequestIn):
    text: str = Field(min_length=1, max_length=1_000_000, pattern=NOT_BLANK)
    title: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)
    source: str | None = SOURCE_REF
    expected_hash: str | None = EXPECTED_HASH


class GraphAliasIn(RequestIn):
    alias: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)


class GraphLinkIn(RequestIn):
    relation: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$", examples=["works_at"])
    target: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)


class GraphMergeIn(RequestIn):
    into: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)
    alias_title: bool = Field(
        default=True, strict=True, description="keep the merged document's title as an alias"
    )


class GraphMoveIn(RequestIn):
    folder: str | None = Field(default=None, max_length=300, pattern=FOLDER)
    new_id: str | None = Field(default=None, pattern=SLUG)
    expected_hash: str | None = EXPECTED_HASH


class CaptureIn(RequestIn):
    text: str = Field(min_length=1, max_length=1_000_000, pattern=NOT_BLANK)
    title: str | None = Field(default=None, max_length=300)
    source: str | None = SOURCE_REF
