"""Searchable by words before vectors: a document's text stage (parse, chunk, text index) makes
it found by its words at once, and its vectors follow in a second stage."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from loci.errors import NotFound
from loci.ingest.indexer import Indexer, Prepared
from loci.jobs.worker import Advance
from loci.models import Brain, Document, IndexWrite, Progress
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.brain_tables import BrainTables
from tests.support import pdf_files, text_files
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.services import open_store

pytestmark = pytest.mark.both_backends


def search(loci: Loci, brain: Brain, query: str, mode: str = "hybrid") -> list:  # type: ignore[type-arg]
    request = SearchRequest(query, mode=mode, limit=10)  # type: ignore[arg-type]
    return loci.searching.search(brain, request)


def test_a_pdf_is_found_by_its_words_before_its_vectors(loci: Loci, brain: Brain) -> None:
    added = loci.library.add_bytes(brain, "report.pdf", pdf_files.text_pdf(12))
    [doc] = loci.library.wait_for(brain, [added.document.id], until="searchable")
    assert (doc.status, doc.vectors_pending) == ("processing", True)
    assert doc.chunk_count > 10
    assert doc.progress == Progress("embed", 0, doc.chunk_count)  # every chunk awaits a vector
    words = " ".join(loci.library.chunks(brain, doc.id)[3].text.split()[:6])

    for mode in ("text", "hybrid"):
        hits = search(loci, brain, words, mode)
        assert hits and all(h.citation.document_id == doc.id for h in hits), mode
        assert all(h.vectors_pending and h.matched_by == "text" for h in hits), mode
    assert search(loci, brain, words, "vector") == []  # no vector to find it by yet

    [doc] = loci.library.wait_for(brain, [doc.id])
    assert (doc.status, doc.vectors_pending, doc.progress) == ("ready", False, None)
    hits = search(loci, brain, words)
    assert hits and not any(h.vectors_pending for h in hits)
    assert any(h.matched_by == "both" for h in hits)


def test_unchanged_passages_keep_their_vectors_and_only_new_ones_wait(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    note = tmp_path / "garden.md"
    sections = [f"## {name}\n\n{text_files.prose(120, seed=n)}\n" for n, name in enumerate("ABC")]
    note.write_text("# Garden\n\n" + "\n".join(sections))
    first = loci.library.add_file(brain, note).document
    [first] = loci.library.wait_for(brain, [first.id])
    before = {c.text: c.embed_hash for c in loci.library.chunks(brain, first.id)}
    assert first.status == "ready" and len(before) >= 3

    note.write_text(note.read_text() + f"\n## D\n\n{text_files.prose(60, seed=9)}\n")
    edited = loci.library.add_file(brain, note)
    assert edited.refreshed and edited.document.id == first.id
    [doc] = loci.library.wait_for(brain, [first.id], until="searchable")
    chunks = loci.library.chunks(brain, doc.id)
    new = [c for c in chunks if c.text not in before]
    assert len(new) == 1 and new[0].heading_path[-1] == "D"
    model = loci.store.get_brain(brain.name).embedder_model
    assert model is not None
    assert loci.store.vectorless([c.id for c in chunks], model) == {new[0].id}
    assert doc.vectors_pending and doc.progress == Progress("embed", 0, 1)
    [doc] = loci.library.wait_for(brain, [doc.id])
    assert doc.status == "ready" and loci.store.vectorless([c.id for c in chunks], model) == set()


def test_an_add_leaves_the_vectors_to_a_running_worker(
    tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "home"
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    report = tmp_path / "kiln-report.pdf"
    report.write_bytes(pdf_files.text_pdf(6))
    # Without a worker running, `loci add` indexes everything itself.
    alone = json.loads(run_cli("add", str(report), "--json", home=home, env=env).stdout)
    assert alone[0]["document"]["status"] == "ready"

    store = open_store(home, database_url)
    try:
        store.beat_worker("serve@test", True)  # what a running `loci serve` says every 5 s
        other = tmp_path / "glaze-notes.pdf"
        other.write_bytes(pdf_files.text_pdf(7))
        added = run_cli("add", str(other), "--json", home=home, env=env)
        assert added.returncode == 0, added.stderr
        [item] = json.loads(added.stdout)
        doc = item["document"]
        assert (doc["status"], doc["vectors_pending"]) == ("processing", True)
        assert doc["progress"] == {"stage": "embed", "done": 0, "total": doc["chunk_count"]}
        assert "vectors pending" in added.stderr

        brain = store.get_brain("default")
        chunk = store.list_chunks(brain.id, doc["id"])[-1]
        words = " ".join(chunk.text.split()[:8])
        found = json.loads(
            run_cli("search", words, "--json", "--limit", "3", home=home, env=env).stdout
        )
        assert found["hits"][0]["document_id"] == doc["id"]
        assert found["hits"][0]["vectors_pending"] is True
        shown = run_cli("search", words, "--limit", "3", home=home, env=env).stdout
        assert "vectors pending" in shown
        listed = run_cli("list", home=home, env=env).stdout
        assert f"embed 0/{doc['chunk_count']} (found by words)" in listed

        store.beat_worker("serve@test", False)  # the server stopped; a worker finishes it
        assert run_cli("worker", "--once", home=home, env=env).returncode == 0
        done = store.get_document(brain.id, doc["id"])
        assert (done.status, done.vectors_pending, done.progress) == ("ready", False, None)
    finally:
        store.close()


def test_a_running_worker_says_it_is_alive_until_it_stops(loci: Loci) -> None:
    stop = threading.Event()
    worker = loci.library.worker("presence-test")
    thread = threading.Thread(target=worker.run_forever, args=(stop,))
    assert not loci.library.workers_running()
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not loci.library.workers_running() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert loci.library.workers_running()
    finally:
        stop.set()
        thread.join(10)
    assert not loci.library.workers_running()


def test_a_title_changed_between_the_stages_reads_the_text_again(loci: Loci, brain: Brain) -> None:
    added = loci.library.add_bytes(brain, "kiln.txt", b"Fired the kiln to cone 6 on Friday.\n")
    [doc] = loci.library.wait_for(brain, [added.document.id], until="searchable")
    [before] = loci.library.chunks(brain, doc.id)
    # The embedding input holds the document's title (a text file has none of its own): what
    # the chunk's hash was made from is gone, so its vector would not match it.
    store = loci.store
    assert isinstance(store, BrainTables)  # both backends: portable SQL
    store.portable.change(
        "UPDATE documents SET title = ? WHERE id = ?", ("Kiln diary", doc.id), brain.id
    )
    [doc] = loci.library.wait_for(brain, [doc.id])
    [after] = loci.library.chunks(brain, doc.id)
    assert (doc.status, doc.vectors_pending) == ("ready", False)
    assert after.embed_hash != before.embed_hash  # read again, and embedded under the new title
    assert doc.title == "Kiln diary"
    model = loci.store.get_brain(brain.name).embedder_model
    assert model is not None and loci.store.vectorless([after.id], model) == set()


def test_the_brain_status_counts_documents_waiting_for_vectors_and_the_queue_by_stage(
    loci: Loci, brain: Brain
) -> None:
    pdf = loci.library.add_bytes(brain, "report.pdf", pdf_files.text_pdf(3)).document
    note = loci.library.add_note(brain, "Glaze test tiles go on the top shelf.").document
    queued = loci.library.add_note(brain, "Order more cone 6 witness cones.").document
    loci.library.wait_for(brain, [pdf.id, note.id], until="searchable")
    server = LiveServer(loci, run_worker=False).start()
    try:
        with server.client() as api:
            status = api.get(f"/brains/{brain.name}/status").json()
        assert status["documents_by_status"] == {"processing": 3}
        assert status["vectors_pending"] == 2  # the third is not read yet
        assert status["queue_by_stage"] == {"text": 1, "vectors": 2}
        loci.library.wait_for(brain, [pdf.id, note.id, queued.id])
        with server.client() as api:
            status = api.get(f"/brains/{brain.name}/status").json()
        assert (status["vectors_pending"], status["queue_by_stage"]) == (0, {})
        assert status["documents_by_status"] == {"ready": 3}
    finally:
        server.stop()


def test_a_batch_writes_its_texts_together_and_a_document_deleted_meanwhile_fails_alone(
    loci: Loci, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text stage writes a batch's indexes in one store write. A note deleted while the
    others of its batch are read (a person removing it from the web app) makes that write
    fail: the others are then written one by one, and only the deleted note's job fails."""
    notes = [
        "The kiln fires at 1240 degrees.",
        "Clay is ordered on Mondays.",
        "Glaze dries overnight.",
    ]
    ids = [loci.library.add_note(brain, text).document.id for text in notes]
    indexer_prepare = Indexer.prepare

    def prepare(
        self: Indexer, of: Brain, document: Document, before: Mapping[str, str | None] | None
    ) -> Prepared:
        prepared = indexer_prepare(self, of, document, before)
        if document.id == ids[2]:  # the second note is already read when it goes
            loci.library.remove(brain, ids[1])
        return prepared

    monkeypatch.setattr(Indexer, "prepare", prepare)
    store_write = loci.store.replace_indexes
    batches: list[list[int]] = []

    def replace_indexes(writes: Sequence[IndexWrite], model: str) -> list[int | None]:
        batches.append([w.document_id for w in writes])
        return store_write(writes, model)

    monkeypatch.setattr(loci.store, "replace_indexes", replace_indexes)
    jobs = loci.store.claim_jobs("test", 60, 10, ids, "text", False)
    assert sorted(j.document_id for j in jobs) == sorted(ids)
    outcomes = loci.library._index_jobs(jobs)
    by_document = {j.document_id: outcomes[j.id] for j in jobs}
    assert isinstance(by_document[ids[1]], NotFound)
    for kept, words in ((ids[0], "kiln degrees"), (ids[2], "glaze overnight")):
        assert isinstance(by_document[kept], Advance)  # on to its vectors
        assert [h.citation.document_id for h in search(loci, brain, words, "text")] == [kept]
    assert search(loci, brain, "clay mondays", "text") == []
    # one write for the three, refused; then each alone
    assert batches == [ids, [ids[0]], [ids[1]], [ids[2]]]
