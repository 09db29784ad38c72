"""What only the PostgreSQL store does: HNSW with the brain filter inside the scan, BM25 in SQL
equal to the SQLite store's, many workers on one queue, LISTEN/NOTIFY, per-brain languages."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from loci.errors import InvalidInput
from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store.postgres import PostgresStore
from loci.store.postgres import vectors as vector_sql
from loci.store.postgres.connection import connect
from loci.store.sqlite import SqliteStore
from tests.support.pg import EmbeddedPostgres


@pytest.fixture
def pg(postgres_server: EmbeddedPostgres) -> Iterator[PostgresStore]:
    url = postgres_server.new_database()
    store = PostgresStore(url, pool_size=6)
    yield store
    store.close()
    postgres_server.drop_database(url)


def new_doc(name: str, title: str | None = None) -> NewDocument:
    digest = name.encode().hex().ljust(64, "0")[:64]
    return NewDocument("note", name, title, None, "text/plain", 10, digest)


def chunks_of(texts: list[str], tag: str, heading: tuple[str, ...] = ()) -> list[IndexedChunk]:
    return [
        IndexedChunk(
            ChunkDraft(i, t, heading, Location(None, None, None, 0, len(t)), 1, f"{tag}-{i}"),
            f"e{tag}-{i}",
        )
        for i, t in enumerate(texts)
    ]


def unit(rows: int, dims: int, rng: np.random.Generator) -> np.ndarray:
    m = rng.standard_normal((rows, dims)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def test_a_brain_with_one_percent_of_the_chunks_gets_its_k_nearest_through_hnsw(
    pg: PostgresStore, postgres_server: EmbeddedPostgres
) -> None:
    rng = np.random.default_rng(7)
    dims = 16
    big, small = pg.ensure_brain("big"), pg.ensure_brain("small")
    for part in range(3):
        doc = pg.create_document(big.id, new_doc(f"big-{part}"), "index")
        vecs = unit(3300, dims, rng)
        items = chunks_of([f"b{i}" for i in range(3300)], f"big{part}")
        pg.replace_index(
            doc.id, items, {c.embed_hash: v for c, v in zip(items, vecs, strict=True)},
            "m", "t", None, None,
        )  # fmt: skip
    doc = pg.create_document(small.id, new_doc("small"), "index")
    mine = unit(100, dims, rng)  # 100 of 10,000 chunks: 1%
    items = chunks_of([f"s{i}" for i in range(100)], "small")
    pg.replace_index(
        doc.id, items, {c.embed_hash: v for c, v in zip(items, mine, strict=True)},
        "m", "t", None, None,
    )  # fmt: skip
    pg.set_brain_embedder(small.id, "m", dims)  # builds the HNSW index for 16 dimensions
    ids = {c.id: i for i, c in enumerate(pg.list_chunks(small.id, doc.id))}
    # Leave the planner only the HNSW path, the one where a filter could starve the results:
    # without iterative scans it stops after ef_search (40) candidates, ~0.4 of them ours.
    with connect(postgres_server.owner_url(pg.db.url)) as owner:
        database = owner.execute("SELECT current_database() AS name").fetchall()[0]["name"]
        owner.execute("DROP INDEX chunks_brain")
        owner.execute(f"ALTER DATABASE {database} SET enable_seqscan = off")
        owner.execute("ANALYZE chunks")
    pg.db.pool.close()
    store = PostgresStore(pg.db.url, pool_size=2)  # new sessions take the database setting
    try:
        query = unit(1, dims, rng)[0]
        with store.db.tx(small.id) as cur:
            cur.execute(*vector_sql.scan_settings(10))
            cur.execute(
                "EXPLAIN " + vector_sql.nearest_sql(dims, ""),
                {"q": query, "brain": small.id, "model": "m", "limit": 10},
            )
            plan = "\n".join(str(r["QUERY PLAN"]) for r in cur.fetchall())
        assert f"chunks_embedding_{dims}" in plan, plan
        for _ in range(5):
            query = unit(1, dims, rng)[0]
            hits = store.vector_search(small.id, "m", query, 10, SearchFilters())
            assert len(hits) == 10
            assert all(chunk_id in ids for chunk_id, _ in hits)
            exact = set(np.argsort(-(mine @ query))[:10].tolist())
            found = {ids[chunk_id] for chunk_id, _ in hits}
            assert len(found & exact) >= 9  # HNSW is approximate; recall@10 >= 0.9
            sims = [s for _, s in hits]
            assert sims == sorted(sims, reverse=True)
            assert sims[0] == pytest.approx(float(np.max(mine @ query)), abs=1e-5)
    finally:
        store.close()


CORPUS = {
    "a": [
        ("Otters", ["Sea otters eat urchins and protect kelp forests.", "Otters hold hands."]),
        ("Boilers", ["Error F22: the boiler's pressure is low, below 0.8 bar.", "Refill it."]),
        ("Bread", ["A long cold proof makes sourdough bread taste better. Bread! Bread."]),
    ],
    "b": [
        ("Kelp", ["Kelp grows fast in cold water; urchins graze it."]),
        ("Café", ["Café crème and naïve résumé: diacritics fold away."]),
    ],
}


def test_bm25_scores_equal_the_sqlite_stores(pg: PostgresStore, tmp_path: Path) -> None:
    lite = SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1)
    try:
        for store in (lite, pg):
            for brain_name, docs in CORPUS.items():
                brain = store.ensure_brain(brain_name)
                for title, texts in docs:
                    doc = store.create_document(brain.id, new_doc(title, title), "index")
                    items = chunks_of(texts, title, ("Notes", title))
                    store.replace_index(doc.id, items, {}, "m", " ".join(texts), title, None)
        for brain_name in CORPUS:
            a, b = lite.get_brain(brain_name), pg.get_brain(brain_name)
            lite.search_index.lexical_index(
                a.id
            )  # build now: brain-own statistics, as PostgreSQL keeps
            for terms in (
                ["otters", "kelp"], ["urchins"], ["bread"], ["boiler", "pressure", "f22"],
                ["cafe", "resume"], ["cold", "water", "cold"], ["absent"],
                ["boiler's", "low"], ["sourdough bread", "kelp"],  # terms of several tokens
            ):  # fmt: skip
                want = lite.text_search(a.id, terms, 10, SearchFilters())
                got = pg.text_search(b.id, terms, 10, SearchFilters())
                text_of = {}
                for store, hits in ((lite, want), (pg, got)):
                    found = store.chunks_with_documents([i for i, _ in hits])
                    text_of[id(store)] = [found[i][0].text for i, _ in hits]
                assert text_of[id(pg)] == text_of[id(lite)], terms
                assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
                if want:  # the in-process index ranked these (its k1, b), not FTS5's bm25()
                    fts = lite.search_index.fts_search(a.id, terms, 10, SearchFilters())
                    assert [s for _, s in fts] != pytest.approx([s for _, s in want], rel=1e-3)
    finally:
        lite.close()


def test_many_claimers_take_each_job_exactly_once(pg: PostgresStore) -> None:
    brain = pg.ensure_brain("a")
    for i in range(120):
        pg.create_document(brain.id, new_doc(f"doc-{i}"), "index")
    taken: list[int] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        while jobs := pg.claim_jobs(name, 30, limit=3):
            for job in jobs:
                assert pg.finish_job(job, name)
            with lock:
                taken.extend(job.id for job in jobs)

    threads = [threading.Thread(target=worker, args=(f"w{n}",)) for n in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(taken) == 120 and len(set(taken)) == 120
    assert pg.pending_jobs() == 0


def test_an_idle_worker_wakes_when_a_job_is_queued(pg: PostgresStore) -> None:
    brain = pg.ensure_brain("a")
    assert pg.wait_for_jobs(0.2) is False  # nothing queued: times out
    woke: list[float] = []
    waiting = threading.Event()

    def wait() -> None:
        start = time.monotonic()
        waiting.set()
        if pg.wait_for_jobs(10):
            woke.append(time.monotonic() - start)

    waiter = threading.Thread(target=wait)
    waiter.start()
    # LISTEN was set up by the first wait above: a job queued from here on, even before the
    # waiter is back in its wait, is a notification it is woken by.
    assert waiting.wait(10)
    pg.create_document(brain.id, new_doc("new"), "index")
    waiter.join(10)
    assert woke and woke[0] < 3


def test_expired_leases_are_reaped_and_fenced(pg: PostgresStore) -> None:
    brain = pg.ensure_brain("a")
    pg.create_document(brain.id, new_doc("x"), "index")
    [job] = pg.claim_jobs("dead", lease_s=0.1)
    time.sleep(0.25)
    assert pg.jobs.reap() == 1
    assert [j.status for j in pg.list_jobs(brain.id)] == ["queued"]
    [again] = pg.claim_jobs("alive", lease_s=30)
    assert again.attempts == 2
    assert pg.finish_job(job, "dead") is False and pg.heartbeat(job, "dead", 30) is False
    assert pg.finish_job(again, "alive") is True


def test_the_text_language_is_a_brain_setting(pg: PostgresStore) -> None:
    fr, en = pg.ensure_brain("fr"), pg.ensure_brain("en")
    for brain in (fr, en):
        doc = pg.create_document(brain.id, new_doc(f"repas-{brain.name}"), "index")
        items = chunks_of(["Les chevaux mangeaient chaque matin."], f"r{brain.name}")
        pg.replace_index(doc.id, items, {}, "m", "t", "Repas", None)
    assert pg.brain_language(fr.id) == "auto"  # passages with no detected language: English
    assert pg.text_search(fr.id, ["cheval"], 5, SearchFilters()) == []  # Porter: no match
    pg.set_brain_language(fr.id, "french")  # re-counts the brain's chunks with French rules
    assert pg.brain_language(fr.id) == "french"
    assert len(pg.text_search(fr.id, ["cheval"], 5, SearchFilters())) == 1
    assert len(pg.text_search(fr.id, ["mangeront"], 5, SearchFilters())) == 1
    assert pg.text_search(en.id, ["cheval"], 5, SearchFilters()) == []  # others unchanged
    with pytest.raises(InvalidInput, match="klingon"):
        pg.set_brain_language(fr.id, "klingon")


def test_row_level_security_hides_other_brains_even_without_the_filter(
    pg: PostgresStore,
) -> None:
    a, b = pg.ensure_brain("a"), pg.ensure_brain("b")
    for brain in (a, b):
        doc = pg.create_document(brain.id, new_doc(f"secret-{brain.name}"), "index")
        items = chunks_of([f"secret plans of {brain.name}"], brain.name)
        vec = {items[0].embed_hash: unit(1, 4, np.random.default_rng(brain.id))[0]}
        pg.replace_index(doc.id, items, vec, "m", "secret", None, None)
    with pg.db.tx() as cur:  # the application's role owns nothing and bypasses nothing
        cur.execute(
            "SELECT r.rolsuper OR r.rolbypassrls AS bypass, t.tableowner = current_user AS owns"
            " FROM pg_roles r, pg_tables t WHERE r.rolname = current_user"
            " AND t.tablename = 'documents'"
        )
        assert cur.fetchall() == [{"bypass": False, "owns": False}]
    # Queries that forget the brain condition, issued in brain A's transaction: A's rows only.
    for table in ("documents", "chunks", "chunk_terms", "jobs", "document_texts", "brains"):
        rows = pg.db.rows(f"SELECT * FROM {table}", (), a.id)
        assert rows and all(r.get("brain_id", r.get("id")) == a.id for r in rows), table
    everything = pg.db.rows("SELECT id FROM documents", (), "*")
    assert len(everything) == 2  # the system scope (the worker's claims) sees both
    # Nor can brain A's transaction write into brain B.
    with pytest.raises(psycopg.errors.InsufficientPrivilege), pg.db.tx(a.id) as cur:
        cur.execute("INSERT INTO conversations(brain_id, title) VALUES (%s, 'x')", (b.id,))
    # A connection that names no brain at all sees nothing.
    with pg.db.pool.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM chunks").fetchall() == [{"n": 0}]
        assert conn.execute("SELECT count(*) AS n FROM brains").fetchall() == [{"n": 0}]


def test_integration_rows_follow_the_brain_policy_and_deliveries_are_system_only(
    pg: PostgresStore,
) -> None:
    a, b = pg.ensure_brain("a"), pg.ensure_brain("b")
    user = pg.accounts.create_user("ana")
    for brain in (a, b):
        pg.integrations.create_webhook_secret(brain.id, "jamie", f"whsec_{brain.name}", "sealed")
        pg.integrations.link_slack("T1", f"U{brain.name.upper()}", user.id, brain.id)
    assert pg.integrations.claim_delivery("slack", "Ev1", 1000.0, 120)
    # A brain's webhook reads its own secrets, in its own scope.
    assert [s.prefix for s in pg.integrations.webhook_secrets(a.id)] == ["whsec_a"]
    assert pg.integrations.sealed_webhook_secrets(b.id, "jamie") == ["sealed"]
    # Queries that forget the brain condition, in brain A's transaction: A's rows only.
    for table in ("webhook_secrets", "slack_identities"):
        rows = pg.db.rows(f"SELECT * FROM {table}", (), a.id)
        assert [r["brain_id"] for r in rows] == [a.id], table
    with pytest.raises(psycopg.errors.InsufficientPrivilege), pg.db.tx(a.id) as cur:
        cur.execute(
            "INSERT INTO webhook_secrets(brain_id, provider, prefix, sealed_secret)"
            " VALUES (%s, 'jamie', 'whsec_x', 'forged')",
            (b.id,),
        )
    # Deliveries are no brain's: a brain's transaction neither sees nor claims one.
    assert pg.db.rows("SELECT * FROM deliveries", (), a.id) == []
    with pytest.raises(psycopg.errors.InsufficientPrivilege), pg.db.tx(a.id) as cur:
        cur.execute(
            "INSERT INTO deliveries(source, delivery_id, claimed_at) VALUES ('slack', 'Ev2', 1)"
        )
    assert len(pg.db.rows("SELECT * FROM deliveries", (), "*")) == 1
    # Re-linking moves an identity between brains; deleting a brain takes its rows along.
    pg.integrations.link_slack("T1", "UA", user.id, b.id)
    assert {i.slack_user_id: i.brain_name for i in pg.integrations.slack_identities()} == {
        "UA": "b",
        "UB": "b",
    }
    pg.delete_brain(b.id)
    assert pg.integrations.slack_identities() == []
    assert [s.brain_name for s in pg.integrations.webhook_secrets()] == ["a"]


def test_settings_choose_the_backend_and_refuse_what_cannot_work(tmp_path: Path) -> None:
    from loci.app import build_blobs, build_store
    from loci.config import Settings

    with pytest.raises(ValueError, match="postgresql://"):
        Settings(home=tmp_path, database_url="mysql://db/loci")
    lite = build_store(Settings(home=tmp_path))
    try:
        assert isinstance(lite, SqliteStore)
        with pytest.raises(InvalidInput, match="LOCI_DATABASE_URL"):
            build_blobs(Settings(home=tmp_path, blobs="database"), lite)
    finally:
        lite.close()


def test_embeddings_past_2000_dimensions_use_a_halfvec_index(pg: PostgresStore) -> None:
    rng = np.random.default_rng(3)
    dims = 3072  # OpenAI's text-embedding-3-large
    brain = pg.ensure_brain("large")
    pg.set_brain_embedder(brain.id, "te3-large", dims)
    with pg.db.tx() as cur:
        cur.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (f"chunks_embedding_{dims}",)
        )
        [row] = cur.fetchall()
    assert "halfvec(3072)" in row["indexdef"] and "halfvec_cosine_ops" in row["indexdef"]
    doc = pg.create_document(brain.id, new_doc("big-vectors"), "index")
    vecs = unit(50, dims, rng)
    items = chunks_of([f"v{i}" for i in range(50)], "large")
    pg.replace_index(
        doc.id, items, {c.embed_hash: v for c, v in zip(items, vecs, strict=True)},
        "te3-large", "t", None, None,
    )  # fmt: skip
    ids = [c.id for c in pg.list_chunks(brain.id, doc.id)]
    hits = pg.vector_search(brain.id, "te3-large", vecs[17], 3, SearchFilters())
    assert hits[0][0] == ids[17] and hits[0][1] == pytest.approx(1.0, abs=1e-3)  # 16-bit floats
    stored = pg.cached_vectors("te3-large", [items[17].embed_hash])[items[17].embed_hash]
    assert np.array_equal(stored, vecs[17])  # stored at full precision; only the index is half
