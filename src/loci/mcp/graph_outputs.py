"""What the graph tools and `save` return: pages, links, timeline entries and captures.

As in `loci.mcp.outputs`, a page, a link, a timeline entry and a graph hit are subsets derived
from the HTTP API's models (`loci.wire.graph`), built from their values; each carries only what
the brain holds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from loci.curate.pipeline import Captured
from loci.graph.results import Page, QueryHit, Summary, Written
from loci.models import Brain, Document
from loci.wire.graph import (
    GraphHitOut,
    GraphPageOut,
    GraphSummaryOut,
    GraphTimelineEntryOut,
    GraphWrittenOut,
)
from loci.wire.subset import Subset, derived, subset


@subset(
    GraphSummaryOut,
    *("id", "title", "type", "kind", "path", "status", "aliases", "merged_into", "updated"),
    *("content_hash", "document_id"),
    describe={
        "id": "the page's id; brain_get takes it",
        "content_hash": "pass back as expected_hash to edit this version",
    },
)
class GraphSummary(Subset):
    """A page as the HTTP API shows it (`GraphSummaryOut`), less its folder (`path` has it)."""

    @classmethod
    def of(cls, summary: Summary) -> GraphSummary:
        return derived(cls, GraphSummaryOut.of(summary))


class Saved(BaseModel):
    brain: str
    item_id: int = Field(description="the kept capture")
    draft: GraphSummary = Field(description="its inbox draft (or the page it was folded into)")
    deduped: bool = Field(description="true: the same text was saved before")
    curation: str = Field(description="queued, done (with what it did) or failed (with why)")

    @classmethod
    def of(cls, captured: Captured, brain: Brain, draft: Summary, item: Document) -> Saved:
        if item.status == "processing":
            curation = "queued: a worker will file it shortly"
        elif item.status == "failed":
            curation = f"failed: {item.status_reason}"
        else:
            curation = item.status_reason or "curated"
        return cls(
            brain=brain.name,
            item_id=item.id,
            draft=GraphSummary.of(draft),
            deduped=captured.deduped,
            curation=curation,
        )


@subset(GraphTimelineEntryOut, "doc_id", "at", "text", "source")
class TimelineEntry(Subset):
    """A dated line of a page's timeline, less its entry id."""

    @classmethod
    def of(cls, entry: Any) -> TimelineEntry:
        return derived(cls, GraphTimelineEntryOut.of(entry))


@subset(
    GraphHitOut,
    "score",
    "matched_by",
    "snippet",
    "highlights",
    "path",
    describe={"path": "for a graph hit: the ids from a search hit to it"},
)
class GraphHit(Subset):
    """A page graph search found (`GraphHitOut`), with the pages it is linked with by id
    rather than its links in full."""

    page: GraphSummary
    linked: list[str] = Field(description="ids of pages it links to or is linked from")

    @classmethod
    def of(cls, hit: QueryHit) -> GraphHit:
        full = GraphHitOut.of(hit)
        here = full.document.id
        linked = [e.target for e in full.links] + [e.source for e in full.backlinks]
        return derived(
            cls,
            full,
            page=derived(GraphSummary, full.document),
            score=round(full.score, 4),
            linked=[i for i in dict.fromkeys(linked) if i != here],
        )


class GraphQueryResult(BaseModel):
    brain: str
    query: str
    hits: list[GraphHit]


@subset(
    GraphPageOut,
    *("truth", "sources", "timeline", "links", "backlinks"),
    describe={"truth": "the compiled truth (Markdown)"},
)
class GraphPage(Subset):
    """A page as the HTTP API shows it (`GraphPageOut`), its truth cut at `max_chars`, less its
    Markdown source, its HTML and its typed relations (`links` holds them)."""

    brain: str
    page: GraphSummary
    truncated: bool = Field(description="true: the truth was cut at max_chars")
    timeline: list[TimelineEntry]

    @classmethod
    def of(cls, page: Page, brain: Brain, max_chars: int) -> GraphPage:
        full = GraphPageOut.of(page)
        return derived(
            cls,
            full,
            brain=brain.name,
            page=derived(GraphSummary, full.document),
            truth=full.truth[:max_chars],
            truncated=len(full.truth) > max_chars,
        )


class Timeline(BaseModel):
    brain: str
    entries: list[TimelineEntry]


@subset(GraphWrittenOut, "changed", describe={"changed": "false: the page already had that"})
class GraphWritten(Subset):
    brain: str
    page: GraphSummary

    @classmethod
    def of(cls, written: Written, brain: Brain) -> GraphWritten:
        full = GraphWrittenOut.of(written)
        return derived(cls, full, brain=brain.name, page=derived(GraphSummary, full.document))
