"""The queue's order (`loci.store.job_order`): the text of every queued file before any
embedding, smaller first within a stage, and a big file still gets its turn."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.models import is_searchable
from loci.service import Loci
from loci.store.base import Store
from loci.store.job_order import TEXT_BYTES_PER_S
from tests.support import pdf_files, text_files
from tests.support.services import file_row, make_service

pytestmark = pytest.mark.both_backends


@pytest.fixture
def sliced(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[Loci]:
    """A service whose worker embeds in short slices (0.2 s) and one job per batch."""
    service = make_service(tmp_path / "home", embedder, database_url, embed_slice_s=0.2)
    service.library.settings = dataclasses.replace(
        service.library.settings,
        worker=dataclasses.replace(service.library.settings.worker, batch_size=1),
    )
    yield service
    service.store.close()


def test_small_files_added_while_a_big_one_is_embedded_go_first(sliced: Loci) -> None:
    loci, brain = sliced, sliced.brain()
    worker = loci.library.worker()
    big = loci.library.add_bytes(brain, "annual-report.pdf", pdf_files.text_pdf(30)).document
    assert worker.run_batch() == 1  # its text: searchable by words
    assert worker.run_batch() == 1  # one slice of its embedding
    big = loci.library.document(brain, big.id)
    assert big.vectors_pending and big.progress is not None
    started = big.progress.done
    assert 0 < started < big.progress.total

    notes = [
        loci.library.add_note(brain, f"Note {n}: {text_files.prose(40, seed=n)}").document.id
        for n in range(3)
    ]
    for _ in notes:  # the notes' text comes before the big file's next slice
        assert worker.run_batch() == 1
    assert all(is_searchable(loci.library.document(brain, i)) for i in notes)
    big = loci.library.document(brain, big.id)
    assert big.progress is not None and big.progress.done == started
    for _ in notes:  # and their vectors too: each costs a chunk, the big file a hundred
        assert worker.run_batch() == 1
    assert all(loci.library.document(brain, i).status == "ready" for i in notes)
    big = loci.library.document(brain, big.id)
    assert big.status == "processing" and big.progress is not None
    assert big.progress.done == started

    while worker.run_batch():
        pass
    big = loci.library.document(brain, big.id)
    assert (big.status, big.vectors_pending, big.progress) == ("ready", False, None)


def _next(store: Store) -> str:
    [job] = store.claim_jobs("w", 30)
    assert store.finish_job(job, "w")
    return store.get_document(job.brain_id, job.document_id).name


def test_smaller_first_but_a_big_file_is_not_starved(store: Store) -> None:
    brain = store.ensure_brain("a")
    cost_s = 0.6
    store.create_document(brain.id, file_row("big.pdf", int(cost_s * TEXT_BYTES_PER_S)), "index")
    store.create_document(brain.id, file_row("small-1.pdf", 1000), "index")
    store.create_document(brain.id, file_row("small-2.pdf", 2000), "index")
    assert _next(store) == "small-1.pdf"  # queued after the big one, but smaller
    time.sleep(cost_s + 0.2)  # later than the big file's cost: it is its turn now
    store.create_document(brain.id, file_row("small-3.pdf", 1000), "index")
    assert [_next(store) for _ in range(3)] == ["small-2.pdf", "big.pdf", "small-3.pdf"]
