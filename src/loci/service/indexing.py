"""The background work that indexes a brain's documents: the worker and its handlers, and waiting
in this process until documents are searchable or ready."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loci.curate.pipeline import CURATE_JOB
from loci.errors import NotFound
from loci.ingest.timings import IndexTimings
from loci.jobs.worker import PRESENCE_WITHIN_S, BatchHandler, Worker, by_kind
from loci.models import (
    Brain,
    Document,
    WaitUntil,
    is_searchable,
    is_settled,
)
from loci.service.library_base import LibraryBase
from loci.store.job_order import INDEX_JOB, REINDEX_JOB


class Indexing(LibraryBase):
    """The worker, and waiting for documents to be indexed."""

    def worker(
        self, name: str | None = None, scheduled: Callable[[str], object] | None = None
    ) -> Worker:
        """`scheduled`: runs the scheduled source due first, if any, as the worker of that
        name; what it returns is None when none was due (`ScheduledSources.run_due`)."""
        handlers: dict[str, BatchHandler] = {
            INDEX_JOB: self._index_jobs,
            REINDEX_JOB: self._index_jobs,
            CURATE_JOB: self.curation.run_jobs,
        }
        return Worker(self.store, by_kind(handlers), self.settings.worker, name, scheduled)

    def wait_for(
        self,
        brain: Brain,
        document_ids: Sequence[int],
        on_progress: Callable[[list[Document]], None] | None = None,
        *,
        until: WaitUntil = "ready",
    ) -> list[Document]:
        """Process the documents' jobs in this process until each is ready or failed (or, with
        `until="searchable"`, found by its words: its text stage done, vectors maybe pending),
        then those of the attachments they gave rise to (an e-mail's files), so a CLI `add`
        of a message leaves its attachments searchable too. The text stage of every document
        comes first (the queue's order), so all are searchable by words before any embedding."""

        def current(ids: Sequence[int] = document_ids) -> list[Document]:
            # One read for them all: progress reports and the settled check read every
            # document, and one query each made a PostgreSQL wait on 5,000 notes 15x slower.
            found = self.store.get_documents(brain.id, ids)
            if len(found) < len(ids):
                have = {d.id for d in found}
                gone = next(i for i in ids if i not in have)
                raise NotFound(f"no document {gone} in this brain")
            return found

        done = is_searchable if until == "searchable" else is_settled
        pending, seen = list(document_ids), set(document_ids)
        report = (lambda: on_progress(current())) if on_progress else None
        while pending:
            batch = pending

            def settled(ids: Sequence[int] = batch) -> bool:
                return all(done(d) for d in current(ids))

            self.worker().drain(
                batch, settled, report, only_stage="text" if until == "searchable" else None
            )
            pending = [
                link["id"]
                for document in current(batch)
                for link in document.metadata.get("attachments") or ()
                if isinstance(link, dict)
                and isinstance(link.get("id"), int)
                and link["id"] not in seen
            ]
            seen.update(pending)
        return current()

    @property
    def index_timings(self) -> IndexTimings:
        """Seconds this process's worker spent parsing, chunking, embedding and writing."""
        return self._index_jobs.timings

    def workers_running(self) -> bool:
        """Whether a worker that runs until stopped (`loci serve`, `loci worker`) is alive on
        this database: it will embed whatever is queued, so a command need not wait for that."""
        return self.store.live_workers(PRESENCE_WITHIN_S) > 0
