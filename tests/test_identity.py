"""Ids are never handed out twice, so nothing that holds one — a token limited to a brain, a
`file:27` pointer, a saved citation — silently comes to mean a newcomer.

Deleting the newest brain used to free its id for the next brain on SQLite (a bare `INTEGER
PRIMARY KEY` takes the largest id in use plus one): a token limited to the deleted brain became a
token for someone else's. Deleting a brain now also takes it out of every token, member list and
integration link, and a token left with no brain stops working. `doctor` reports pointers at
documents that are gone. The migration that made SQLite's keys AUTOINCREMENT is tested on a
database of the schema before it, holding rows.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from loci.auth.accounts import Accounts
from loci.auth.secrets import hash_secret
from loci.errors import Unauthenticated
from loci.graph.doctor import Doctor
from loci.models import NewDocument, SearchFilters
from loci.service import Loci
from loci.store.postgres import PostgresStore
from loci.store.postgres.connection import connect
from loci.store.postgres.migrations import MIGRATIONS as POSTGRES_MIGRATIONS
from loci.store.postgres.migrations import migrate as migrate_postgres
from loci.store.postgres.transfer import copy_sqlite_to_postgres
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.connection import Database
from loci.store.sqlite.migrations import migrate
from tests.support.live_server import LiveServer
from tests.support.pg import EmbeddedPostgres

pytestmark = [pytest.mark.both_backends, pytest.mark.attack]  # attack: `make attack`


def _upload(server: LiveServer, token: str, brain: str, name: str, text: str) -> int:
    with server.client(token) as api:
        sent = api.post(
            f"/brains/{brain}/files", files={"files": (name, text.encode(), "text/markdown")}
        )
    assert sent.status_code == 202, sent.text
    document_id: int = sent.json()["results"][0]["document"]["id"]
    return document_id


def test_a_token_for_a_deleted_brain_never_reaches_the_next_one(
    backend: str, server: LiveServer
) -> None:
    accounts = server.accounts
    _, alice = accounts.add_user("alice")
    bob, bob_token = accounts.add_user("bob")
    with server.client(bob_token.secret) as api:
        assert api.post("/brains", json={"name": "notes"}).status_code == 201
        # The newest brain: the one whose id SQLite used to give the next brain made.
        assert api.post("/brains", json={"name": "scratch"}).status_code == 201
        scratch = api.get("/brains/scratch").json()["id"]
        notes = api.get("/brains/notes").json()["id"]
    only_scratch = accounts.issue_token(bob, name="scratch only", brain_ids=[scratch]).secret
    both = accounts.issue_token(bob, name="both", brain_ids=[notes, scratch]).secret
    with server.client(only_scratch) as api:
        assert [b["name"] for b in api.get("/brains").json()] == ["scratch"]

    with server.client(bob_token.secret) as api:
        assert api.delete("/brains/scratch").status_code == 204
    # Alice's brain, which every user of the workspace may read, holds a private ledger.
    with server.client(alice.secret) as api:
        made = api.post("/brains", json={"name": "ledger", "visibility": "workspace"})
        assert made.status_code == 201, made.text
        ledger = made.json()["id"]
    secret_file = _upload(server, alice.secret, "ledger", "salaries.md", "# Salaries\n\nAll.\n")
    assert ledger != scratch

    with server.client(only_scratch) as api:  # its whole scope is gone: it stops working
        for path in ("/brains", "/brains/ledger", f"/brains/ledger/files/{secret_file}"):
            answer = api.get(path)
            assert answer.status_code == 401, (path, answer.status_code, answer.text)
    with server.client(both) as api:  # still a token for `notes`, and for nothing else
        assert [b["name"] for b in api.get("/brains").json()] == ["notes"]
        assert api.get("/brains/ledger").status_code == 404
        assert api.get(f"/brains/ledger/files/{secret_file}").status_code == 404
        assert api.get("/brains/ledger/files").status_code == 404
    scopes = {t.name: t.brain_ids for t in accounts.tokens(bob)}
    assert scopes["both"] == (notes,) and scopes["scratch only"] == ()


def test_deleting_a_brain_takes_it_out_of_tokens_members_and_links(
    backend: str, loci: Loci, server: LiveServer
) -> None:
    store = loci.store
    accounts = Accounts(store)
    alice, alice_token = accounts.add_user("alice")
    bob, _ = accounts.add_user("bob")
    team = store.create_brain("team", "restricted", alice.id)
    kept = store.create_brain("kept", "restricted", alice.id)
    store.accounts.set_member(team.id, bob.id, "editor")
    store.integrations.link_slack("T1", "U-bob", bob.id, team.id)
    store.integrations.link_slack("T1", "U-alice", alice.id, kept.id)
    store.integrations.create_webhook_secret(team.id, "github", "whsec_ab", "sealed")
    limited = accounts.issue_token(bob, name="team", scope="read", brain_ids=[team.id])
    session = accounts.open_session(limited.secret)
    assert accounts.session(session.secret)[0].user.id == bob.id

    with server.client(alice_token.secret) as api:
        assert api.delete("/brains/team").status_code == 204

    assert store.accounts.members(team.id) == []
    assert store.accounts.roles(bob.id) == {}
    assert [(s.slack_user_id, s.brain_id) for s in store.integrations.slack_identities()] == [
        ("U-alice", kept.id)
    ]
    assert store.integrations.webhook_secrets(team.id) == []
    token = store.accounts.get_token(limited.token.id)
    assert token.brain_ids == () and token.revoked_at is not None
    with pytest.raises(Unauthenticated):  # its browser session ended with it
        accounts.session(session.secret)
    assert store.accounts.session_by_hash(hash_secret(session.secret)) is None
    with server.client(limited.secret) as api:
        assert api.get("/brains").status_code == 401


def test_ids_of_deleted_rows_are_never_handed_out_again(backend: str, loci: Loci) -> None:
    store = loci.store
    accounts = Accounts(store)

    def fill(name: str) -> dict[str, int]:
        """A brain with a file, a graph page, a conversation and a queued job; the ids."""
        brain = store.create_brain(name, "restricted", None)
        document = loci.library.add_note(brain, f"Notes of {name}.").document
        page = loci.graph.create(brain, actor="t", doc_type="concept", title=f"Page {name}")
        loci.graph.set_fields(brain, page.id, ["status=draft"], actor="t")  # a version
        conversation = store.conversations.create(brain.id, None, "chat")
        message = store.conversations.add_message(conversation.id, "user", "hello?")
        user, issued = accounts.add_user(f"user-{name}")
        [version] = store.graph.versions(brain.id, page.id)
        return {
            "brain": brain.id,
            "document": document.id,
            "page's document": int(page.document_id or 0),
            "conversation": conversation.id,
            "message": message.id,
            "user": user.id,
            "token": issued.token.id,
            "job": max(job.id for job in store.list_jobs(brain.id, 100)),
            "graph version": version.id,
        }

    first = fill("first")
    # Delete the newest of everything: the rows whose ids a bare rowid key would give again.
    store.delete_brain(first["brain"])
    store.accounts.delete_user(first["user"])
    second = fill("second")
    reused = {what: i for what, i in second.items() if i <= first[what]}
    assert reused == {}, f"ids handed out again: {reused} (first: {first})"

    # A document deleted on its own, too.
    brain = store.get_brain_by_id(second["brain"])
    loci.library.remove(brain, second["document"])
    again = loci.library.add_note(brain, "Another note entirely.").document
    assert again.id > second["document"]


def test_doctor_reports_pointers_at_deleted_documents(backend: str, loci: Loci) -> None:
    brain = loci.brain("default")
    graph = loci.graph
    cited = loci.library.add_note(brain, "The lease runs to May.").document.id
    timeline = loci.library.add_note(brain, "The beds were planted.").document.id
    answered = loci.library.add_note(brain, "The rent is due monthly.").document.id
    graph.create(brain, actor="t", doc_type="person", title="Ana", text="Ana rents the plot.")
    graph.set_fields(brain, "ana", [f"sources=file:{cited}"], actor="t")
    graph.append_timeline(
        brain, "ana", "Planted the beds.", actor="t", at="2026-04-02", source=f"file:{timeline}"
    )
    conversation = loci.store.conversations.create(brain.id, None, "rent")
    loci.store.conversations.add_message(conversation.id, "user", "When is rent due?")
    answer = loci.store.conversations.add_message(
        conversation.id,
        "assistant",
        "Monthly [1].",
        citations=[{"number": 1, "document_id": answered, "name": "rent", "snippet": "monthly"}],
    )
    saved = loci.answers.save_answer(brain, conversation.id, answer.id).page
    doctor = Doctor(graph, lambda _: None)

    def missing() -> set[tuple[str, str]]:
        checkup = doctor.check_brain(brain, roundtrip=False)
        return {
            (f.document, f.message.split("'")[1])
            for f in checkup.findings
            if f.kind == "missing-source"
        }

    assert missing() == set()
    for document_id in (cited, timeline, answered):
        loci.library.remove(brain, document_id)
    newcomer = loci.library.add_note(brain, "Something else altogether.").document.id
    assert newcomer not in (cited, timeline, answered)
    assert missing() == {
        ("ana", f"file:{cited}"),
        ("ana", f"file:{timeline}"),
        (saved.id, f"note:{answered}"),
    }
    checkup = doctor.check_brain(brain, roundtrip=False)
    finding = next(f for f in checkup.findings if f.kind == "missing-source")
    assert finding.severity == "error" and not checkup.ok
    assert "no longer has" in finding.message


# The migration itself, on a SQLite database of the schema before it -------------------------


def test_migration_keeps_every_row_and_stops_reusing_ids(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    db = Database(path)
    assert migrate(db, 14) == 14
    with db.write() as conn:
        conn.execute(
            "INSERT INTO users(id, name, created_at) VALUES (1, 'ann', '2026-01-01T00:00:00.000Z')"
        )
        # Brain 2 was made after ann's token for brain 2 was: the token was for a brain that
        # was deleted, whose id SQLite gave again.
        conn.execute(
            "INSERT INTO brains(id, name, created_at) VALUES"
            " (1, 'keep', '2026-01-01T00:00:00.000Z'), (2, 'newer', '2026-03-01T00:00:00.000Z')"
        )
        conn.execute("INSERT INTO brain_members(brain_id, user_id, role) VALUES (1, 1, 'owner')")
        conn.execute(
            "INSERT INTO api_tokens(id, user_id, name, prefix, secret_hash, scope, brain_ids,"
            " created_at) VALUES"
            " (1, 1, 'all', 'p', 'h1', 'write', NULL, '2026-02-01T00:00:00.000Z'),"
            " (2, 1, 'keep+gone', 'p', 'h2', 'read', '[1, 7]', '2026-02-01T00:00:00.000Z'),"
            " (3, 1, 'old brain 2', 'p', 'h3', 'read', '[2]', '2026-02-01T00:00:00.000Z')"
        )
        for doc_id, brain_id in ((1, 1), (2, 1), (3, 2)):
            conn.execute(
                "INSERT INTO documents(id, brain_id, kind, name, size_bytes, content_hash,"
                " status) VALUES (?, ?, 'file', ?, 5, ?, 'ready')",
                (doc_id, brain_id, f"d{doc_id}.txt", f"{doc_id:064d}"),
            )
            conn.execute(
                "INSERT INTO document_texts(document_id, text) VALUES (?, 'walrus notes')",
                (doc_id,),
            )
        conn.execute(
            "INSERT INTO chunks(id, brain_id, document_id, idx, text, char_start, char_end,"
            " token_count, content_hash, embed_hash) VALUES"
            " (1, 1, 1, 0, 'walrus notes', 0, 12, 2, 'c', 'e')"
        )
        conn.execute(
            "INSERT INTO chunks_fts(rowid, brain, title, headings, body)"
            " VALUES (1, 'b1', 'd1.txt', '', 'walrus notes')"
        )
        conn.execute("INSERT INTO jobs(id, brain_id, document_id, kind) VALUES (1, 1, 2, 'index')")
        conn.execute("INSERT INTO conversations(id, brain_id, title) VALUES (1, 1, 'chat')")
        conn.execute(
            "INSERT INTO messages(id, conversation_id, role, content) VALUES"
            " (1, 1, 'user', 'q'), (2, 1, 'assistant', 'a')"
        )
    db.close()

    store = SqliteStore(path)  # migrates
    assert store.db.rows("PRAGMA foreign_key_check") == []
    assert store.db.scalar("PRAGMA foreign_keys") == 1
    create = store.db.scalar("SELECT sql FROM sqlite_schema WHERE name = 'documents'")
    assert "AUTOINCREMENT" in create
    # every row is there, the search index still finds its chunk
    assert {d.id for d in store.list_documents(1)} == {1, 2}
    assert store.document_text(1, 1) == "walrus notes"
    hits = store.text_search(1, ["walrus"], 10, SearchFilters())
    assert [chunk_id for chunk_id, _ in hits] == [1]
    assert [m.content for m in store.conversations.messages(1)] == ["q", "a"]
    assert [m.user.name for m in store.accounts.members(1)] == ["ann"]
    assert store.list_jobs(1, 10)[0].document_id == 2
    # token scopes: a brain that is gone, or newer than the token, is dropped
    tokens = {t.name: t for t in store.accounts.list_tokens(1)}
    assert tokens["all"].brain_ids is None and tokens["all"].revoked_at is None
    assert tokens["keep+gone"].brain_ids == (1,) and tokens["keep+gone"].revoked_at is None
    assert tokens["old brain 2"].brain_ids == () and tokens["old brain 2"].revoked_at is not None

    # the newest rows deleted, the next ones get new ids
    assert store.delete_document(1, 2)
    added = store.create_document(
        1, NewDocument("file", "new.txt", None, None, "text/plain", 3, "f" * 64), "index"
    )
    assert added.id == 4
    store.delete_brain(2)
    assert store.create_brain("another", "restricted", None).id == 3
    # and the foreign keys still cascade into the rebuilt tables
    store.delete_brain(1)
    for table in ("documents", "document_texts", "chunks", "jobs", "conversations", "messages"):
        assert store.db.scalar(f"SELECT count(*) FROM {table}") == 0, table
    assert store.db.scalar("SELECT count(*) FROM brain_members") == 0
    store.close()


def test_a_copy_into_postgresql_never_hands_out_an_id_sqlite_gave(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    source = SqliteStore(tmp_path / "loci.db")
    kept = source.create_brain("kept", "restricted", None)
    gone = source.create_brain("gone", "restricted", None)
    new = NewDocument("file", "a.txt", None, None, "text/plain", 3, "a" * 64)
    first = source.create_document(kept.id, new, "index")
    last = source.create_document(kept.id, replace(new, content_hash="b" * 64), "index")
    source.delete_brain(gone.id)
    assert source.delete_document(kept.id, last.id)

    url = postgres_server.new_database()
    target = PostgresStore(url, pool_size=2)
    try:
        copy_sqlite_to_postgres(source, target)
        assert [d.id for d in target.list_documents(kept.id)] == [first.id]
        assert target.create_brain("next", "restricted", None).id > gone.id
        again = target.create_document(kept.id, replace(new, content_hash="c" * 64), "index")
        assert again.id > last.id
    finally:
        target.close()
        source.close()
        postgres_server.drop_database(url)


def test_postgresql_migration_cleans_token_scopes(postgres_server: EmbeddedPostgres) -> None:
    """Migration 15 on PostgreSQL, run again over rows as an older database would hold them."""
    url = postgres_server.new_database()
    try:
        with connect(postgres_server.owner_url(url)) as conn:
            conn.execute("SELECT set_config('loci.brain_id', '*', false)")

            def one(sql: str, params: tuple[object, ...] = ()) -> int:
                return int(conn.execute(sql + " RETURNING id", params).fetchall()[0]["id"])

            ann = one("INSERT INTO users(name) VALUES ('ann')")
            keep = one(
                "INSERT INTO brains(name, created_at) VALUES ('keep', '2026-01-01T00:00:00.000Z')"
            )
            newer = one(
                "INSERT INTO brains(name, created_at) VALUES ('newer', '2026-03-01T00:00:00.000Z')"
            )
            tokens = {}
            for name, scope in (("all", None), ("keep+gone", [keep, 999]), ("old", [newer])):
                tokens[name] = one(
                    "INSERT INTO api_tokens(user_id, name, prefix, secret_hash, scope, brain_ids,"
                    " created_at) VALUES (%s, %s, 'p', %s, 'read', %s, '2026-02-01T00:00:00.000Z')",
                    (ann, name, name * 8, None if scope is None else json.dumps(scope)),
                )
            conn.execute(
                "INSERT INTO web_sessions(secret_hash, user_id, token_id, csrf, expires_at)"
                " VALUES ('s', %s, %s, 'c', 9e12)",
                (ann, tokens["old"]),
            )
            conn.execute("DELETE FROM schema_migrations WHERE version = 15")
            assert migrate_postgres(conn) == len(POSTGRES_MIGRATIONS)
        store = PostgresStore(url, pool_size=1)
        try:
            found = {t.name: t for t in store.accounts.list_tokens(ann)}
            assert found["all"].brain_ids is None and found["all"].revoked_at is None
            assert found["keep+gone"].brain_ids == (keep,)
            assert found["keep+gone"].revoked_at is None
            assert found["old"].brain_ids == () and found["old"].revoked_at is not None
            assert store.accounts.session_by_hash("s") is None
        finally:
            store.close()
    finally:
        postgres_server.drop_database(url)
