"""The brain graph: pages, evidence, links, timeline, versions, graph search and
capture."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from loci.api.schemas.common import (
    NOT_BLANK,
    CitationOut,
    RequestIn,
    json_integers,
)
from loci.api.schemas.documents import DocumentOut
from loci.curate.pipeline import Captured, Ingested
from loci.graph import links
from loci.graph.results import DeletePlan, Page, QueryHit, Written
from loci.mirror import Mirror
from loci.models import Brain
from loci.render import graph_markdown_to_safe_html

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


class GraphSummaryOut(Mirror):
    id: str
    kind: str = Field(description="page or evidence")
    type: str
    folder: str
    path: str
    status: str
    title: str
    aliases: list[str]
    merged_into: str | None
    updated: str
    content_hash: str = Field(description="send it back as expected_hash to edit this version")
    document_id: int | None = Field(description="the indexed document search cites")


class GraphEdgeOut(Mirror):
    source: str
    target: str
    type: str = Field(description="a relation type, wiki_link or cites")


class GraphTimelineEntryOut(Mirror):
    doc_id: str
    entry_id: str
    at: str
    text: str
    source: str | None


class GraphPageOut(BaseModel):
    document: GraphSummaryOut
    content: str = Field(description="the exact Markdown, frontmatter first")
    truth: str = Field(description="the compiled truth")
    html: str = Field(
        description="the compiled truth rendered from Markdown and sanitized; typed links as "
        '<a class="graph-link graph-page|graph-evidence" href="#brain/ID" data-graph-id="ID">, '
        'source pointers as <span class="graph-source" title="provider:id">'
    )
    relations: list[GraphEdgeOut] = Field(description="typed relations in the frontmatter")
    sources: list[str]
    timeline: list[GraphTimelineEntryOut]
    links: list[GraphEdgeOut] = Field(description="edges from this document")
    backlinks: list[GraphEdgeOut] = Field(description="edges from other documents to this one")

    @classmethod
    def of(cls, page: Page) -> GraphPageOut:
        doc = page.doc
        return cls(
            document=GraphSummaryOut.of(page.summary),
            content=page.content,
            truth=doc.truth,
            html=graph_markdown_to_safe_html(doc.truth),
            relations=[
                GraphEdgeOut(source=doc.id, target=r.target, type=r.type) for r in doc.relations
            ],
            sources=list(doc.sources),
            timeline=[
                GraphTimelineEntryOut(
                    doc_id=doc.id, entry_id=e.id, at=e.at, text=e.text, source=e.source
                )
                for e in doc.timeline
            ],
            links=[GraphEdgeOut.of(e) for e in page.links],
            backlinks=[GraphEdgeOut.of(e) for e in page.backlinks],
        )


class GraphWrittenOut(BaseModel):
    document: GraphSummaryOut
    changed: bool = Field(description="false: the document already had that")

    @classmethod
    def of(cls, written: Written) -> GraphWrittenOut:
        return cls(document=GraphSummaryOut.of(written.document), changed=written.changed)


class GraphEvidenceOut(BaseModel):
    evidence: GraphSummaryOut
    document: GraphSummaryOut = Field(description="the page that now cites it")


class GraphDeleteOut(BaseModel):
    document: GraphSummaryOut
    backlinks: list[GraphEdgeOut] = Field(description="links other documents are left with")
    deleted: bool = Field(description="false: a dry run, nothing changed")

    @classmethod
    def of(cls, plan: DeletePlan) -> GraphDeleteOut:
        return cls(
            document=GraphSummaryOut.of(plan.document),
            backlinks=[GraphEdgeOut.of(e) for e in plan.backlinks],
            deleted=plan.deleted,
        )


class GraphVersionOut(Mirror):
    id: int
    doc_id: str
    action: str
    actor: str
    content: str = Field(description="the content this write replaced (or deleted)")
    content_hash: str
    created_at: str


class GraphFolderOut(Mirror):
    folder: str
    documents: int = Field(description="directly in this folder")
    total: int = Field(description="in it and every folder under it")


class GraphQueryIn(RequestIn):
    query: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)
    limit: int = Field(default=10, ge=1, le=30)
    include_merged: bool = Field(default=False, strict=True)
    include_archived: bool = Field(default=False, strict=True)

    _integers = json_integers("limit")


class GraphHitOut(BaseModel):
    document: GraphSummaryOut
    score: float
    matched_by: str = Field(description="text, vector, both, or graph (reached through links)")
    snippet: str
    highlights: list[tuple[int, int]] = Field(
        description="where the query's terms are in the snippet: [start, end] offsets in "
        "characters (Unicode code points), end exclusive, in order"
    )
    citation: CitationOut
    links: list[GraphEdgeOut]
    backlinks: list[GraphEdgeOut]
    path: list[str] = Field(description="for a graph hit: the ids from the search hit to it")

    @classmethod
    def of(cls, hit: QueryHit) -> GraphHitOut:
        return cls(
            document=GraphSummaryOut.of(hit.document),
            score=hit.score,
            matched_by=hit.matched_by,
            snippet=hit.snippet,
            highlights=list(hit.highlights),
            citation=CitationOut.of(hit.citation),
            links=[GraphEdgeOut.of(e) for e in hit.links],
            backlinks=[GraphEdgeOut.of(e) for e in hit.backlinks],
            path=list(hit.path),
        )


class GraphQueryOut(BaseModel):
    query: str
    hits: list[GraphHitOut]


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


class CapturedOut(BaseModel):
    item: DocumentOut = Field(description="the kept capture; processing until curated")
    draft: GraphSummaryOut | None = Field(description="its inbox draft")
    evidence: GraphSummaryOut | None = None
    deduped: bool = Field(description="true: the same text was kept before")

    @classmethod
    def of(cls, result: Captured | Ingested, brain: Brain) -> CapturedOut:
        evidence = result.evidence if isinstance(result, Ingested) else None
        return cls(
            item=DocumentOut.of(result.item, brain),
            draft=GraphSummaryOut.of(result.draft) if result.draft is not None else None,
            evidence=GraphSummaryOut.of(evidence) if evidence is not None else None,
            deduped=result.deduped,
        )
