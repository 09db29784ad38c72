"""Measuring retrieval on a BEIR-layout folder through Loci's normal ingest and search paths.

corpus.jsonl ({_id, title, text}), queries.jsonl ({_id, text}) and qrels/<split>.tsv
(query-id, corpus-id, score, with a header). Each corpus entry is added as a note whose title is
the entry's title, indexed by the regular worker, and searched with the regular engine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loci.errors import InvalidInput
from loci.eval.metrics import mrr_at, ndcg_at, percentile, recall_at
from loci.models import Brain, SearchMode
from loci.service import Loci


@dataclass(frozen=True)
class BeirData:
    corpus: list[dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass(frozen=True)
class ModeResult:
    mode: SearchMode
    queries: int
    ndcg_10: float
    recall_10: float
    recall_100: float
    mrr_10: float
    p50_ms: float
    p95_ms: float


def default_split(folder: Path) -> str:
    """`test` where the folder has it (the BEIR norm), else `dev`, else the only split."""
    splits = available_splits(folder)
    for preferred in ("test", "dev"):
        if preferred in splits:
            return preferred
    return splits[0] if splits else "test"


def available_splits(folder: Path) -> list[str]:
    qrels = folder / "qrels"
    return sorted(p.stem for p in qrels.glob("*.tsv")) if qrels.is_dir() else []


def load_beir(folder: Path, split: str = "dev") -> BeirData:
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for needed in (folder / "corpus.jsonl", folder / "queries.jsonl"):
        if not needed.is_file():
            raise InvalidInput(f"not a BEIR folder: {needed.name} is missing")
    if not qrels_path.is_file():
        splits = available_splits(folder)
        there = f"; it has {', '.join(splits)}" if splits else "; it has no qrels/*.tsv"
        raise InvalidInput(f"no split {split!r} in {folder.name}{there}")
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open() if line.strip()]
    queries = {
        q["_id"]: q["text"]
        for q in (json.loads(line) for line in (folder / "queries.jsonl").open() if line.strip())
    }
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open() as handle:
        for number, line in enumerate(handle):
            parts = line.rstrip("\n").split("\t")
            if number == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            if len(parts) >= 3:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return BeirData(corpus, {q: t for q, t in queries.items() if q in qrels}, qrels)


def index_corpus(
    loci: Loci,
    brain: Brain,
    corpus: Sequence[dict[str, str]],
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[int, str]:
    """Add every corpus entry as a note and index them; returns document id -> corpus id."""
    doc_to_corpus: dict[int, str] = {}
    for entry in corpus:
        text = entry.get("text") or entry.get("title") or ""
        if not text.strip():
            continue
        result = loci.library.add_note(brain, text, title=entry.get("title") or None)
        doc_to_corpus[result.document.id] = entry["_id"]
    pending = [d for d in doc_to_corpus if loci.library.document(brain, d).status == "processing"]
    total = len(doc_to_corpus)

    def progress(docs: Sequence[object]) -> None:
        if on_progress is not None:
            done = sum(getattr(d, "status", "") != "processing" for d in docs)
            on_progress(total - len(pending) + done, total)

    if pending:
        loci.library.wait_for(brain, pending, progress)
    return doc_to_corpus


def evaluate(
    loci: Loci,
    brain: Brain,
    data: BeirData,
    doc_to_corpus: dict[int, str],
    modes: Sequence[SearchMode],
    max_queries: int | None = None,
    depth: int = 100,
) -> list[ModeResult]:
    """Each mode's figures over the first `max_queries` queries, `depth` documents retrieved
    per query (Recall@100 counts what was retrieved within them)."""
    query_ids = sorted(data.queries)[: max_queries or None]
    brain = loci.store.get_brain(brain.name)  # indexing recorded the embedder identity since
    results: list[ModeResult] = []
    for mode in modes:
        ndcg, r10, r100, mrr, latencies = [], [], [], [], []
        for qid in query_ids:
            start = time.perf_counter()
            ranked = loci.searching.ranked_documents(brain, data.queries[qid], mode, depth=depth)
            latencies.append((time.perf_counter() - start) * 1000)
            ranking = [doc_to_corpus.get(doc_id, "") for doc_id, _ in ranked]
            judged = data.qrels[qid]
            ndcg.append(ndcg_at(ranking, judged, 10))
            r10.append(recall_at(ranking, judged, 10))
            r100.append(recall_at(ranking, judged, 100))
            mrr.append(mrr_at(ranking, judged, 10))
        n = len(query_ids) or 1
        results.append(
            ModeResult(
                mode=mode,
                queries=len(query_ids),
                ndcg_10=sum(ndcg) / n,
                recall_10=sum(r10) / n,
                recall_100=sum(r100) / n,
                mrr_10=sum(mrr) / n,
                p50_ms=percentile(latencies, 50),
                p95_ms=percentile(latencies, 95),
            )
        )
    return results
