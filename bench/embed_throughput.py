"""Embedding throughput of the local model on the chunks Loci really makes, per CPU-second.

    .venv/bin/python bench/embed_throughput.py                     # 512 SciFact chunks
    .venv/bin/python bench/embed_throughput.py --files docs README.md some.pdf
    .venv/bin/python bench/embed_throughput.py --batch-size 1 4 16 --check
    .venv/bin/python bench/embed_throughput.py --model a.onnx b.onnx --threads 1
    .venv/bin/python bench/embed_throughput.py --words 200         # fixed 200-word windows
    .venv/bin/python bench/embed_throughput.py --ceiling           # + the int8 matmul ceiling

Chunks: each SciFact abstract (`../shared/datasets/scifact` beside the repository) becomes a note
as `loci eval --beir` adds it; `--files` reads files (folders: every file in them, recursively)
as `loci add` would. Either way Loci's own parser and chunker cut them at the local model's
limit, and each chunk gets the title / heading line the indexer embeds with it. Without the
dataset, a built-in paragraph shuffled with a fixed seed stands in.

Every configuration (model file x batch size) gets its own `LocalEmbedder`; rounds run them in
turn, so a neighbour's load on shared cores hits each alike. A round is one `embed()` call over
every chunk. Reported per configuration: chunks per CPU-second of this process (user + system
time from `getrusage`, all threads: steadier than wall time on shared cores), chunks per wall
second, the load average, medians with the range; plus the CPU model and the chunks' token
lengths. `--check` adds each configuration's cosine to the first one's vectors.

`--ceiling` also times, in the same rounds, the int8 matrix products of the model's own shapes
for every chunk's length (per layer: QKV 384x1152, output 384x384, feed-forward 384x1536 and
1536x384, and attention's Q.K^T and P.V per head; six layers) as ONNX Runtime's `MatMulInteger`
(u8 x s8, prepacked weights, one thread): no quantizing, no float work, no other operator. Its
rate is what the model could do if it were nothing but its int8 matrix products; the report
gives each configuration's fraction of it. It builds the graph with the `onnx` package (in the
`dev` extra; Loci itself never imports it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from loci.context_line import context_line
from loci.embed.calibration import cpu_model
from loci.embed.local import LocalEmbedder
from loci.ingest.chunking import chunk_document
from loci.ingest.indexer import CONTEXT_TOKENS
from loci.ingest.parsers import ParseBudgets
from loci.ingest.plan import plan_file
from loci.ingest.sources import note_markdown, note_name
from loci.models import ParsedDocument

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"

FALLBACK = (
    "Retrieval augmented generation pairs a search index with a language model so that answers "
    "cite the passages they came from. Documents are parsed, split into chunks that respect "
    "headings and sentences, embedded into vectors and stored beside a full-text index. A query "
    "runs both legs, fuses the rankings and returns the best passages with their page and line."
)

# all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads of 32, feed-forward 1536.
LAYERS, HIDDEN, HEADS, HEAD_SIZE, FFN = 6, 384, 12, 32, 1536
LINEAR_SHAPES = [(HIDDEN, 3 * HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, FFN), (FFN, HIDDEN)]


def _entries(dataset: Path) -> list[tuple[str, str]]:
    corpus = dataset / "corpus.jsonl"
    if not corpus.exists():
        rng = random.Random(0)
        words = FALLBACK.split()
        out = []
        for i in range(2000):
            rng.shuffle(words)
            out.append((f"Passage {i}", " ".join(words * 3)))
        return out
    with open(corpus, encoding="utf-8") as f:
        return [(row["title"], row["text"]) for row in map(json.loads, f)]


def _inputs(embedder: LocalEmbedder, parsed: ParsedDocument, title: str | None) -> list[str]:
    """What the indexer embeds for a parsed document: title / heading line, then chunk text."""
    result = chunk_document(
        parsed, embedder.count_tokens, max_tokens=embedder.max_tokens - CONTEXT_TOKENS
    )
    out = []
    for chunk in result.chunks:
        context = context_line(parsed.title or title, chunk.heading_path)
        out.append(f"{context}\n\n{chunk.text}" if context else chunk.text)
    return out


def loci_chunks(embedder: LocalEmbedder, dataset: Path, count: int) -> list[str]:
    """What the indexer embeds for the first notes of the corpus."""
    out: list[str] = []
    for title, text in _entries(dataset):
        plan = plan_file(note_name(text, title), note_markdown(text, title, ()), kind="note")
        out.extend(_inputs(embedder, plan.parse(ParseBudgets()), title))
        if len(out) >= count:
            return out[:count]
    return out


def file_chunks(embedder: LocalEmbedder, paths: Sequence[Path], count: int) -> list[str]:
    """What the indexer embeds for these files (folders: every file in them), in name order."""
    files = sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())
    out: list[str] = []
    for path in files:
        plan = plan_file(path.name, path.read_bytes())
        try:
            parsed = plan.parse(ParseBudgets())
        except Exception as exc:  # a file Loci would refuse: reported, not measured
            print(f"skipped {path.name}: {exc}")
            continue
        out.extend(_inputs(embedder, parsed, None))
    return out[:count]


def word_windows(dataset: Path, count: int, words: int) -> list[str]:
    pool: list[str] = []
    for title, text in _entries(dataset):
        pool.extend((title + " " + text).split())
        if len(pool) >= count * words:
            break
    return [" ".join(pool[i * words : (i + 1) * words]) for i in range(count)]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def int8_ceiling(lengths: Sequence[int]) -> Callable[[], None]:
    """One pass of the model's int8 matrix products at every length in `lengths`, one thread."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, weights, outputs = [], [], []
    for layer in range(LAYERS):
        for i, (k, n) in enumerate(LINEAR_SHAPES):
            name = f"w{layer}_{i}"
            weights.append(numpy_helper.from_array(rng.integers(-127, 128, (k, n), np.int8), name))
            source = "hidden" if k == HIDDEN else "intermediate"
            nodes.append(helper.make_node("MatMulInteger", [source, name], [f"y{layer}_{i}"]))
            outputs.append(f"y{layer}_{i}")
        nodes.append(helper.make_node("MatMulInteger", ["q", "k_t"], [f"scores{layer}"]))
        nodes.append(helper.make_node("MatMulInteger", ["p", "v"], [f"context{layer}"]))
        outputs += [f"scores{layer}", f"context{layer}"]
    u8, s8 = TensorProto.UINT8, TensorProto.INT8
    inputs = [
        helper.make_tensor_value_info("hidden", u8, ["L", HIDDEN]),
        helper.make_tensor_value_info("intermediate", u8, ["L", FFN]),
        helper.make_tensor_value_info("q", u8, [HEADS, "L", HEAD_SIZE]),
        helper.make_tensor_value_info("k_t", s8, [HEADS, HEAD_SIZE, "L"]),
        helper.make_tensor_value_info("p", u8, [HEADS, "L", "L"]),
        helper.make_tensor_value_info("v", s8, [HEADS, "L", HEAD_SIZE]),
    ]
    graph = helper.make_graph(
        nodes,
        "int8_ceiling",
        inputs,
        [helper.make_tensor_value_info(o, TensorProto.INT32, None) for o in outputs],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )

    def feed(n: int) -> dict[str, Any]:
        def u(*shape: int) -> Any:
            return rng.integers(0, 256, shape, np.uint8)

        def s(*shape: int) -> Any:
            return rng.integers(-127, 128, shape, np.int8)

        return {
            "hidden": u(n, HIDDEN),
            "intermediate": u(n, FFN),
            "q": u(HEADS, n, HEAD_SIZE),
            "k_t": s(HEADS, HEAD_SIZE, n),
            "p": u(HEADS, n, n),
            "v": s(HEADS, n, HEAD_SIZE),
        }

    feeds = {n: feed(n) for n in set(lengths)}

    def run() -> None:
        for n in lengths:
            session.run(None, feeds[n])

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--files", type=Path, nargs="+", default=None, help="files or folders")
    parser.add_argument("--words", type=int, default=None, help="fixed windows instead of chunks")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, nargs="+", default=[1])
    parser.add_argument("--check", action="store_true", help="cosine to the first configuration")
    parser.add_argument("--model", type=Path, nargs="+", default=[None], help="ONNX files")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--ceiling", action="store_true", help="also time the int8 matmuls")
    args = parser.parse_args()

    probe = LocalEmbedder(threads=args.threads)
    if args.words:
        chunks = word_windows(args.dataset, args.chunks, args.words)
        what = f"{args.words}-word windows"
    elif args.files:
        chunks = file_chunks(probe, args.files, args.chunks)
        what = "Loci chunks of the files given"
    else:
        chunks = loci_chunks(probe, args.dataset, args.chunks)
        source = "SciFact" if (args.dataset / "corpus.jsonl").exists() else "built-in"
        what = f"Loci chunks of {source} notes"
    tokens = np.array([min(probe.count_tokens(c), probe.max_tokens) + 2 for c in chunks])
    p = np.percentile(tokens, [10, 25, 50, 75, 90])
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()}, "
        f"{len(os.sched_getaffinity(0))} usable cores; threads {args.threads or 'all'}"
    )
    print(
        f"{len(chunks)} {what}; tokens with [CLS]/[SEP]: mean {tokens.mean():.0f}, "
        f"p10/25/50/75/90 {' / '.join(f'{v:.0f}' for v in p)}, max {tokens.max()}"
    )

    configs: dict[str, Callable[[], Any]] = {}
    for model in args.model:
        for batch_size in args.batch_size:
            embedder = LocalEmbedder(threads=args.threads, batch_size=batch_size, model_path=model)
            name = f"{model or 'shipped'}, batch {batch_size}"
            configs[name] = partial(embedder.embed, chunks)
    if args.ceiling:
        configs["int8 matmuls only (ceiling)"] = int8_ceiling([int(t) for t in tokens])
    vectors = {name: run() for name, run in configs.items()}  # warm-up: loads the models
    per_cpu: dict[str, list[float]] = {name: [] for name in configs}
    per_wall: dict[str, list[float]] = {name: [] for name in configs}
    loads = []
    for _ in range(args.rounds):
        for name, run in configs.items():
            wall_start, cpu_start = time.perf_counter(), _cpu_seconds()
            run()
            per_wall[name].append(len(chunks) / (time.perf_counter() - wall_start))
            per_cpu[name].append(len(chunks) / (_cpu_seconds() - cpu_start))
        loads.append(os.getloadavg()[0])
    print(f"{args.rounds} rounds, load average {min(loads):.2f}-{max(loads):.2f}")
    ceiling = statistics.median(per_cpu["int8 matmuls only (ceiling)"]) if args.ceiling else None
    reference = next(iter(vectors.values()))
    for name in configs:
        cpu, wall = per_cpu[name], per_wall[name]
        line = (
            f"{name}: {statistics.median(cpu):.1f} chunks/CPU-s ({min(cpu):.1f}-{max(cpu):.1f}), "
            f"{statistics.median(wall):.1f} chunks/s wall ({min(wall):.1f}-{max(wall):.1f})"
        )
        if ceiling and name in vectors and vectors[name] is not None:
            line += f"; {statistics.median(cpu) / ceiling:.2f} of the ceiling"
        if args.check and isinstance(vectors[name], np.ndarray):
            cosines = np.sum(reference * vectors[name], axis=1)
            line += f"; cosine to the first: mean {cosines.mean():.5f}, min {cosines.min():.5f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
