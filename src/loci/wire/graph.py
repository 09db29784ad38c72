"""The brain graph: pages, evidence, links, timeline, versions, graph search and
capture."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.curate.pipeline import Captured, Ingested
from loci.graph.results import Page, QueryHit
from loci.models import Brain
from loci.render import graph_markdown_to_safe_html
from loci.wire.citation import CitationOut
from loci.wire.documents import DocumentOut
from loci.wire.mirror import Mirror, shown


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


class GraphWrittenOut(Mirror):
    document: GraphSummaryOut
    changed: bool = Field(description="false: the document already had that")


class GraphEvidenceOut(BaseModel):
    evidence: GraphSummaryOut
    document: GraphSummaryOut = Field(description="the page that now cites it")


class GraphDeleteOut(Mirror):
    document: GraphSummaryOut
    backlinks: list[GraphEdgeOut] = Field(description="links other documents are left with")
    deleted: bool = Field(description="false: a dry run, nothing changed")


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
        return shown(cls, hit, citation=CitationOut.of(hit.citation))


class GraphQueryOut(BaseModel):
    query: str
    hits: list[GraphHitOut]


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
