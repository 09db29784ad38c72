"""What the graph tools and `save` return: pages, links, timeline entries and captures.

As in `loci.mcp.outputs`, each model is built by its `of` and carries only what the brain holds.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.curate.pipeline import Captured
from loci.graph.results import Page, QueryHit, Summary, Written
from loci.models import Brain, Document
from loci.wire.mirror import Mirror


class GraphSummary(Mirror):
    id: str = Field(description="the page's id; brain_get takes it")
    title: str
    type: str
    kind: str = Field(description="page or evidence")
    path: str
    status: str
    aliases: list[str]
    merged_into: str | None
    updated: str
    content_hash: str = Field(description="pass back as expected_hash to edit this version")
    document_id: int | None = Field(description="the indexed document search cites")


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


class Edge(BaseModel):
    source: str
    target: str
    type: str = Field(description="a relation type, wiki_link or cites")


class TimelineEntry(Mirror):
    doc_id: str
    at: str
    text: str
    source: str | None


class GraphHit(BaseModel):
    page: GraphSummary
    score: float
    matched_by: str = Field(description="text, vector, both, or graph (reached through links)")
    snippet: str
    highlights: list[tuple[int, int]] = Field(
        description="where the query's terms are in the snippet: [start, end] offsets in "
        "characters (Unicode code points), end exclusive, in order"
    )
    linked: list[str] = Field(description="ids of pages it links to or is linked from")
    path: list[str] = Field(description="for a graph hit: the ids from a search hit to it")

    @classmethod
    def of(cls, hit: QueryHit) -> GraphHit:
        here = hit.document.id
        linked = [e.target for e in hit.links] + [e.source for e in hit.backlinks]
        return cls(
            page=GraphSummary.of(hit.document),
            score=round(hit.score, 4),
            matched_by=hit.matched_by,
            snippet=hit.snippet,
            highlights=list(hit.highlights),
            linked=[i for i in dict.fromkeys(linked) if i != here],
            path=list(hit.path),
        )


class GraphQueryResult(BaseModel):
    brain: str
    query: str
    hits: list[GraphHit]


class GraphPage(BaseModel):
    brain: str
    page: GraphSummary
    truth: str = Field(description="the compiled truth (Markdown)")
    truncated: bool = Field(description="true: the truth was cut at max_chars")
    sources: list[str]
    timeline: list[TimelineEntry]
    links: list[Edge]
    backlinks: list[Edge]

    @classmethod
    def of(cls, page: Page, brain: Brain, max_chars: int) -> GraphPage:
        doc = page.doc
        return cls(
            brain=brain.name,
            page=GraphSummary.of(page.summary),
            truth=doc.truth[:max_chars],
            truncated=len(doc.truth) > max_chars,
            sources=list(doc.sources),
            timeline=[
                TimelineEntry(doc_id=doc.id, at=e.at, text=e.text, source=e.source)
                for e in doc.timeline
            ],
            links=[Edge(source=e.source, target=e.target, type=e.type) for e in page.links],
            backlinks=[Edge(source=e.source, target=e.target, type=e.type) for e in page.backlinks],
        )


class Timeline(BaseModel):
    brain: str
    entries: list[TimelineEntry]


class GraphWritten(BaseModel):
    brain: str
    page: GraphSummary
    changed: bool = Field(description="false: the page already had that")

    @classmethod
    def of(cls, written: Written, brain: Brain) -> GraphWritten:
        return cls(
            brain=brain.name, page=GraphSummary.of(written.document), changed=written.changed
        )
