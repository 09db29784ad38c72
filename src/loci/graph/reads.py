"""The brain graph's reads: resolve, get, list, query, timeline, folders, history, sources.

A document is found by id, else by its exact title or an alias. `query` is the hybrid search
restricted to graph documents, one hit per document with its links, then graph expansion:
pages linked from the best hits join the ranking (see `loci.graph.expansion`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from loci.errors import InvalidInput, NotFound
from loci.graph import expansion
from loci.graph.document import parse
from loci.graph.linked_search import lead_line, live_page, page_neighbours
from loci.graph.links import source_refs
from loci.graph.records import GraphDocument, GraphEdge, GraphTimelineEntry, GraphVersion
from loci.graph.results import FolderCount, Page, QueryHit, SourcePointer, Summary, summary
from loci.models import NOWHERE, Brain, Citation, Document, Hit, SearchFilters
from loci.search.engine import MAX_LIMIT, SearchRequest
from loci.store.base import Store

Search = Callable[[Brain, SearchRequest], list[Hit]]
CORE_PROVIDERS = ("file", "web", "note")  # `file:12` → document 12 of the brain


def visible_statuses(include_merged: bool, include_archived: bool) -> tuple[str, ...]:
    keep = {"merged": include_merged, "archived": include_archived}
    return tuple(s for s in ("draft", "active", "archived", "merged") if keep.get(s, True))


class GraphReader:
    def __init__(self, store: Store, search: Search) -> None:
        self.store = store
        self.graph = store.graph
        self._search = search

    # reading ------------------------------------------------------------------------------
    def resolve(self, brain: Brain, ref: str) -> GraphDocument:
        """A document by id, else by exact title or alias (ambiguity is an error)."""
        try:
            return self.graph.get(brain.id, ref.strip())
        except NotFound:
            found = self.graph.by_alias(brain.id, ref.strip())
        live = [d for d in found if d.status != "merged"] or found
        if not live:
            raise NotFound(f"no brain document {ref!r} (by id, title or alias)")
        if len(live) > 1:
            ids = ", ".join(d.id for d in live)
            raise InvalidInput(f"{ref!r} names several documents ({ids}); use an id")
        return live[0]

    def get(self, brain: Brain, ref: str) -> Page:
        record = self.resolve(brain, ref)
        return Page(
            summary(record),
            record.content,
            parse(record.content),
            tuple(self.graph.edges(brain.id, source=record.id)),
            tuple(self.graph.edges(brain.id, target=record.id)),
        )

    def list_documents(
        self,
        brain: Brain,
        *,
        folder: str | None = None,
        doc_type: str | None = None,
        status: str | None = None,
        include_merged: bool = False,
        include_archived: bool = False,
    ) -> list[Summary]:
        statuses = (status,) if status else visible_statuses(include_merged, include_archived)
        found = self.graph.documents(brain.id, folder=folder, doc_type=doc_type, statuses=statuses)
        return [summary(d) for d in found]

    def recently_updated(
        self, brain: Brain, limit: int, *, include_archived: bool = False
    ) -> list[Summary]:
        """The `limit` pages and records changed last, newest first (merged ones left out)."""
        statuses = visible_statuses(False, include_archived)
        return [summary(d) for d in self.graph.recently_updated(brain.id, limit, statuses)]

    def query(
        self,
        brain: Brain,
        text: str,
        *,
        limit: int = 10,
        include_merged: bool = False,
        include_archived: bool = False,
    ) -> list[QueryHit]:
        """Hybrid search over the graph's documents only, one hit per document, best first,
        each with its links. Merged and archived documents are left out unless asked for."""
        request = SearchRequest(
            text,
            limit=MAX_LIMIT,
            filters=SearchFilters(kinds=("page", "evidence")),
        )
        hits = self._search(brain, request)
        records = self.graph.by_document_ids(brain.id, [h.citation.document_id for h in hits])
        allowed = set(visible_statuses(include_merged, include_archived))
        best: dict[str, QueryHit] = {}
        for hit in hits:
            record = records.get(hit.citation.document_id)
            if record is None or record.status not in allowed or record.id in best:
                continue
            best[record.id] = QueryHit(
                summary(record), hit.score, hit.matched_by, hit.snippet, hit.citation,
                tuple(self.graph.edges(brain.id, source=record.id)),
                tuple(self.graph.edges(brain.id, target=record.id)),
                highlights=hit.highlights,
            )  # fmt: skip
        return self.expand(brain, list(best.values()))[:limit]

    def expand(self, brain: Brain, hits: list[QueryHit]) -> list[QueryHit]:
        """Follow page edges from the best hits (see `loci.graph.expansion`): a page reached
        joins as a `graph` hit with its hop path, or, when search found it too, adds the link's
        score to its own; then every score is blended with recency."""
        if not hits:
            return hits

        found = {h.document.id: h for h in hits}
        own_score = {h.document.id: h.score for h in hits}
        reached = expansion.expand_from(
            [(h.document.id, h.score) for h in hits], page_neighbours(self.graph, brain)
        )
        for step in reached:  # a page search found as well gains what its link gives it
            own = found.get(step.doc_id)
            if own is not None and step.doc_id != step.path[0]:
                found[step.doc_id] = replace(
                    own,
                    score=own.score + step.score,
                    matched_by=f"{own.matched_by}+graph",
                    path=step.path,
                )
        ranked = [(expansion.blended(h.score, h.document.updated), h) for h in found.values()]
        for step in reached:
            if step.doc_id in found:
                continue
            record = live_page(self.graph, brain, step.doc_id)
            if record is None:
                continue
            citation = Citation(
                document_id=record.document_id or 0,
                name=f"{record.folder}/{record.id}.md",
                title=record.title,
                chunk_index=0,
                location=NOWHERE,
                heading_path=(),
                source_url=None,
            )
            hit = QueryHit(
                summary(record), step.score, "graph", lead_line(record), citation,
                tuple(self.graph.edges(brain.id, source=record.id)),
                tuple(self.graph.edges(brain.id, target=record.id)),
                step.path,
            )  # fmt: skip
            ranked.append((expansion.blended(step.score, record.updated), hit))
        placed = [
            expansion.Placed(own_score.get(hit.document.id, 0.0), score, hit.matched_by)
            for score, hit in ranked
        ]
        ranked = list(
            zip(expansion.keep_matches_first(placed), (h for _, h in ranked), strict=True)
        )
        ranked.sort(key=lambda pair: -pair[0])
        return [replace(hit, score=round(score, 6)) for score, hit in ranked]

    def timeline(
        self,
        brain: Brain,
        ref: str | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        limit: int = 100,
    ) -> list[GraphTimelineEntry]:
        doc_id = self.resolve(brain, ref).id if ref else None
        return self.graph.timeline(brain.id, doc_id, since=since, until=until, limit=limit)

    def edges(self, brain: Brain) -> list[GraphEdge]:
        """Every edge of the brain's graph (typed relations, wiki links, citations), in one
        read: what a drawing of the whole graph needs."""
        return self.graph.edges(brain.id)

    def folders(self, brain: Brain) -> list[FolderCount]:
        direct = self.graph.folders(brain.id)
        totals: dict[str, int] = {}
        for folder, count in direct.items():
            parts = folder.split("/")
            for depth in range(1, len(parts) + 1):
                prefix = "/".join(parts[:depth])
                totals[prefix] = totals.get(prefix, 0) + count
        return [FolderCount(f, direct.get(f, 0), totals[f]) for f in sorted(totals)]

    def history(self, brain: Brain, ref: str) -> list[GraphVersion]:
        """Every version a write replaced, newest first (also for a deleted document's id)."""
        try:
            doc_id = self.resolve(brain, ref).id
        except NotFound:
            doc_id = ref.strip()
        versions = self.graph.versions(brain.id, doc_id)
        if not versions:
            self.graph.get(brain.id, doc_id)  # NotFound for an id that never existed
        return versions

    def _exists(self, brain: Brain, doc_id: str) -> bool:
        try:
            self.graph.get(brain.id, doc_id)
        except NotFound:
            return False
        return True

    def sources(self, brain: Brain, ref: str) -> list[SourcePointer]:
        """The document's source pointers (frontmatter, truth, timeline), each resolved when
        it names a document of this brain (`file:12`). Other providers stay unresolved: this
        is the seam where integrations will hydrate them with live URLs and state."""
        doc = parse(self.resolve(brain, ref).content)
        refs = dict.fromkeys(
            [*doc.sources, *source_refs([doc.truth, *(e.text for e in doc.timeline)]),
             *(e.source for e in doc.timeline if e.source)]
        )  # fmt: skip
        return [SourcePointer(r, self._core_document(brain, r)) for r in refs]

    def _core_document(self, brain: Brain, ref: str) -> Document | None:
        provider, _, ident = ref.partition(":")
        if provider not in CORE_PROVIDERS or not ident.isdigit():
            return None
        try:
            found = self.store.get_document(brain.id, int(ident))
        except NotFound:
            return None
        return None if found.kind in ("page", "evidence") else found
