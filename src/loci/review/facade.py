"""Digests: `Reviews`, the service `Loci` holds as `loci.reviews`.

`digest` reads; `save_digest` keeps the result as a page in reviews/ (the same period again
rewrites that page). Both need only what `Reviews` is built with: the store, the graph, the
chat model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from loci.answer.sources import Source
from loci.answer.sources import number as number_sources
from loci.errors import Conflict, NotFound
from loci.graph.results import Summary
from loci.graph.service import BrainGraph
from loci.llm.client import Chat
from loci.models import Brain, Hit
from loci.review import page
from loci.review.digest import Facts, gather
from loci.review.period import period_since
from loci.review.summary import MAX_SOURCES, Recap, recap
from loci.search.engine import passage_hit
from loci.store.base import Store


@dataclass(frozen=True)
class Digest:
    facts: Facts
    recap: Recap

    def as_dict(self) -> dict[str, Any]:
        """The plain structure every surface returns (CLI --json, HTTP, MCP)."""
        facts = self.facts
        return {
            "brain": facts.brain,
            "since": facts.period.since,
            "start": facts.period.start.isoformat(),
            "end": facts.period.end.isoformat(),
            "period": facts.period.describe(),
            "counts": dict(facts.counts),
            "added_by_kind": facts.by_kind,
            "added": [asdict(d) for d in facts.added],
            "notes": [asdict(d) for d in facts.notes],
            "inbox": [asdict(d) for d in facts.inbox],
            "pages": [asdict(p) for p in facts.pages],
            "failed": [asdict(f) for f in facts.failed],
            "themes": [
                {"label": t.label, "words": list(t.words), "document_ids": list(t.document_ids)}
                for t in facts.themes
            ],
            "summary": {
                "text": self.recap.text,
                "by": self.recap.by,
                "model": self.recap.model,
                "fallback": self.recap.fallback,
                "sources": [s.citation().model_dump(mode="json") for s in self.recap.sources],
            },
        }


@dataclass(frozen=True)
class SavedDigest:
    digest: Digest
    page: Summary
    created: bool  # False: the period's page existed and was rewritten


class Reviews:
    """Digests of what came into a brain, read or kept as a page."""

    def __init__(self, store: Store, graph: BrainGraph, chat: Callable[[], Chat | None]) -> None:
        self.store = store
        self.graph = graph
        self._chat = chat  # called on use: a digest without a model never builds one

    def digest(
        self,
        brain: Brain,
        since: str | None = None,
        chat: Chat | None = None,
        *,
        now: dt.datetime | None = None,
    ) -> Digest:
        """What came into `brain` since `since` (24h, 7d, 2w or a date; default 7d), with a
        recap: `chat`'s (or the configured model's), else the new documents' own sentences."""
        facts = gather(self.store, brain, period_since(since, now))
        written = recap(facts, self._recap_sources(brain, facts), chat or self._chat())
        return Digest(facts, written)

    def save_digest(
        self,
        brain: Brain,
        since: str | None = None,
        chat: Chat | None = None,
        *,
        actor: str = "digest",
        now: dt.datetime | None = None,
    ) -> SavedDigest:
        """`digest`, kept as an analysis page in reviews/ whose id names the period."""
        made = self.digest(brain, since, chat, now=now)
        doc = page.digest_page(made.facts, made.recap)
        try:
            existing = self.graph.get(brain, doc.id)
        except NotFound:
            try:
                return SavedDigest(made, self.graph.create(brain, actor=actor, text=doc.render()),
                                   created=True)  # fmt: skip
            except Conflict:  # saved by a concurrent run a moment ago: rewrite it below
                existing = self.graph.get(brain, doc.id)
        rewritten = self.graph.rewrite(
            brain, doc.id, doc.truth, actor=actor, expected_hash=existing.summary.content_hash
        )
        return SavedDigest(made, rewritten, created=False)

    def _recap_sources(self, brain: Brain, facts: Facts) -> list[Source]:
        """The opening passage of each of the newest ready documents, numbered."""
        hits: list[Hit] = []
        for item in (*facts.added, *facts.notes):
            if len(hits) >= MAX_SOURCES:
                break
            if item.status != "ready":
                continue
            chunks = self.store.list_chunks(brain.id, item.id)
            if chunks:
                hits.append(passage_hit(chunks[0], self.store.get_document(brain.id, item.id)))
        return number_sources(hits, brain.name)
