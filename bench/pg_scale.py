"""PostgreSQL at a million chunks: hybrid query latency, HNSW recall against exact search, index
build time and database size (issue 7's scale benchmark; figures in docs/benchmarks-journal.md).

    python bench/pg_scale.py --url postgresql://postgres@/bench?host=… --chunks 1000000

The corpus is synthetic: 384-dimensional unit vectors with the structure of real embeddings — a
48-dimensional latent mixture of 2,000 clusters mapped linearly into 384 dimensions plus a little
noise, so a query's neighbours are graded (cosine ~0.95 for the best, ~0.85 at the 10th, ~0.45 at
the 100th; random pairs ~0 ± 0.15), not the near-ties of isotropic random vectors, on which HNSW
recall says little about real data — and
chunk texts of 60 words from a Zipf-distributed 30,000-word vocabulary (BM25's postings get the
long tail and the heavy common terms of real text). It is bulk-loaded with COPY as the schema
owner — chunks, postings and term statistics exactly as the store writes them — and the HNSW index
is built afterwards, as `loci migrate` does. Queries then go through `PostgresStore` as the
application's role (row-level security on): each is a perturbed chunk vector plus five of that
chunk's words. "hybrid" is both legs (top 100 each), each passage's document scored whole
(`Store.document_text_scores`, the text leg's document share), fusion and the top-10 rows,
without the query embedding (backend-independent: ~5 ms with the local model); "documents" is
that document step alone. Recall@10 compares the vector leg with exact cosine over all vectors
in NumPy.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from loci.models import SearchFilters
from loci.search.document_words import in_document
from loci.search.engine import RankingParams
from loci.search.fusion import fuse
from loci.store.postgres import PostgresStore
from loci.store.postgres.connection import connect
from loci.store.postgres.lexical import impact
from loci.store.postgres.migrations import grant, migrate
from loci.store.stemming import ENGLISH, analyze

MODEL = "synthetic-384"
CHUNKS_PER_DOC = 20
WORDS_PER_CHUNK = 60
VOCABULARY = 30_000
CENTRES = 2_000
BATCH = 20_000


def words(n: int) -> list[str]:
    """Pronounceable distinct words (stable under the Porter stemmer's folding)."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aiou"]
    out: list[str] = []
    for i in range(n):
        parts, x = [], i
        for _ in range(3):
            parts.append(syllables[x % len(syllables)])
            x //= len(syllables)
        out.append("".join(parts) + "x")
    return out


LATENT = 48


class Embeddings:
    """The synthetic embedding space: latent clusters, one fixed linear map, a little noise."""

    def __init__(self, rng: np.random.Generator, dims: int) -> None:
        self.rng = rng
        self.map = (rng.standard_normal((LATENT, dims)) / np.sqrt(LATENT)).astype(np.float32)
        self.centres = rng.standard_normal((CENTRES, LATENT)).astype(np.float32)

    def embed(self, latent: np.ndarray) -> np.ndarray:
        v = latent @ self.map
        v += 0.03 * self.rng.standard_normal(v.shape).astype(np.float32)
        return np.asarray(v / np.linalg.norm(v, axis=-1, keepdims=True), dtype=np.float32)

    def sample(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        picks = self.rng.integers(0, CENTRES, n)
        latent = self.centres[picks] + 0.6 * self.rng.standard_normal((n, LATENT)).astype(
            np.float32
        )
        return self.embed(latent), latent


def load(
    owner_url: str, total: int, dims: int, seed: int
) -> tuple[np.ndarray, np.ndarray, Embeddings, list[list[str]]]:
    rng = np.random.default_rng(seed)
    space = Embeddings(np.random.default_rng(seed + 100), dims)
    latents = np.zeros((total, LATENT), np.float32)
    vocab = words(VOCABULARY)
    zipf = 1.0 / np.arange(1, VOCABULARY + 1) ** 1.07
    zipf /= zipf.sum()
    all_vectors = np.zeros((total, dims), np.float32)
    sample_words: list[list[str]] = []
    df: Counter[str] = Counter()
    document_df: Counter[str] = Counter()
    total_length = 0
    document_length = 0
    with connect(owner_url) as conn:
        migrate(conn)
        register_vector(conn)
        # Bulk load: the rows are consistent by construction, so skip the per-row foreign-key
        # triggers (superuser only); the application's writes keep them.
        conn.execute("SET session_replication_role = replica")
        # Postings are indexed after the load, as a bulk loader would (timed below).
        conn.execute("DROP INDEX chunk_terms_impact, chunk_terms_chunk")
        conn.execute("ALTER TABLE document_terms DROP CONSTRAINT document_terms_pkey")
        brain = conn.execute(
            "INSERT INTO brains(name, embedder_model, embedder_dims) VALUES ('scale', %s, %s)"
            " RETURNING id",
            (MODEL, dims),
        ).fetchall()[0]["id"]
        started = time.perf_counter()
        for start in range(0, total, BATCH):
            n = min(BATCH, total - start)
            vecs, latent = space.sample(n)
            all_vectors[start : start + n] = vecs
            latents[start : start + n] = latent
            picks = rng.choice(VOCABULARY, size=(n, WORDS_PER_CHUNK), p=zipf)
            with conn.transaction():
                first_doc = start // CHUNKS_PER_DOC + 1
                docs = range(first_doc, (start + n - 1) // CHUNKS_PER_DOC + 2)
                with conn.cursor().copy(
                    "COPY documents (id, brain_id, kind, name, title, size_bytes, content_hash,"
                    " status, chunk_count) FROM STDIN"
                ) as copy:
                    for d in docs:
                        if (d - 1) * CHUNKS_PER_DOC >= start:
                            copy.write_row(
                                (d, brain, "note", f"doc-{d}", f"Document {d}", 1000,
                                 f"{d:064x}", "ready", CHUNKS_PER_DOC)
                            )  # fmt: skip
                chunk_rows = []
                posting_rows = []
                document_rows = []  # (document, lex_length) and its postings, as the store writes
                whole: Counter[str] = Counter()
                for i in range(n):
                    chunk_id = start + i + 1
                    text_words = [vocab[w] for w in picks[i]]
                    if len(sample_words) < total and rng.random() < 0.001:
                        sample_words.append(text_words)
                    document = (chunk_id - 1) // CHUNKS_PER_DOC + 1
                    title = f"Document {document}"
                    counts: Counter[str] = Counter()
                    for token in analyze(title, ENGLISH):
                        counts[token] += 2
                    body = analyze(" ".join(text_words), ENGLISH)
                    counts.update(body)
                    length = 1 + len(analyze(title, ENGLISH)) + len(body)
                    total_length += length
                    df.update(counts.keys())
                    chunk_rows.append(
                        (chunk_id, brain, document, (chunk_id - 1) % CHUNKS_PER_DOC,
                         " ".join(text_words), "[]", 0, 400, WORDS_PER_CHUNK, f"c{chunk_id}",
                         f"e{chunk_id}", MODEL, dims, vecs[i], length)
                    )  # fmt: skip
                    mean = total_length / (start + i + 1)
                    posting_rows += [
                        (brain, t, chunk_id, tf, length, impact(tf, length, mean))
                        for t, tf in counts.items()
                    ]
                    # A document: its title once (weight 2), its passages' words (no overlap).
                    if (chunk_id - 1) % CHUNKS_PER_DOC == 0:
                        whole = Counter(
                            {t: 2 * n for t, n in Counter(analyze(title, ENGLISH)).items()}
                        )
                        whole_length = 1 + len(analyze(title, ENGLISH))
                    whole.update(body)
                    whole_length += len(body)
                    if chunk_id % CHUNKS_PER_DOC == 0 or i == n - 1:
                        document_rows.append((document, whole_length, dict(whole)))
                        document_df.update(whole.keys())
                        document_length += whole_length
                cur = conn.cursor()
                with cur.copy(
                    "COPY chunks (id, brain_id, document_id, idx, text, heading_path, char_start,"
                    " char_end, token_count, content_hash, embed_hash, embed_model, embed_dims,"
                    " embedding, lex_length) FROM STDIN"
                ) as copy:
                    for row in chunk_rows:
                        copy.write_row(row)
                with cur.copy(
                    "COPY chunk_terms (brain_id, term, chunk_id, tf, doc_len, impact) FROM STDIN"
                ) as copy:
                    for posting in posting_rows:
                        copy.write_row(posting)
                with cur.copy(
                    "COPY document_terms (brain_id, document_id, term, tf) FROM STDIN"
                ) as copy:
                    for document, _, terms in document_rows:
                        for term, tf in terms.items():
                            copy.write_row((brain, document, term, tf))
                cur.executemany(
                    "UPDATE documents SET lex_length = %s WHERE id = %s",
                    [(length, document) for document, length, _ in document_rows],
                )
            done = start + n
            rate = done / (time.perf_counter() - started)
            print(f"loaded {done:,} chunks ({rate:,.0f}/s)", flush=True)
        with (
            conn.transaction(),
            conn.cursor().copy("COPY term_df (brain_id, term, df) FROM STDIN") as copy,
        ):
            for term, count in df.items():
                copy.write_row((brain, term, count))
        with (
            conn.transaction(),
            conn.cursor().copy("COPY document_term_df (brain_id, term, df) FROM STDIN") as copy,
        ):
            for term, count in document_df.items():
                copy.write_row((brain, term, count))
        documents = (total + CHUNKS_PER_DOC - 1) // CHUNKS_PER_DOC
        conn.execute(
            "INSERT INTO lexical_stats(brain_id, chunks, length, documents, document_length)"
            " VALUES (%s, %s, %s, %s, %s)",
            (brain, total, total_length, documents, document_length),
        )
        for table in ("documents", "chunks", "jobs"):
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
            )
        print(f"load: {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute(
            "CREATE INDEX chunk_terms_impact ON chunk_terms(brain_id, term, impact DESC)"
            " INCLUDE (chunk_id, tf, doc_len)"
        )
        conn.execute("CREATE INDEX chunk_terms_chunk ON chunk_terms(chunk_id)")
        print(f"postings indexes: {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        conn.execute("ALTER TABLE document_terms ADD PRIMARY KEY (document_id, term)")
        print(f"document postings key: {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '6GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        conn.execute("SELECT loci_ensure_vector_index(%s)", (dims,))
        build = time.perf_counter() - started
        print(f"HNSW index build: {build:.0f} s", flush=True)
        conn.execute("VACUUM ANALYZE")
        size = conn.execute("SELECT pg_database_size(current_database()) AS n").fetchall()[0]["n"]
        index = conn.execute(
            "SELECT pg_relation_size(%s::regclass) AS n", (f"chunks_embedding_{dims}",)
        ).fetchall()[0]["n"]
        print(f"database size: {size / 1e9:.2f} GB; HNSW index {index / 1e9:.2f} GB", flush=True)
        for table in ("chunk_terms", "document_terms"):
            held = conn.execute(
                "SELECT pg_total_relation_size(%s::regclass) AS n", (table,)
            ).fetchall()[0]["n"]
            print(f"{table} with its indexes: {held / 1e9:.3f} GB", flush=True)
    return all_vectors, latents, space, sample_words


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def measure(
    app_url: str,
    all_vectors: np.ndarray,
    latents: np.ndarray,
    space: Embeddings,
    samples: list[list[str]],
    seed: int,
) -> None:
    rng = np.random.default_rng(seed + 1)
    store = PostgresStore(app_url, pool_size=2)
    brain = store.get_brain("scale")
    timings: dict[str, list[float]] = {"text": [], "documents": [], "vector": [], "hybrid": []}
    recalls: list[float] = []
    none = SearchFilters()
    for number, chunk_words in enumerate(samples):
        near = latents[rng.integers(0, len(latents))]  # a question about a stored passage
        query = space.embed(near + 0.3 * rng.standard_normal(LATENT).astype(np.float32))
        terms = list(dict.fromkeys(rng.choice(chunk_words, 5).tolist()))
        t0 = time.perf_counter()
        lexical = store.text_search(brain.id, terms, 100, none)
        bounds = store.text_ceiling(brain.id, terms)
        ceiling = bounds.score if bounds is not None else None
        t1 = time.perf_counter()
        whole = store.document_text_scores(brain.id, terms, [i for i, _ in lexical])
        lexical, ceiling = in_document(lexical, ceiling, whole, RankingParams().document_words)
        td = time.perf_counter()
        nearest = store.vector_search(brain.id, MODEL, query, 100, none)
        t2 = time.perf_counter()
        fused = fuse([lexical, nearest], [0.5, 0.5], "convex", ceilings=[ceiling, 1.0])[:10]
        store.chunks_with_documents([f.item_id for f in fused])
        t3 = time.perf_counter()
        if number >= 5:  # the first few warm the caches
            timings["text"].append((t1 - t0) * 1000)
            timings["documents"].append((td - t1) * 1000)
            timings["vector"].append((t2 - td) * 1000)
            timings["hybrid"].append((t3 - t0) * 1000)
        exact = np.argpartition(-(all_vectors @ query), 10)[:10] + 1  # chunk ids start at 1
        found = {chunk_id for chunk_id, _ in nearest[:10]}
        recalls.append(len(found & set(exact.tolist())) / 10)
    for leg, values in timings.items():
        print(
            f"{leg:7} p50 {statistics.median(values):6.1f} ms  p95 {percentile(values, 95):6.1f} ms"
            f"  ({len(values)} queries)"
        )
    print(f"HNSW recall@10 vs exact: {statistics.mean(recalls):.3f} ({len(recalls)} queries)")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="owner (superuser) URL of an empty database")
    parser.add_argument("--app-role", default="loci_app", help="an existing non-owner role")
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    all_vectors, latents, space, samples = load(args.url, args.chunks, args.dims, args.seed)
    with psycopg.connect(args.url, autocommit=True) as conn:
        grant(conn, args.app_role)  # type: ignore[arg-type]
    parts = urlsplit(args.url)
    app_url = urlunsplit(parts._replace(netloc=f"{args.app_role}@{parts.netloc.split('@')[-1]}"))
    measure(app_url, all_vectors, latents, space, samples[:200], args.seed)


if __name__ == "__main__":
    main()
