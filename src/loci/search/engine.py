"""Hybrid search: a BM25 leg and a vector leg over one brain's chunks, fused, with citations."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol

from loci.context_line import context_line, index_title
from loci.embed.base import Embedder, embed_queries
from loci.embed.identity import check_identity
from loci.errors import InvalidInput, RerankError
from loci.language import query_languages, question_language
from loci.models import Brain, Chunk, Citation, Document, Hit, SearchFilters, SearchMode
from loci.search.closeness import Closeness, closeness_scale
from loci.search.confidence import text_share, text_trust, vector_trust
from loci.search.document_words import in_document
from loci.search.fusion import (
    Fused,
    FusionMethod,
    Normalisation,
    fuse,
    vector_weight,
)
from loci.search.grouping import by_document
from loci.search.lexical import query_terms
from loci.search.openings import in_context
from loci.search.rerank import Reranker
from loci.search.snippets import make_snippet
from loci.search.words_first import words_first
from loci.store.base import Store

log = logging.getLogger(__name__)

WORDS_FIRST_WINDOW = 30  # passages `ranked_documents` applies words_first to

MAX_LIMIT = 30
GROUPED_DEPTH = 6  # candidate passages per hit asked for, when hits are documents


@dataclass(frozen=True)
class RankingParams:
    """How the legs are combined; tuned on the SciFact dev split (docs/benchmarks-journal.md)."""

    fusion: FusionMethod = "convex"
    normalisation: Normalisation = "ceiling"
    text_weight: float = 0.5
    # What the text leg keeps of its share for a question with nothing specific in it: every
    # word read whole by the embedder, none rare in the brain (`confidence.text_share`).
    unspecific_words: float = 0.4
    rrf_k: float = 60.0
    candidates: int = 100
    # A passage missing from a leg borrows its document's best score in that leg.
    share_document_evidence: bool = True
    # The short-chunk penalty: a chunk of fewer tokens than this loses score in proportion.
    short_chunk_tokens: int = 12
    # With a reranker: how many of the best fused passages it reads and reorders.
    rerank_depth: int = 30
    # The vector leg reads a passage in its document's context (search.openings).
    document_context: bool = True
    # The text leg's share given to each passage's whole document (search.document_words).
    document_words: float = 0.25


@dataclass(frozen=True)
class SearchRequest:
    query: str
    mode: SearchMode = "hybrid"
    limit: int = 10
    filters: SearchFilters = field(default_factory=SearchFilters)
    min_similarity: float | None = None
    # The BM25 leg's share in hybrid fusion, before the per-question trusts (search.confidence);
    # None: the tuned default.
    text_weight: float | None = None
    include_retired: bool = False  # hybrid search keeps merged and archived graph pages out
    # One hit per document, its other passages under it (search.grouping); False: passages,
    # as an answer reads them.
    by_document: bool = True

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {self.limit}")
        if not self.query.strip():
            raise InvalidInput("the query is empty")
        if self.mode not in ("hybrid", "text", "vector"):
            raise InvalidInput(f"unknown search mode {self.mode!r} (hybrid, text or vector)")
        if self.text_weight is not None and not 0.0 <= self.text_weight <= 1.0:
            raise InvalidInput(f"text_weight must be between 0 and 1, got {self.text_weight}")


@dataclass(frozen=True)
class Ranking:
    fused: list[Fused]  # best first
    # How close the vector leg's cosines are, read against the brain (None: no vectors, or
    # no reading for this embedder in a brain this small).
    closeness: Closeness | None
    # Which of the text leg's passages have no vector yet (None: not asked, outside hybrid
    # search). Those are scored by the text leg alone: the vector leg cannot find them, so
    # its silence says nothing against them.
    vectorless: set[int] | None = None


class BrainEmbedders(Protocol):
    """The embedding model a brain's vectors were made with (`loci.service.embedders`)."""

    def for_brain(self, brain: Brain) -> Embedder: ...

    def languages(self, brain: Brain) -> frozenset[str] | None:
        """What that model reads (ISO 639-1), None for every language."""
        ...


class SearchEngine:
    def __init__(
        self,
        store: Store,
        embedders: BrainEmbedders,
        params: RankingParams | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.store = store
        self._embedders = embedders
        self.params = params or RankingParams()
        self.reranker = reranker  # hybrid search only: text and vector are one-leg views
        # One helper thread runs the BM25 leg while this thread embeds the query and scans
        # vectors: SQLite and NumPy's matmul release the GIL, so the legs overlap.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loci-text-leg")

    def ranking(
        self,
        brain: Brain,
        query: str,
        mode: SearchMode = "hybrid",
        filters: SearchFilters | None = None,
        min_similarity: float | None = None,
        text_weight: float | None = None,
    ) -> Ranking:
        """The fused chunk ranking (best first, up to `params.candidates` from each leg), how to
        read its cosines, and which passages have no vector yet."""
        p = self.params
        filters = filters or SearchFilters()
        text_leg: list[tuple[int, float]] = []
        text_ceiling: float | None = None
        vector_leg: list[tuple[int, float]] = []
        pending: Future[tuple[list[tuple[int, float]], float | None, float]] | None = None
        trust_in_words = 1.0
        terms = query_terms(query)
        held = self.store.brain_languages(brain.id)
        asked = question_language(query, held)
        languages = query_languages(asked, held)
        readable = vector_weight(asked, held, self._embedders.languages(brain))
        use_vectors = (
            mode == "vector" or (mode == "hybrid" and readable > 0)
        ) and brain.embedder_model is not None
        # A fusion by ceilings needs BM25's best possible score for the question, and so does
        # reading passages in their documents' context.
        in_documents = p.document_words > 0
        wants_ceiling = in_documents or (mode == "hybrid" and p.normalisation == "ceiling")

        def text() -> tuple[list[tuple[int, float]], float | None, float]:
            """The leg, the ceiling to read its scores against, and its trust."""
            hits = self.store.text_search(brain.id, terms, p.candidates, filters, languages)
            found = self.store.text_ceiling(brain.id, terms, languages) if wants_ceiling else None
            ceiling = found.score if found is not None else None
            if in_documents and hits:
                ids = [i for i, _ in hits]
                whole = self.store.document_text_scores(brain.id, terms, ids, languages)
                hits, ceiling = in_document(hits, ceiling, whole, p.document_words)
            return hits, ceiling, text_trust(found)

        if mode in ("hybrid", "text"):
            if use_vectors:
                pending = self._pool.submit(text)
            else:
                text_leg, text_ceiling, trust_in_words = text()
        trust = [1.0, 1.0]  # each leg's confidence for this question (search.confidence)
        floor = 0.0  # the question's mean cosine to the brain's passages (`above_floor`)
        closeness: Closeness | None = None
        if use_vectors:
            embedder = self._embedders.for_brain(brain)
            check_identity(brain, embedder)
            query_vector = embed_queries(embedder, [query])[0]
            vector_leg = self.store.vector_search(
                brain.id, embedder.model_id, query_vector, p.candidates, filters
            )
            background = self.store.vector_background(brain.id, embedder.model_id)
            closeness = closeness_scale(background, embedder.model_id)
            if mode == "hybrid":
                trust[1] = vector_trust(vector_leg, background, query_vector)
                if background is not None:
                    floor = background.similarity(query_vector)[0]
            if min_similarity is not None:
                vector_leg = [(i, s) for i, s in vector_leg if s >= min_similarity]
        if pending is not None:
            text_leg, text_ceiling, trust_in_words = pending.result()
        if mode == "hybrid":
            trust[0] = trust_in_words
        if use_vectors and p.document_context and vector_leg:
            contexts = self.store.passage_contexts(
                brain.id, embedder.model_id, query_vector, [i for i, _ in vector_leg]
            )
            # As far as the leg is trusted: where the embedder cannot read the brain, how close
            # a passage is to its own opening says nothing either.
            vector_leg = in_context(vector_leg, contexts, trust[1])
        if mode == "text":
            weights = [1.0, 0.0]
        elif mode == "vector":
            weights = [0.0, 1.0]
        else:
            pieces = embedder.words_in_pieces(query) if use_vectors else None
            share = p.text_weight if text_weight is None else text_weight
            share = text_share(share, p.unspecific_words, pieces, trust[0])
            weights = [share, (1.0 - share) * readable]
        groups = None
        if p.share_document_evidence and text_leg and vector_leg:
            groups = self.store.chunk_documents([i for i, _ in text_leg + vector_leg])
        vectorless: set[int] | None = None
        if mode == "hybrid" and brain.embedder_model is not None:
            vectorless = self.store.vectorless([i for i, _ in text_leg], brain.embedder_model)
        # Cosine's ceiling is 1: a question nothing in the brain is close to keeps its low
        # similarities instead of having its best one lifted to 1. Its floor is what the
        # question reaches with the brain's passages on average, so an embedder that puts
        # unrelated text near 0.75 (multilingual-e5) is fused like one that puts it near 0.1
        # (MiniLM), instead of every passage it finds arriving scored high.
        fused = fuse(
            [text_leg, vector_leg],
            weights,
            p.fusion,
            p.rrf_k,
            p.normalisation,
            groups,
            ceilings=[text_ceiling, 1.0],
            floors=[0.0, min(max(floor, 0.0), 0.95)],
            confidences=trust,
            first_leg_only=vectorless or frozenset(),
        )
        return Ranking(fused, closeness, vectorless)

    def ranked_documents(
        self, brain: Brain, query: str, mode: SearchMode = "hybrid", depth: int = 100
    ) -> list[tuple[int, float]]:
        """Documents by their best chunk, for evaluation against document-level judgments."""
        ranking = self.ranking(brain, query, mode)
        fused = ranking.fused
        scored = [(f.score, f) for f in fused]
        known: dict[int, int] = {}  # chunk -> document, for rows already read
        if mode == "hybrid" and self.reranker is None:
            # Among the first passages, as a search shows them (reading every candidate's
            # text would cost more than the search itself).
            shown, below = scored[:WORDS_FIRST_WINDOW], scored[WORDS_FIRST_WINDOW:]
            texts = self.store.chunks_with_documents([f.item_id for _, f in shown])
            known = {chunk_id: document.id for chunk_id, (_, document) in texts.items()}
            close = ranking.closeness
            scored = words_first(shown, query_terms(query), _text_in(texts), close) + below
        if mode == "hybrid" and self.reranker is not None:
            head = fused[: self.params.rerank_depth]
            rows = self.store.chunks_with_documents([f.item_id for f in head])
            reranked = self._reranked(query, [f for f in head if f.item_id in rows], rows)
            if reranked is not None:
                # The reranked head first, then the rest in fused order.
                low = min((score for score, _ in reranked), default=0.0)
                rest = fused[len(head) :]
                scored = reranked + [(low - 1.0 - i, f) for i, f in enumerate(rest)]
        chunk_docs = known | self.store.chunk_documents(
            [f.item_id for _, f in scored if f.item_id not in known]
        )
        seen: dict[int, float] = {}
        for score, f in scored:
            doc_id = chunk_docs.get(f.item_id)
            if doc_id is not None and doc_id not in seen:
                seen[doc_id] = score
                if len(seen) >= depth:
                    break
        return list(seen.items())

    def search(self, brain: Brain, request: SearchRequest) -> list[Hit]:
        terms = query_terms(request.query)
        ranking = self.ranking(
            brain,
            request.query,
            request.mode,
            request.filters,
            request.min_similarity,
            request.text_weight,
        )
        fused, closeness, vectorless = ranking.fused, ranking.closeness, ranking.vectorless
        reranking = request.mode == "hybrid" and self.reranker is not None
        # The short-chunk factor can only lower a score, so a few spare candidates suffice;
        # by document, enough more to fill `limit` documents past the best ones' passages.
        spare = GROUPED_DEPTH if request.by_document else 3
        depth = max(request.limit * spare, self.params.rerank_depth if reranking else 0)
        window = fused[:depth]
        rows = self.store.chunks_with_documents([f.item_id for f in window])
        window = [f for f in window if f.item_id in rows]
        reranked = self._reranked(request.query, window, rows) if reranking else None
        if reranked is None:
            ranked = sorted(
                ((f.score * self._length_factor(rows[f.item_id][0]), f) for f in window),
                key=lambda pair: -pair[0],
            )
            ranked = words_first(ranked, terms, _text_in(rows), closeness)
        else:
            ranked = reranked
        shown = ranked if request.by_document else ranked[: request.limit]
        if vectorless is None and brain.embedder_model is not None:  # text or vector mode
            ids = [f.item_id for _, f in shown if f.ranks[1] is None]
            vectorless = self.store.vectorless(ids, brain.embedder_model) if ids else set()
        hits = [
            replace(
                self._hit(
                    *rows[f.item_id], terms, score, f.ranks, f.scores, reranked is not None,
                    closeness.of(f.scores[1]) if closeness is not None else None,
                ),
                vectors_pending=f.item_id in (vectorless or ()),
            )
            for score, f in shown
        ]  # fmt: skip
        return by_document(hits, request.limit) if request.by_document else hits

    def _reranked(
        self,
        query: str,
        window: Sequence[Fused],
        rows: dict[int, tuple[Chunk, Document]],
    ) -> list[tuple[float, Fused]] | None:
        """`window` ordered by the reranker's scores, or None when it failed (the fused order
        stands: a reranker refines search, it is never needed for an answer)."""
        assert self.reranker is not None
        passages = []
        for f in window:
            chunk, document = rows[f.item_id]
            named = index_title(document.title, document.name, document.kind)
            context = context_line(named, chunk.heading_path)
            passages.append(f"{context}\n\n{chunk.text}" if context else chunk.text)
        try:
            scores = self.reranker.scores(query, passages)
        except RerankError as error:
            log.warning("reranking skipped, fused order kept: %s", error)
            return None
        ranked = sorted(zip(scores, window, strict=True), key=lambda pair: -pair[0])
        return list(ranked)

    def _length_factor(self, chunk: Chunk) -> float:
        short = self.params.short_chunk_tokens
        if short <= 0 or chunk.token_count >= short:
            return 1.0
        return math.sqrt(max(chunk.token_count, 1) / short)

    @staticmethod
    def _hit(
        chunk: Chunk,
        document: Document,
        terms: list[str],
        score: float,
        ranks: tuple[int | None, ...],
        scores: tuple[float | None, ...],
        reranked: bool = False,
        closeness: float | None = None,
    ) -> Hit:
        citation = Citation(
            document_id=document.id,
            name=document.name,
            title=document.title,
            chunk_index=chunk.index,
            location=chunk.location,
            heading_path=chunk.heading_path,
            source_url=document.source_url,
        )
        snippet = make_snippet(chunk.text, terms, language=chunk.language)
        return Hit(
            chunk_id=chunk.id,
            citation=citation,
            text=chunk.text,
            snippet=snippet.text,
            highlights=snippet.highlights,
            score=score,
            text_rank=ranks[0],
            vector_rank=ranks[1],
            text_score=scores[0],
            vector_score=scores[1],
            reranked=reranked,
            closeness=closeness,
            gone_at=document.gone_at,
        )


def passage_hit(chunk: Chunk, document: Document) -> Hit:
    """A chunk as a hit that no search scored (a whole document's passages, for summaries)."""
    return SearchEngine._hit(chunk, document, [], 0.0, (None, None), (None, None))


def _text_in(rows: Mapping[int, tuple[Chunk, Document]]) -> Callable[[int], str | None]:
    def text(chunk_id: int) -> str | None:
        row = rows.get(chunk_id)
        return row[0].text if row is not None else None

    return text
