"""Capture first, curate later: keep what arrives at once, decide where it belongs in a job.

    save / ingest_item
      └─ the item: its bytes (blob) + a `documents` row of kind `item` + a `curate` job, in one
         transaction, keyed by content hash (the same content twice is one item)   ← never lost
      └─ at once, in the graph: a capture's draft note in inbox/, a meeting's transcript
         snapshotted into evidence/ (the copy rule: what cannot be fetched again is kept)
    curate job (leases, heartbeats, retries with backoff, then failed with its reason)
      └─ a model configured: the agent loop with the brain operations as its only tools
      └─ none: the rules (fold a capture into the page it names; meeting + attendee pages)
      └─ the item row becomes `ready` with what was done as its reason (or `failed`)

The draft and the snapshot are written again by the job if they are missing (a crash between
the item and the graph write), so the item row alone is enough to recover everything.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loci.curate.agent import AgentLimits, AgentRun, run_agent
from loci.curate.items import SourceItem, capture, defuse, label, normalize, stored_item
from loci.curate.prompts import system_prompt, task_prompt
from loci.curate.rules import RuleCurator
from loci.curate.tools import BrainTools
from loci.errors import Conflict, NotFound
from loci.graph.document import EVIDENCE_ZONE, BrainDoc, now
from loci.graph.links import slug_prefix
from loci.graph.results import Summary, summary
from loci.graph.service import BrainGraph
from loci.ingest.size_cap import over_cap
from loci.llm.client import Chat
from loci.models import Brain, Document, Job, NewDocument
from loci.store.base import Store
from loci.store.blobs import BlobStore, sha256_hex

log = logging.getLogger(__name__)

CURATE_JOB = "curate"
RULES_ACTOR = "curator"


@dataclass(frozen=True)
class Captured:
    item: Document  # the kept capture; `processing` until curated, then ready or failed
    draft: Summary  # its inbox draft as it is now (merged, once folded into a page)
    deduped: bool  # the same text was saved before: nothing new was written


@dataclass(frozen=True)
class Ingested:
    item: Document
    evidence: Summary | None  # a meeting's transcript snapshot
    draft: Summary | None  # a capture's inbox draft
    deduped: bool


class Curation:
    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        graph: BrainGraph,
        chat: Callable[[], Chat | None],
        *,
        limits: AgentLimits | None = None,
        max_bytes: int = 50 * 1024 * 1024,
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.graph = graph
        self._chat = chat
        self.limits = limits or AgentLimits()
        self.max_bytes = max_bytes

    # keeping -----------------------------------------------------------------------------
    def save(
        self,
        brain: Brain,
        text: str,
        *,
        title: str | None = None,
        source: str | None = None,
        actor: str = "capture",
    ) -> Captured:
        """Keep `text` as an inbox draft now and queue its curation. `source` (provider:id)
        says where it came from; by default `capture:<UTC time>`."""
        item = capture(text, title=title, source=source or f"capture:{now()}")
        return self._keep_capture(brain, item, actor)

    def ingest_item(
        self, brain: Brain, provider: str, raw: Mapping[str, Any], *, actor: str = "ingest"
    ) -> Ingested:
        """Keep a provider's normalized item (a capture, a meeting transcript) and queue its
        curation; posting the same item again changes nothing."""
        item = normalize(provider, raw)
        if item.type == "capture":
            kept = self._keep_capture(brain, item, actor)
            return Ingested(kept.item, None, kept.draft, kept.deduped)
        evidence_id = _evidence_id(item)
        row, deduped = self._keep(brain, item, {"evidence": evidence_id})
        evidence = self._ensure_evidence(brain, item, evidence_id, actor)
        return Ingested(row, evidence, None, deduped)

    def _keep_capture(self, brain: Brain, item: SourceItem, actor: str) -> Captured:
        digest = sha256_hex(item.canonical())
        draft_id = f"{slug_prefix(item.title, 60)}-{digest[:8]}"
        row, deduped = self._keep(brain, item, {"draft": draft_id})
        # A duplicate keeps the first save's draft (and title and source).
        first = stored_item(self.blobs.get(row.content_hash), row.metadata)
        draft = self._ensure_draft(brain, first, str(row.metadata["draft"]), actor)
        return Captured(row, draft, deduped)

    def _keep(self, brain: Brain, item: SourceItem, extra: dict[str, Any]) -> tuple[Document, bool]:
        data = item.canonical()
        too_large = over_cap("the item", len(data), self.max_bytes)
        if too_large is not None:
            raise too_large
        digest = sha256_hex(data)
        existing = self.store.find_by_hash(brain.id, digest)
        if existing is not None:
            if existing.kind != "item":
                raise Conflict(f"document {existing.id} already holds exactly these bytes")
            return existing, True
        self.blobs.put(data)  # canonical bytes first: the row never points at nothing
        new = NewDocument(
            kind="item",
            name=item.ref,
            title=item.title,
            source_url=item.url,
            mime_type="application/json",
            size_bytes=len(data),
            content_hash=digest,
            metadata={**item.describe(), **extra},
        )
        return self.store.create_document(brain.id, new, CURATE_JOB), False

    def _ensure_draft(self, brain: Brain, item: SourceItem, draft_id: str, actor: str) -> Summary:
        try:
            return summary(self.graph.graph.get(brain.id, draft_id))
        except NotFound:
            pass
        draft = BrainDoc(
            id=draft_id, kind="page", type="note", folder="inbox", status="draft",
            title=item.title, sources=(item.ref,), truth=defuse(item.text),
        )  # fmt: skip
        return self._create_once(brain, draft_id, draft.render(), actor)

    def _create_once(self, brain: Brain, doc_id: str, text: str, actor: str) -> Summary:
        """Create the page unless it exists; the request that kept the item and the worker
        curating it may both get here at once (a worker woken by the enqueue), and the one that
        loses the race takes the winner's page."""
        try:
            return self.graph.create(brain, actor=actor, text=text)
        except Conflict as conflict:
            try:
                return summary(self.graph.graph.get(brain.id, doc_id))
            except NotFound:
                raise conflict from None

    def _ensure_evidence(
        self, brain: Brain, item: SourceItem, evidence_id: str, actor: str
    ) -> Summary:
        try:
            return summary(self.graph.graph.get(brain.id, evidence_id))
        except NotFound:
            pass
        names = ", ".join(label(a.name) for a in item.attendees) or "not listed"
        head = (
            f"Transcript of **{label(item.title)}**, {item.date}. Attendees: {names}. "
            f"Source: [[source:{item.ref}|{item.provider}]]"
        )
        snapshot = BrainDoc(
            id=evidence_id, kind="evidence", type="source",
            folder=f"{EVIDENCE_ZONE}/{item.provider.replace('_', '-')}", status="active",
            title=f"Transcript: {label(item.title, 180)}", sources=(item.ref,),
            truth=f"{head}\n\n{defuse(item.text)}",
        )  # fmt: skip
        return self._create_once(brain, evidence_id, snapshot.render(), actor)

    # curating ----------------------------------------------------------------------------
    def run_jobs(self, jobs: Sequence[Job]) -> dict[int, BaseException | None]:
        """The worker's handler for `curate` jobs: each item curated on its own."""
        outcomes: dict[int, BaseException | None] = {}
        for job in jobs:
            try:
                brain = self.store.get_brain_by_id(job.brain_id)
                row = self.store.get_document(job.brain_id, job.document_id)
                item, outcome = self.curate(brain, row)
                self.store.replace_index(row.id, [], {}, "", item.text, None, outcome)
                outcomes[job.id] = None
            except Exception as error:  # the worker retries it, or fails it with the reason
                outcomes[job.id] = error
        return outcomes

    def curate(self, brain: Brain, row: Document) -> tuple[SourceItem, str]:
        """Curate one kept item; returns it and a line saying what was done."""
        item = stored_item(self.blobs.get(row.content_hash), row.metadata)
        chat = self._chat()
        if item.type == "capture":
            draft_id = str(row.metadata["draft"])
            draft = self._ensure_draft(brain, item, draft_id, RULES_ACTOR)
            if draft.status != "draft":
                return item, f"{draft_id} was curated already ({draft.status})"
            if chat is None:
                return item, RuleCurator(self.graph, brain, RULES_ACTOR).curate_capture(
                    item, draft_id
                )
            run = self._agent(chat, brain, item, task_prompt(item, draft=draft_id))
            return item, f"{_ran(run)}; {self._fate(brain, draft_id)}"
        evidence_id = str(row.metadata["evidence"])
        self._ensure_evidence(brain, item, evidence_id, RULES_ACTOR)
        if chat is None:
            return item, RuleCurator(self.graph, brain, RULES_ACTOR).curate_meeting(
                item, evidence_id
            )
        run = self._agent(chat, brain, item, task_prompt(item, evidence=evidence_id))
        return item, _ran(run)

    def _agent(self, chat: Chat, brain: Brain, item: SourceItem, task: str) -> AgentRun:
        tools = BrainTools(self.graph, brain, actor=f"curator:{chat.model}")
        run = run_agent(chat, tools, system_prompt(item), task, self.limits)
        log.info("curated %s: %s", item.ref, _ran(run))
        return run

    def _fate(self, brain: Brain, draft_id: str) -> str:
        try:
            draft = self.graph.graph.get(brain.id, draft_id)
        except NotFound:
            return f"{draft_id} is gone"
        if draft.status == "merged":
            return f"folded {draft_id} into {draft.merged_into}"
        if draft.status == "draft" and draft.folder.split("/")[0] == "inbox":
            return f"left {draft_id} in inbox/"
        return f"{draft_id} is now {draft.status} in {draft.folder}/"


def _evidence_id(item: SourceItem) -> str:
    digest = sha256_hex(item.canonical())[:8]
    return f"ev-{slug_prefix(f'{item.provider} {item.id}', 100)}-{digest}"


def _ran(run: AgentRun) -> str:
    how = {
        "finished": "the agent finished",
        "step_limit": f"the agent stopped at its {run.steps}-step limit",
        "timeout": "the agent ran out of time",
    }[run.outcome]
    return f"{how} after {run.steps} step(s) and {run.tool_calls} tool call(s)"
