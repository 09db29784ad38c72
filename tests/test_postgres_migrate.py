"""`loci migrate --to postgresql://…`: a SQLite data directory moves into PostgreSQL whole —
documents, vectors (not embedded again), graph, versions, users, tokens, conversations — and
answers the same searches with the same scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.auth.records import OAuthClient, OAuthCode
from loci.embed.base import Embedder
from loci.errors import StoreError
from loci.graph.service import BrainGraph
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.blobs import sha256_hex
from loci.store.postgres import PostgresStore
from loci.store.postgres.blobs import PostgresBlobStore
from loci.store.sqlite import SqliteStore
from tests.support.cli import run_cli
from tests.support.pg import EmbeddedPostgres
from tests.support.services import make_service

NOTES = {
    "kelp.txt": "Sea otters eat urchins, which protects kelp forests along the coast.",
    "bread.txt": "Sourdough needs a long cold proof in the fridge before baking bread.",
    "boiler.txt": "Error code F22 means the boiler pressure is below 0.8 bar; refill it.",
    "otters.md": "# Otters\n\nOtters hold hands while sleeping so they do not drift apart.",
}
QUESTIONS = ("otters kelp", "boiler pressure error", "bread proof fridge", "sleeping otters")


def _with_notes(home: Path, embedder: Embedder) -> tuple[Loci, Brain, list[int]]:
    """A SQLite service whose default brain holds the notes above, indexed."""
    loci = make_service(home, embedder)
    brain = loci.brain("default")
    ids = [
        loci.library.add_bytes(brain, name, text.encode()).document.id
        for name, text in NOTES.items()
    ]
    loci.library.wait_for(brain, ids)
    return loci, brain, ids


def test_migrate_copies_everything_and_ranks_the_same(
    tmp_path: Path, embedder: Embedder, postgres_server: EmbeddedPostgres
) -> None:
    home = tmp_path / "home"
    loci, brain, ids = _with_notes(home, embedder)
    graph = loci.graph
    graph.create(brain, actor="t", doc_type="person", title="Ana", text="Ana grows tomatoes.")
    graph.rewrite(brain, "ana", "Ana grows peppers.", actor="t",
                  expected_hash=graph.get(brain, "ana").summary.content_hash)  # fmt: skip
    user = loci.store.accounts.create_user("Maya")
    token = loci.store.accounts.create_token(
        user.id, name="cli", prefix="loci_x", secret_hash="h" * 64, scope="write",
        brain_ids=[brain.id], expires_at=None,
    )  # fmt: skip
    folder = tmp_path / "followed"  # a followed folder, and a file of it edited once
    folder.mkdir()
    (folder / "plan.md").write_text("The otters' plan: kelp first.\n")
    planned = loci.library.add_file(brain, folder / "plan.md").document.id
    (folder / "plan.md").write_text("The otters' plan: kelp first, then clams.\n")
    loci.library.add_file(brain, folder / "plan.md")
    loci.sources.add(brain, folder)
    vault = tmp_path / "vault"  # and a vault followed as pages, synced once
    vault.mkdir()
    (vault / "Kelp.md").write_text("Otters wrap themselves in kelp to sleep.\n")
    loci.sources.add(brain, vault, mode="pages")
    loci.sources.sync(brain)
    # An application connected by OAuth, and an identity at a sign-on provider
    client = loci.store.oauth.create_client(OAuthClient(
        "locic_app", "Agent", ("https://app.example/cb",), ("authorization_code",), "none",
        None, "",
    ))  # fmt: skip
    held = loci.store.accounts.create_token(
        user.id, name="Agent", prefix="loci_y", secret_hash="o" * 64, scope="read",
        brain_ids=None, expires_at=2e9, client_id="locic_app", resource="https://loci.example/mcp",
    )  # fmt: skip
    loci.store.oauth.create_code(OAuthCode(
        "c" * 64, "locic_app", user.id, "https://app.example/cb", "read", (brain.id,),
        "https://loci.example/mcp", "x" * 43, 2e9,
    ))  # fmt: skip
    loci.store.oauth.create_refresh("r" * 64, held.id, 2e9)
    loci.store.identities.link_identity("corp", "sub-maya", user.id, "maya@example.org")
    integrations = loci.store.integrations
    integrations.link_slack("T1", "U0MAYA", user.id, brain.id)
    secret = integrations.create_webhook_secret(brain.id, "jamie", "whsec_ab", "sealed-bytes")
    assert integrations.claim_delivery("slack", "Ev1", 1000.0, 120)
    integrations.finish_delivery("slack", "Ev1", 1001.0)
    # What OCR leaves on a chunk of a scan (tests/test_ocr.py makes it from real images).
    scanned = loci.store.list_chunks(brain.id, ids[0])[0]
    assert isinstance(loci.store, SqliteStore)  # the data directory starts on SQLite
    with loci.store.db.write() as conn:
        conn.execute(
            "UPDATE chunks SET region = '0.1,0.2,0.9,0.4', ocr_confidence = 0.87 WHERE id = ?",
            (scanned.id,),
        )
    talk = loci.store.conversations.create(brain.id, user.id, "otters")
    loci.store.conversations.add_message(talk.id, "user", "why otters?", [{"document_id": 1}])
    said = loci.store.conversations.add_message(talk.id, "assistant", "kelp", [], "simple_lookup")
    loci.store.conversations.rate(talk.id, said.id, "down", "they hold hands")  # feedback moves
    talked = loci.store.conversations.messages(talk.id)
    loci.library.wait_for(brain, [d.id for d in loci.library.documents(brain, status="processing")])
    before = {
        (q, mode): [(h.citation.document_id, round(h.score, 9)) for h in loci.searching.search(
            brain, SearchRequest(q, mode=mode, limit=5))]
        for q in QUESTIONS for mode in ("text", "vector", "hybrid")
    }  # fmt: skip
    loci.store.close()

    url = postgres_server.new_database()
    done = run_cli("migrate", "--to", url, "--blobs-in-database", "--json", home=home)
    assert done.returncode == 0, done.stderr
    copied = json.loads(done.stdout)["copied"]
    assert copied["documents"] == len(NOTES) + 3  # the pages are indexed too, and plan.md
    assert copied["document_versions"] == 1 and copied["sources"] == 2
    assert copied["source_pages"] == 1
    assert copied["chunk vectors"] == copied["chunks"] > 0
    assert copied["graph_versions"] == 1 and copied["api_tokens"] == 2
    oauth = ("oauth_clients", "oauth_codes", "oauth_refresh_tokens", "user_identities")
    assert [copied[table] for table in oauth] == [1, 1, 1, 1]
    assert copied["blobs"] >= len(NOTES)
    pushes = ("slack_identities", "webhook_secrets", "deliveries")
    assert [copied[table] for table in pushes] == [1, 1, 1]

    moved = make_service(home, embedder, url)
    try:
        same = moved.brain("default")
        assert same.id == brain.id and same.embedder_model == embedder.model_id
        after = {
            (q, mode): [(h.citation.document_id, round(h.score, 9)) for h in moved.searching.search(
                same, SearchRequest(q, mode=mode, limit=5))]
            for q in QUESTIONS for mode in ("text", "vector", "hybrid")
        }  # fmt: skip
        for key, hits in before.items():  # same documents in the same order, same scores
            assert [d for d, _ in after[key]] == [d for d, _ in hits], key
            assert [s for _, s in after[key]] == pytest.approx([s for _, s in hits], abs=1e-5)
        store = moved.store
        assert isinstance(store, PostgresStore)
        assert store.accounts.token_by_hash("h" * 64) == token
        assert store.accounts.token_by_hash("o" * 64) == held
        assert store.oauth.client("locic_app") == client
        assert store.oauth.refresh("r" * 64) is not None
        code = store.oauth.code("c" * 64)
        assert code is not None and code.brain_ids == (same.id,)
        assert store.identities.identity_user("corp", "sub-maya") == user.id
        assert store.conversations.messages(talk.id) == talked
        assert [m.feedback and m.feedback.reason for m in talked] == [None, "they hold hands"]
        [identity] = store.integrations.slack_identities()
        assert (identity.user_name, identity.brain_name) == ("Maya", "default")
        assert store.integrations.webhook_secrets() == [secret]
        assert store.integrations.sealed_webhook_secrets(same.id, "jamie") == ["sealed-bytes"]
        assert not store.integrations.claim_delivery("slack", "Ev1", 9999.0, 120)  # done stays
        ocr = {c.id: c for c in store.list_chunks(same.id, ids[0])}[scanned.id]
        assert (ocr.location.region, ocr.location.ocr_confidence) == ((0.1, 0.2, 0.9, 0.4), 0.87)
        later = store.integrations.create_webhook_secret(same.id, "jamie", "whsec_cd", "s2")
        assert later.id > secret.id
        moved_graph = BrainGraph(store, moved.blobs, moved.searching.search)
        assert moved_graph.get(same, "ana").doc.truth == "Ana grows peppers."
        assert [v.actor for v in moved_graph.history(same, "ana")] == ["t"]
        (version,) = moved.versions.list(same, planned).versions
        assert moved.versions.content(same, planned, version.number)[1].startswith(b"The otters")
        assert [s.mode for s in moved.sources.list(same)] == ["files", "pages"]
        assert moved.sources.sync(same).sources[1].unchanged == 1  # its manifest came along
        blobs = PostgresBlobStore(store.db)
        data = NOTES["kelp.txt"].encode()
        assert blobs.get(sha256_hex(data)) == data
        # New rows continue after the copied ids, and nothing was embedded again.
        extra = moved.library.add_bytes(
            same, "new.txt", b"Herons wait in shallow water."
        ).document.id
        assert extra > max(ids)
        again = run_cli("migrate", "--to", url, home=home)
        assert again.returncode != 0 and "empty" in again.stderr
    finally:
        moved.store.close()
        postgres_server.drop_database(url)


def _target_rows(store: PostgresStore) -> dict[str, int]:
    return {
        table: int(store.db.scalar(f"SELECT count(*) FROM {table}"))
        for table in ("users", "brains", "documents", "document_texts", "chunks", "jobs")
    }


def test_a_nul_kept_by_an_old_sqlite_brain_is_named_and_nothing_is_copied(
    tmp_path: Path, embedder: Embedder, postgres_server: EmbeddedPostgres
) -> None:
    home = tmp_path / "home"
    loci, brain, ids = _with_notes(home, embedder)
    note = loci.library.add_note(
        brain, "The cellar key hangs by the door.", title="Keys"
    ).document.id
    loci.library.wait_for(brain, [note])
    assert isinstance(loci.store, SqliteStore)
    with loci.store.db.write() as conn:  # as an older Loci stored it, before NUL was refused
        conn.execute("UPDATE documents SET title = ? WHERE id = ?", ("Ke\x00ys", note))
    loci.store.close()

    url = postgres_server.new_database()
    try:
        failed = run_cli("migrate", "--to", url, home=home)
        assert failed.returncode != 0
        assert "Traceback" not in failed.stderr
        assert f"cannot copy documents id {note}: column title contains a NUL" in failed.stderr
        target = PostgresStore(url, pool_size=1)
        try:
            assert set(_target_rows(target).values()) == {0}  # not one row, of any table
        finally:
            target.close()
    finally:
        postgres_server.drop_database(url)


def test_a_nul_in_a_chunk_or_a_row_postgresql_refuses_is_named(
    tmp_path: Path, embedder: Embedder, postgres_server: EmbeddedPostgres
) -> None:
    from loci.store.postgres.transfer import copy_sqlite_to_postgres

    home = tmp_path / "home"
    loci, brain, ids = _with_notes(home, embedder)
    source = loci.store
    assert isinstance(source, SqliteStore)
    chunk = source.list_chunks(brain.id, ids[1])[0]
    url = postgres_server.new_database()
    target = PostgresStore(url, pool_size=1)
    try:
        with source.db.write() as conn:
            conn.execute("UPDATE chunks SET text = text || char(0) WHERE id = ?", (chunk.id,))
        with pytest.raises(StoreError, match=f"cannot copy chunks id {chunk.id}: column text"):
            copy_sqlite_to_postgres(source, target)
        assert set(_target_rows(target).values()) == {0}
        # what no check foresees still names the row PostgreSQL refuses: SQLite let text into
        # an integer column
        with source.db.write() as conn:
            conn.execute("UPDATE chunks SET text = 'clean' WHERE id = ?", (chunk.id,))
            conn.execute("UPDATE documents SET size_bytes = 'huge' WHERE id = ?", (ids[2],))
        with pytest.raises(StoreError, match=f"cannot copy documents id {ids[2]}: .*bigint"):
            copy_sqlite_to_postgres(source, target)
        assert set(_target_rows(target).values()) == {0}
    finally:
        target.close()
        source.close()
        postgres_server.drop_database(url)
