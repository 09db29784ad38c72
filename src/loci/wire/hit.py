"""Search: the query, its filters and the hits with their citations."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.models import Brain, Hit, SearchMode
from loci.search.weak import WEAK_CLOSENESS
from loci.wire.common import CitationFields


class PassageOut(CitationFields):
    """Another passage of a hit's document that search ranked: where it is, what it says."""

    chunk_id: int
    snippet: str = Field(description="an excerpt of the passage, as plain text")
    highlights: list[tuple[int, int]] = Field(
        description="where the query's terms are in the snippet: [start, end] offsets in "
        "characters (Unicode code points), end exclusive, in order"
    )
    text: str
    score: float

    @classmethod
    def of(cls, hit: Hit) -> PassageOut:
        return cls(
            chunk_id=hit.chunk_id,
            **hit.citation.flat(),
            snippet=hit.snippet,
            highlights=list(hit.highlights),
            text=hit.text,
            score=hit.score,
        )


class HitOut(CitationFields):
    """A document search found, as its best passage: the passage's citation fields, then how it
    was found, then the document's other passages that ranked (`passages`)."""

    brain: str
    chunk_id: int
    snippet: str = Field(description="an excerpt of the passage, as plain text")
    highlights: list[tuple[int, int]] = Field(
        description="where the query's terms are in the snippet: [start, end] offsets in "
        "characters (Unicode code points), end exclusive, in order"
    )
    text: str
    score: float
    text_rank: int | None
    vector_rank: int | None
    matched_by: str = Field(
        description="text, vector or both legs of the search; +graph when a link from a better "
        "hit lifted it; graph when only a link brought it in"
    )
    graph_path: list[str] = Field(
        description="for a hit a link lifted or brought in: the page ids from the search hit "
        "to this one"
    )
    reranked: bool = Field(
        description="true when the configured reranker ordered the hits; score is then its "
        "relevance rather than the fused score"
    )
    closeness: float | None = Field(
        default=None,
        description="how close in meaning, read against the brain: k when only one pair of "
        "unrelated passages (from different documents of the brain) in 10^k is as close to each "
        "other as this passage is to the query; null when the vector leg did not score it or "
        "the brain is too small to read with this embedder",
    )
    passages: list[PassageOut] = Field(
        default_factory=list,
        description="the same document's other passages that ranked, best first (at most 3): "
        "one hit per document, so a long document never buries the next one",
    )
    vectors_pending: bool = Field(
        description="true: the passage has no vector yet (its document was just added and "
        "embedding follows), so it was found by its words alone; hybrid search scored it by "
        "the text leg alone"
    )
    gone_at: str | None = Field(
        default=None,
        description="when the passage's file was deleted from its folder (its document kept, "
        "as that folder keeps deleted files' documents); null while the file is there",
    )

    @classmethod
    def of(cls, hit: Hit, brain: Brain) -> HitOut:
        return cls(
            brain=brain.name,
            chunk_id=hit.chunk_id,
            **hit.citation.flat(),
            snippet=hit.snippet,
            highlights=list(hit.highlights),
            text=hit.text,
            score=hit.score,
            text_rank=hit.text_rank,
            vector_rank=hit.vector_rank,
            matched_by=hit.matched_by,
            graph_path=list(hit.graph_path),
            reranked=hit.reranked,
            closeness=hit.closeness,
            passages=[PassageOut.of(p) for p in hit.more],
            vectors_pending=hit.vectors_pending,
            gone_at=hit.gone_at,
        )


class SearchOut(BaseModel):
    query: str
    mode: SearchMode
    hits: list[HitOut]
    weak: bool = Field(
        default=False,
        description="true: no passage holds the question's words and none is close in meaning "
        "(closeness under weak_closeness) — the hits are only the nearest passages, not matches",
    )
    weak_closeness: float = Field(
        default=WEAK_CLOSENESS,
        description="the closeness `weak` is judged by: 2 is as close as one pair of unrelated "
        "passages of the brain in a hundred (a brain too small to know its pairs, with the "
        "bundled model: cosine 0.3)",
    )
