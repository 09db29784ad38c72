"""A worker's two lanes: short jobs never wait behind one long text stage, and a stream of new
files that never ends still leaves the embedding its turns.

The long text stage is a real one: a recording of five minutes transcribed by the speech-to-text
service (tests/support/scripted_stt.py, a loopback server speaking OpenAI's protocol) that holds its
answer until the test lets it go, as a real service does for the minutes a long meeting takes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.models import Brain, is_searchable
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.base import Store
from loci.store.job_order import QUICK_TEXT_BYTES
from tests.support import pdf_files, text_files
from tests.support.audio_files import script, wav
from tests.support.scripted_stt import ScriptedSTT
from tests.support.services import file_row, make_service

pytestmark = pytest.mark.both_backends


def found_by_words(loci: Loci, brain: Brain, words: str, document_id: int) -> bool:
    hits = loci.searching.search(brain, SearchRequest(words, mode="text", limit=5))
    return any(hit.citation.document_id == document_id for hit in hits)


def eventually(check: Callable[[], bool], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def held_stt() -> Iterator[ScriptedSTT]:
    hold = threading.Event()
    with ScriptedSTT(lines=script(), hold=hold) as service:
        yield service
        hold.set()


def test_a_note_is_searchable_while_the_worker_transcribes_a_long_recording(
    tmp_path: Path, embedder: Embedder, database_url: str | None, held_stt: ScriptedSTT
) -> None:
    loci = make_service(
        tmp_path / "home",
        embedder,
        database_url,
        stt_base_url=held_stt.base_url,
        stt_api_key="sk-test",
    )
    brain = loci.brain()
    stop = threading.Event()
    worker = threading.Thread(target=loci.library.worker().run_forever, args=(stop,))
    worker.start()
    try:
        recording = wav(300)
        assert len(recording) > QUICK_TEXT_BYTES  # a job for the main lane
        meeting = loci.library.add_bytes(brain, "meeting.wav", recording).document
        assert eventually(lambda: len(held_stt.requests) == 1, 30)  # the main lane is inside it

        note = loci.library.add_note(brain, "Call the farrier about the grey mare's shoes.")
        words = "farrier grey mare shoes"
        quick = note.document.id
        assert eventually(lambda: found_by_words(loci, brain, words, quick), 10)
        # and its vectors too: the quick lane embeds a document of a few chunks
        assert eventually(lambda: loci.library.document(brain, quick).status == "ready", 10)
        still = loci.library.document(brain, meeting.id)
        assert (still.status, still.chunk_count) == ("processing", 0)  # still being transcribed

        assert held_stt.hold is not None
        held_stt.hold.set()
        assert eventually(lambda: loci.library.document(brain, meeting.id).status == "ready", 60)
        assert found_by_words(loci, brain, "plumber boiler heat exchanger", meeting.id)
    finally:
        stop.set()
        worker.join(30)
        loci.store.close()
    assert not worker.is_alive()


def test_a_stream_of_new_files_still_leaves_the_embedding_its_turns(
    tmp_path: Path, embedder: Embedder, database_url: str | None
) -> None:
    loci = make_service(
        tmp_path / "home", embedder, database_url, embed_slice_s=0.2, vectors_wait_s=0.1
    )
    brain = loci.brain()
    try:
        report = loci.library.add_bytes(brain, "report.pdf", pdf_files.text_pdf(5)).document
        [report] = loci.library.wait_for(brain, [report.id], until="searchable")
        assert report.vectors_pending and report.chunk_count > 8  # more than one slice

        worker = loci.library.worker()
        notes: list[int] = []
        deadline = time.monotonic() + 60
        while loci.library.document(brain, report.id).status != "ready":
            assert time.monotonic() < deadline, f"no embedding after {len(notes)} new notes"
            # A new file before every turn: there is always text to read first.
            time.sleep(0.01)
            text = f"Note {len(notes)}: {text_files.prose(30, seed=len(notes))}"
            notes.append(loci.library.add_note(brain, text).document.id)
            assert worker.step() >= 1
        unread = [i for i in notes if not is_searchable(loci.library.document(brain, i))]
        # The text still came first: the notes were read while the report was embedded.
        assert len(unread) <= 1, (len(unread), len(notes))
    finally:
        loci.store.close()


def test_the_quick_lane_takes_only_short_index_jobs(store: Store) -> None:
    brain = store.ensure_brain("a")
    store.create_document(brain.id, file_row("scan.pdf", 5 * QUICK_TEXT_BYTES), "index")
    store.create_document(brain.id, file_row("capture.md", 2000), "curate")
    small = store.create_document(brain.id, file_row("note.pdf", 2000), "index")
    [job] = store.claim_jobs("quick", 30, limit=16, quick_only=True)
    assert (job.document_id, job.stage) == (small.id, "text")
    assert store.claim_jobs("quick", 30, limit=16, quick_only=True) == []
    assert len(store.claim_jobs("main", 30, limit=16)) == 2  # the main lane takes anything
