"""A search hit: the one shape of a passage search found, on every surface (MCP's is a subset).

`PassageOut` is a passage with its citation fields; `HitOut` is a document search found, as its
best passage with how it was found and its document's other passages."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, Field

from loci.models import Brain, Hit, SearchMode
from loci.search.weak import WEAK_CLOSENESS
from loci.wire.citation import CitationFields
from loci.wire.common import HIGHLIGHTS_HELP
from loci.wire.mirror import shown


class PassageOut(CitationFields):
    """A passage search ranked: where it is (its citation fields), what it says, its score."""

    chunk_id: int
    snippet: str = Field(description="an excerpt of the passage, as plain text")
    highlights: list[tuple[int, int]] = Field(description=HIGHLIGHTS_HELP)
    text: str
    score: float

    @classmethod
    def of(cls, hit: Hit) -> Self:
        """A hit under another (`HitOut.passages`): nothing but the passage."""
        return shown(cls, hit)


class HitOut(PassageOut):
    """A document search found, as its best passage: the passage (its citation fields, its text
    and score), then how it was found, then the document's other passages that ranked
    (`passages`)."""

    brain: str
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
    def found(cls, hit: Hit, brain: Brain) -> HitOut:
        """The hit as search found it in `brain`, with its document's other passages."""
        return shown(cls, hit, brain=brain.name, passages=[PassageOut.of(p) for p in hit.more])


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
