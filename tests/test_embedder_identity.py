"""A brain refuses vectors of another model until `reindex --embeddings` migrates it.

The second embedder is the OpenAI-compatible client talking to a scripted embeddings server on
127.0.0.1 (a hosted model cannot run here), so both the identity gate and the migration run the
real code paths end to end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.errors import EmbedderMismatch
from loci.search.engine import SearchRequest
from tests.support.fake_embeddings import FakeEmbeddingsServer, make_embedder
from tests.support.services import make_service


@pytest.fixture
def remote() -> Iterator[FakeEmbeddingsServer]:
    server = FakeEmbeddingsServer()
    server.start()
    yield server
    server.stop()


def test_model_change_is_refused_then_migrated(
    tmp_path: Path, embedder: Embedder, remote: FakeEmbeddingsServer
) -> None:
    home = tmp_path / "home"
    local = make_service(home, embedder)
    brain = local.brain()
    first = local.library.add_note(brain, "The boat is moored at pier 4, berth 17.", title="Boat")
    local.library.wait_for(brain, [first.document.id])
    assert local.store.get_brain("default").embedder_model == embedder.model_id

    other = make_embedder(remote)
    switched = make_service(home, other)
    brain = switched.brain()
    with pytest.raises(EmbedderMismatch, match="reindex --embeddings"):
        switched.searching.search(brain, SearchRequest("where is the boat", mode="vector"))
    # text search needs no vectors and keeps working
    assert switched.searching.search(brain, SearchRequest("boat pier", mode="text"))
    # a new document cannot be indexed into the old vector space: it fails with the reason
    second = switched.library.add_note(brain, "The oars are in the shed.", title="Oars")
    [failed] = switched.library.wait_for(brain, [second.document.id])
    assert failed.status == "failed" and "reindex --embeddings" in (failed.status_reason or "")

    docs = switched.library.reindex(brain, embeddings=True)
    final = switched.library.wait_for(brain, [d.id for d in docs])
    assert {d.status for d in final} == {"ready"}
    migrated = switched.store.get_brain("default")
    assert (migrated.embedder_model, migrated.embedder_dims) == (other.model_id, other.dimensions)
    hits = switched.searching.search(
        brain, SearchRequest("where are the oars", mode="vector", limit=5)
    )
    assert {h.citation.document_id for h in hits} == {first.document.id, second.document.id}
    assert remote.requests, "the new model was really asked for vectors"

    # and now the local model is the stranger
    with pytest.raises(EmbedderMismatch):
        local.searching.search(local.brain(), SearchRequest("boat", mode="hybrid"))


def test_unchanged_chunks_are_not_embedded_twice(
    tmp_path: Path, remote: FakeEmbeddingsServer
) -> None:
    loci = make_service(tmp_path / "home", make_embedder(remote))
    brain = loci.brain()
    note = loci.library.add_note(brain, "Seeds are sown in March under glass.", title="Seeds")
    loci.library.wait_for(brain, [note.document.id])
    asked = sum(len(r.body["input"]) for r in remote.requests)
    assert asked == 1
    loci.library.reprocess(brain, note.document.id)
    loci.library.wait_for(brain, [note.document.id])
    loci.library.add_bytes(
        loci.brain("other"), "seeds.md", loci.library.original(brain, note.document.id)
    )
    loci.library.wait_for(
        loci.brain("other"), [d.id for d in loci.library.documents(loci.brain("other"))]
    )
    assert sum(len(r.body["input"]) for r in remote.requests) == asked  # all from the cache
