"""The store on both backends: brain scoping, dedupe keys, the index swap, filters and the job
lease; and SQLite's own migrations and multi-process writes."""

from __future__ import annotations

import multiprocessing
import time
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from loci.errors import Conflict, NotFound
from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store.base import Store
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.migrations import MIGRATIONS

both = pytest.mark.both_backends


def new_doc(name: str, digest: str, tags: tuple[str, ...] = ()) -> NewDocument:
    return NewDocument(
        kind="file",
        name=name,
        title=None,
        source_url=None,
        mime_type="text/plain",
        size_bytes=10,
        content_hash=digest,
        tags=tags,
    )


def draft(index: int, text: str) -> IndexedChunk:
    d = ChunkDraft(
        index, text, (), Location(None, 1, 1, 0, len(text)), len(text.split()), f"h{text}"
    )
    return IndexedChunk(d, f"e-{text}")


def test_migrations_apply_once_and_record_version(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    SqliteStore(path).close()
    store = SqliteStore(path)  # opening again must not re-apply anything
    versions = store.db.rows("SELECT version FROM schema_migrations ORDER BY version")
    assert [r["version"] for r in versions] == list(range(1, len(MIGRATIONS) + 1))
    assert store.db.scalar("PRAGMA journal_mode") == "wal"


@both
def test_documents_are_scoped_to_their_brain(store: Store) -> None:
    a, b = store.ensure_brain("a"), store.ensure_brain("b")
    doc = store.create_document(a.id, new_doc("x.txt", "1" * 64), "index")
    assert store.get_document(a.id, doc.id).name == "x.txt"
    with pytest.raises(NotFound):
        store.get_document(b.id, doc.id)
    with pytest.raises(NotFound):
        store.delete_document(b.id, doc.id)
    assert store.find_by_hash(b.id, "1" * 64) is None
    # the same bytes in another brain are another document
    other = store.create_document(b.id, new_doc("x.txt", "1" * 64), "index")
    assert other.id != doc.id


@both
def test_search_legs_never_return_another_brains_chunks(store: Store) -> None:
    a, b = store.ensure_brain("a"), store.ensure_brain("b")
    vec = np.full(4, 0.5, np.float32)
    for brain, digest in ((a, "a" * 64), (b, "b" * 64)):
        doc = store.create_document(brain.id, new_doc(f"{brain.name}.txt", digest), "index")
        store.replace_index(
            doc.id,
            [draft(0, f"shared words {brain.name}")],
            {f"e-shared words {brain.name}": vec},
            "m",
            "text",
            None,
            None,
        )
    text_hits = store.text_search(a.id, ["shared"], 10, SearchFilters())
    vector_hits = store.vector_search(a.id, "m", vec, 10, SearchFilters())
    owned = {c.id for c in store.list_chunks(a.id, store.list_documents(a.id)[0].id)}
    assert {i for i, _ in text_hits} == owned
    assert {i for i, _ in vector_hits} == owned


@both
def test_replace_index_swaps_chunks_without_duplicates(store: Store) -> None:
    brain = store.ensure_brain("a")
    doc = store.create_document(brain.id, new_doc("x.txt", "c" * 64), "index")
    vec = np.full(4, 0.5, np.float32)
    for _ in range(3):
        store.replace_index(
            doc.id,
            [draft(0, "alpha one"), draft(1, "beta two")],
            {"e-alpha one": vec, "e-beta two": vec},
            "m",
            "alpha one\n\nbeta two",
            None,
            None,
        )
    assert [c.text for c in store.list_chunks(brain.id, doc.id)] == ["alpha one", "beta two"]
    assert len(store.text_search(brain.id, ["alpha"], 10, SearchFilters())) == 1
    assert store.get_document(brain.id, doc.id).status == "ready"


@both
def test_indexing_a_document_deleted_meanwhile_fails_alone(store: Store) -> None:
    """The worker indexes a document that was deleted while it was parsed: that one write is
    refused (nothing half-written stays), and the next one goes through on the same store."""
    brain = store.ensure_brain("a")
    gone = store.create_document(brain.id, new_doc("gone.txt", "d" * 64), "index")
    kept = store.create_document(brain.id, new_doc("kept.txt", "e" * 64), "index")
    store.delete_document(brain.id, gone.id)
    vec = np.full(4, 0.5, np.float32)
    with pytest.raises(NotFound, match="deleted while it was processed"):
        store.replace_index(
            gone.id, [draft(0, "alpha one")], {"e-alpha one": vec}, "m", "t", None, None
        )
    store.replace_index(kept.id, [draft(0, "beta two")], {"e-beta two": vec}, "m", "t", None, None)
    assert [h[0] for h in store.text_search(brain.id, ["alpha"], 10, SearchFilters())] == []
    [(chunk_id, _)] = store.text_search(brain.id, ["beta"], 10, SearchFilters())
    assert [c.id for c in store.list_chunks(brain.id, kept.id)] == [chunk_id]


@both
def test_rename_keeps_the_brain_and_its_documents_and_refuses_a_taken_name(store: Store) -> None:
    notes, work = store.create_brain("notes", "restricted", None), store.ensure_brain("work")
    doc = store.create_document(notes.id, new_doc("x.txt", "d" * 64), "index")
    renamed = store.update_brain(notes.id, name="journal")
    assert (renamed.id, renamed.name, renamed.created_at) == (notes.id, "journal", notes.created_at)
    assert store.get_brain("journal").id == notes.id
    assert store.get_document(renamed.id, doc.id).name == "x.txt"
    with pytest.raises(NotFound):
        store.get_brain("notes")
    with pytest.raises(Conflict):
        store.update_brain(work.id, name="journal")
    assert sorted(b.name for b in store.list_brains()) == ["journal", "work"]


def _writer(path: str, worker: int, count: int) -> None:
    store = SqliteStore(Path(path))
    brain = store.ensure_brain("shared")
    for i in range(count):
        store.create_document(
            brain.id, new_doc(f"{worker}-{i}.txt", f"{worker:032d}{i:032d}"), "index"
        )
    store.close()


def test_concurrent_processes_never_see_database_locked(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    SqliteStore(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 40)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    store = SqliteStore(path)
    brain = store.get_brain("shared")
    assert len(store.list_documents(brain.id)) == 160
    assert store.pending_jobs(brain.id) == 160


@both
def test_job_lease_expiry_lets_another_worker_take_over_and_fences_the_first(
    store: Store,
) -> None:
    brain = store.ensure_brain("a")
    store.create_document(brain.id, new_doc("x.txt", "d" * 64), "index")
    [first] = store.claim_jobs("worker-1", lease_s=0.2)
    assert first.attempts == 1
    assert store.claim_jobs("worker-2", lease_s=0.2) == []  # leased
    time.sleep(0.3)
    [second] = store.claim_jobs("worker-2", lease_s=30)
    assert second.id == first.id and second.attempts == 2
    assert store.heartbeat(first, "worker-1", 30) is False
    assert store.finish_job(first, "worker-1") is False  # fenced: lost its lease
    assert store.finish_job(second, "worker-2") is True
    assert store.pending_jobs() == 0


@both
def test_an_edit_queued_while_a_job_runs_keeps_the_document_processing(store: Store) -> None:
    brain = store.ensure_brain("a")
    doc = store.create_document(brain.id, new_doc("x.txt", "f" * 64), "index")
    [running] = store.claim_jobs("w", 30)
    store.requeue_document(brain.id, doc.id, "index")  # an edit lands while v1 is indexed
    vec = {"e-old text": np.full(4, 0.5, np.float32)}
    store.replace_index(doc.id, [draft(0, "old text")], vec, "m", "t", None, None)
    # v1's chunks serve searches, but the document waits for the queued job: not ready yet
    assert store.get_document(brain.id, doc.id).status == "processing"
    assert store.finish_job(running, "w")
    [queued] = store.claim_jobs("w", 30)
    vec = {"e-new text": np.full(4, 0.5, np.float32)}
    store.replace_index(doc.id, [draft(0, "new text")], vec, "m", "t", None, None)
    assert store.get_document(brain.id, doc.id).status == "ready"
    assert store.finish_job(queued, "w")


@both
def test_failed_job_marks_document_failed_with_reason(store: Store) -> None:
    brain = store.ensure_brain("a")
    doc = store.create_document(brain.id, new_doc("x.bin", "e" * 64), "index")
    [job] = store.claim_jobs("w", 30)
    store.fail_job(job, "w", "no parser for this type")
    failed = store.get_document(brain.id, doc.id)
    assert failed.status == "failed" and failed.status_reason == "no parser for this type"


@both
def test_filters_restrict_both_legs(store: Store) -> None:
    brain = store.ensure_brain("a")
    vec = np.full(4, 0.5, np.float32)
    ids = {}
    for name, tags in (("red.txt", ("colour", "warm")), ("blue.md", ("colour",))):
        doc = store.create_document(brain.id, new_doc(name, name.ljust(64, "0"), tags), "index")
        store.replace_index(
            doc.id, [draft(0, f"paint {name}")], {f"e-paint {name}": vec}, "m", "t", None, None
        )
        ids[name] = doc.id

    def docs_of(hits: list[tuple[int, float]]) -> set[int]:
        return set(store.chunk_documents([i for i, _ in hits]).values())

    for filters, expected in (
        (SearchFilters(name="red.txt"), {"red.txt"}),
        (SearchFilters(name="*.md"), {"blue.md"}),
        (SearchFilters(tags=("warm",)), {"red.txt"}),
        (SearchFilters(tags=("colour",)), {"red.txt", "blue.md"}),
        (SearchFilters(kinds=("note",)), set()),
        (SearchFilters(created_after="2999-01-01"), set()),
    ):
        want = {ids[n] for n in expected}
        assert docs_of(store.text_search(brain.id, ["paint"], 10, filters)) == want, filters
        assert docs_of(store.vector_search(brain.id, "m", vec, 10, filters)) == want, filters


@both
def test_new_content_stats_and_metadata_read_the_same_on_both_backends(store: Store) -> None:
    brain = store.ensure_brain("a")
    other = store.ensure_brain("b")
    doc = store.create_document(brain.id, new_doc("x.txt", "1" * 64), "index")
    store.create_document(other.id, new_doc("y.txt", "2" * 64), "index")  # shares no bytes
    shared = store.create_document(other.id, new_doc("z.txt", "3" * 64), "index")

    edit = new_doc("x.txt", "3" * 64)
    edited, unused = store.replace_content(
        brain.id, doc.id, "1" * 64, edit, "index", keep_versions=0
    )
    assert edited.content_hash == "3" * 64 and edited.status == "processing"
    assert unused == ["1" * 64] and store.document_versions(brain.id, doc.id) == []
    with pytest.raises(Conflict, match="changed since you read it"):
        store.replace_content(
            brain.id, doc.id, "1" * 64, new_doc("x.txt", "4" * 64), "index", keep_versions=0
        )
    store.create_document(brain.id, new_doc("w.txt", "5" * 64), "index")
    with pytest.raises(Conflict, match="already has exactly this content"):
        store.replace_content(
            brain.id, doc.id, "3" * 64, new_doc("x.txt", "5" * 64), "index", keep_versions=0
        )
    assert store.delete_document(other.id, shared.id) == []  # brain a still uses "3…"

    store.merge_document_metadata(doc.id, {"pages": 3})
    store.merge_document_metadata(doc.id, {"author": "Ana", "when": date(2024, 5, 1)})
    assert store.get_document(brain.id, doc.id).metadata == {
        "pages": 3, "author": "Ana", "when": "2024-05-01"
    }  # fmt: skip
    store.merge_document_metadata(10_000, {"lost": True})  # a document gone meanwhile: no-op

    vec = {"e-some text": np.full(4, 0.5, np.float32)}
    store.replace_index(doc.id, [draft(0, "some text")], vec, "m", "t", None, None)
    stats = store.stats(brain.id)
    assert stats.documents_by_status == {"ready": 1, "processing": 1}
    assert stats.documents_by_kind == {"file": 2} and stats.chunks == 1
    assert stats.jobs_by_status == {"queued": 2} and stats.bytes_stored == 20
    empty = store.stats(store.ensure_brain("c").id)
    assert (empty.documents_by_status, empty.chunks, empty.bytes_stored) == ({}, 0, 0)


@both
def test_replaced_contents_are_kept_as_versions_up_to_the_limit_and_count_as_used(
    store: Store,
) -> None:
    brain, other = store.ensure_brain("a"), store.ensure_brain("b")
    doc = store.create_document(brain.id, new_doc("x.txt", "1" * 64), "index")
    for old, new in (("1", "2"), ("2", "3"), ("3", "4")):
        _, unused = store.replace_content(
            brain.id, doc.id, old * 64, new_doc("x.txt", new * 64), "index", keep_versions=2
        )
    # The third replacement dropped version 1, whose bytes nothing else has.
    assert unused == ["1" * 64]
    versions = store.document_versions(brain.id, doc.id)
    assert [(v.number, v.content_hash) for v in versions] == [(3, "3" * 64), (2, "2" * 64)]
    assert versions[1].saved_at <= versions[1].replaced_at <= versions[0].replaced_at
    assert versions[0].saved_at == versions[1].replaced_at  # it came when 2 was replaced
    # A version's bytes are in use: not another brain's to delete, not the brain's either.
    assert store.unused(["2" * 64, "3" * 64, "4" * 64, "1" * 64]) == ["1" * 64]
    with pytest.raises(NotFound):
        store.document_versions(other.id, doc.id)
    # Deleting the document takes its versions, and says which bytes are free now.
    assert sorted(store.delete_document(brain.id, doc.id)) == ["2" * 64, "3" * 64, "4" * 64]
