"""Graph expansion for the core hybrid search (`loci search`, the search API, evaluation).

`brain query` searches graph documents only; this is the same walk (see `loci.graph.expansion`)
applied to a search over everything in a brain. Search ranks passages of files, notes and pages
alike; the graph pages among the best of them are seeds, and pages linked to them (relations and
wiki links, up to two hops, the score halving per hop) join the ranking — a page that search
found as well gains the link's score on its best passage, one it did not find enters with its
first passage and the hop path. Page scores are then blended with the page's recency.

Only pages are blended: a page's `updated` says when someone last vouched for what it says,
while a file's upload date says nothing about how old its content is. A brain without graph
pages among its hits (SciFact, a folder of PDFs) is ranked exactly as before, which is what
`loci eval` measures (docs/benchmarks-journal.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from loci.errors import NotFound
from loci.graph import expansion
from loci.graph.document import parse
from loci.graph.records import GraphDocument
from loci.models import Brain, Hit
from loci.search.engine import passage_hit
from loci.store.base import Store
from loci.store.graph_tables import GraphStore

LIVE = ("draft", "active")  # merged and archived pages are never reached by a link


@dataclass(frozen=True)
class Expanded:
    """A document's place after expansion: its new score and, when a link counted, the path."""

    document_id: int
    score: float
    path: tuple[str, ...] = ()


class LinkedSearch:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.graph = store.graph

    def expand_ranking(
        self, brain: Brain, ranked: list[tuple[int, float]], *, include_retired: bool = False
    ) -> list[Expanded]:
        """Documents (id, score; best first) re-ranked with the pages their best hits link to.
        Merged and archived pages leave the ranking unless `include_retired`; either way no
        link leads to them or lifts them."""
        pages = self.graph.by_document_ids(brain.id, [doc_id for doc_id, _ in ranked])
        if not pages:  # nothing to follow: the ranking stands as it is
            return [Expanded(doc_id, score) for doc_id, score in ranked]
        if not include_retired:
            retired = {d for d, page in pages.items() if page.status not in LIVE}
            ranked = [(doc_id, score) for doc_id, score in ranked if doc_id not in retired]
        seeds = [(pages[doc_id].id, score) for doc_id, score in ranked if doc_id in pages]
        reached = expansion.expand_from(seeds, page_neighbours(self.graph, brain))
        boost = {step.doc_id: step for step in reached if step.doc_id != step.path[0]}
        out: list[Expanded] = []
        for doc_id, score in ranked:
            page = pages.get(doc_id)
            if page is None:
                out.append(Expanded(doc_id, score))
                continue
            step = boost.pop(page.id, None) if page.status in LIVE else None
            lifted = score + step.score if step else score
            out.append(Expanded(doc_id, expansion.blended(lifted, page.updated),
                                step.path if step else ()))  # fmt: skip
        for step in boost.values():  # linked pages search did not find
            record = live_page(self.graph, brain, step.doc_id)
            if record is not None and record.document_id is not None:
                score = expansion.blended(step.score, record.updated)
                out.append(Expanded(record.document_id, score, step.path))
        out.sort(key=lambda e: -e.score)
        return out

    def expand_hits(
        self, brain: Brain, hits: list[Hit], limit: int, *, include_retired: bool = False
    ) -> list[Hit]:
        """Passage hits re-ranked the same way: a lifted page's best passage carries the new
        score and path; a page reached only by a link enters with its first passage."""
        best: dict[int, Hit] = {}
        for hit in hits:
            best.setdefault(hit.citation.document_id, hit)
        expanded = self.expand_ranking(
            brain, [(d, h.score) for d, h in best.items()], include_retired=include_retired
        )
        by_document = {e.document_id: e for e in expanded}
        out: list[Hit] = []
        for hit in hits:
            e = by_document.get(hit.citation.document_id)
            if e is None:  # a retired page
                continue
            moved = e is not None and (e.score != hit.score or e.path)
            if e is not None and moved and best[hit.citation.document_id] is hit:
                out.append(replace(hit, score=round(e.score, 6), graph_path=e.path))
            else:  # unmoved, or a second passage of a document: keeps its own score
                out.append(hit)
        for e in expanded:
            if e.document_id not in best:
                entered = self._entry_hit(brain, e)
                if entered is not None:
                    out.append(entered)
        out.sort(key=lambda h: -h.score)
        return out[:limit]

    def _entry_hit(self, brain: Brain, entry: Expanded) -> Hit | None:
        chunks = self.store.list_chunks(brain.id, entry.document_id)
        if not chunks:  # not indexed yet: nothing to cite
            return None
        document = self.store.get_document(brain.id, entry.document_id)
        record = live_page(self.graph, brain, entry.path[-1])
        hit = passage_hit(chunks[0], document)
        lead = lead_line(record) if record is not None else ""
        return replace(
            hit,
            score=round(entry.score, 6),
            graph_path=entry.path,
            snippet=lead or hit.snippet,
            highlights=() if lead else hit.highlights,
        )


def page_neighbours(graph: GraphStore, brain: Brain) -> Callable[[str], list[str]]:
    """The pages one hop from a page, both ways, by relations and wiki links (an evidence
    citation is not a hop: evidence backs a page, it does not lead anywhere)."""

    def neighbours(doc_id: str) -> list[str]:
        out = graph.edges(brain.id, source=doc_id)
        into = graph.edges(brain.id, target=doc_id)
        return [e.target for e in out if e.type != "cites"] + [
            e.source for e in into if e.type != "cites"
        ]

    return neighbours


def live_page(graph: GraphStore, brain: Brain, doc_id: str) -> GraphDocument | None:
    """The page a link reaches, if it exists and is neither merged nor archived."""
    try:
        record = graph.get(brain.id, doc_id)
    except NotFound:  # a link to a page that does not exist (doctor reports it)
        return None
    return record if record.kind == "page" and record.status in LIVE else None


def lead_line(record: GraphDocument) -> str:
    """A page's first line of compiled truth, as the snippet of a hit no text matched."""
    return next((line for line in parse(record.content).truth.splitlines() if line), "")[:240]
