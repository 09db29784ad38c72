"""Searching a brain: `Searching`, the service `Loci` holds as `loci.searching`.

Passages come from the `SearchEngine` (BM25 and vector legs, fused); in hybrid mode the links
of the brain graph then re-rank them (`LinkedSearch`). `passages` is the ranking before links,
which the graph's own query expands in its own way.
"""

from __future__ import annotations

from loci.errors import InvalidInput
from loci.graph.linked_search import LinkedSearch
from loci.models import Brain, Hit, SearchMode
from loci.search.engine import SearchEngine, SearchRequest
from loci.search.filters import check_filters
from loci.search.related import MAX_RELATED, Related, related_documents
from loci.store.base import Store


class Searching:
    """Search, related documents and rankings for evaluation, over one store."""

    def __init__(self, store: Store, engine: SearchEngine, linked: LinkedSearch) -> None:
        self.store = store
        self.engine = engine
        self.linked = linked

    def search(self, brain: Brain, request: SearchRequest) -> list[Hit]:
        # Filters that cannot match (an empty date range, a blank tag) are refused with the
        # reason rather than searched: an empty answer would look like "nothing matches".
        check_filters(request.filters)
        # Re-read the brain: its embedder identity is set by the first indexed document, which
        # may have happened after the caller got this snapshot.
        hits = self.passages(brain, request)
        if request.mode != "hybrid":  # a single leg is a diagnostic view: no links followed
            return hits
        expanded = self.linked.expand_hits(
            brain, hits, request.limit, include_retired=request.include_retired
        )
        if request.filters.empty:
            return expanded
        # A page a link brought in was never checked against the filters: only links between
        # documents the filters admitted may re-rank them.
        admitted = {h.citation.document_id for h in hits}
        return [h for h in expanded if h.citation.document_id in admitted]

    def related(self, brain: Brain, document_id: int, limit: int = 5) -> list[Related]:
        """Other documents about what this one is about, closest first (see search.related)."""
        if not 1 <= limit <= MAX_RELATED:
            raise InvalidInput(f"limit must be between 1 and {MAX_RELATED}, got {limit}")
        document = self.store.get_document(brain.id, document_id)
        return related_documents(self.store, self.store.get_brain(brain.name), document, limit)

    def ranked_documents(
        self, brain: Brain, query: str, mode: SearchMode = "hybrid", depth: int = 100
    ) -> list[tuple[int, float]]:
        """Documents best first, as `search` ranks them, for evaluation against judgments."""
        # Re-read, as search does: the brain learns its embedder when its first vectors land.
        ranked = self.engine.ranked_documents(self.store.get_brain(brain.name), query, mode, depth)
        if mode != "hybrid":
            return ranked
        return [(e.document_id, e.score) for e in self.linked.expand_ranking(brain, ranked)]

    def passages(self, brain: Brain, request: SearchRequest) -> list[Hit]:
        """The passage ranking alone, before links are followed (the graph's `brain query`
        expands its own, graph-only ranking)."""
        return self.engine.search(self.store.get_brain(brain.name), request)
