"""A tiny sentence-transformers BERT made here (random weights, a vocabulary of a few dozen
words), served in the Hugging Face hub's layout by a real HTTP server on 127.0.0.1, and a NumPy
forward pass of it to check the ONNX model Loci makes against. The hub answers the two calls
`loci models add` makes: the revision's file list with hashes (`/api/models/…/revision/…`), and
each file (`/…/resolve/COMMIT/FILE`)."""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from tests.support.loopback import ApiHandler, Loopback

WORDS = (
    "the",
    "boat",
    "is",
    "moored",
    "at",
    "pier",
    "four",
    "berth",
    "seventeen",
    "oars",
    "are",
    "in",
    "shed",
    "heating",
    "broken",
    "since",
    "monday",
    "technician",
    "comes",
    "thursday",
    "tomatoes",
    "need",
    "water",
    "every",
    "morning",
    "in",
    "july",
    "meeting",
    "starts",
    "at",
    "ten",
    "where",
    "when",
    "how",
    "what",
)
HIDDEN, LAYERS, HEADS, FEED_FORWARD, POSITIONS = 32, 2, 4, 64, 512
COMMIT = "c0ffee" + "0" * 34


@dataclass
class TinyModel:
    pooling: str = "mean"  # or "cls"
    model_type: str = "bert"
    seed: int = 7
    weights: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)

        def w(*shape: int) -> npt.NDArray[np.float32]:
            return rng.normal(0, 0.2, shape).astype(np.float32)

        vocabulary = len(self.vocab())
        t = {
            "embeddings.word_embeddings.weight": w(vocabulary, HIDDEN),
            "embeddings.position_embeddings.weight": w(POSITIONS, HIDDEN),
            "embeddings.token_type_embeddings.weight": w(2, HIDDEN),
            "embeddings.LayerNorm.weight": 1 + w(HIDDEN),
            "embeddings.LayerNorm.bias": w(HIDDEN),
        }
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            for part, rows, columns in (
                ("attention.self.query", HIDDEN, HIDDEN),
                ("attention.self.key", HIDDEN, HIDDEN),
                ("attention.self.value", HIDDEN, HIDDEN),
                ("attention.output.dense", HIDDEN, HIDDEN),
                ("intermediate.dense", FEED_FORWARD, HIDDEN),
                ("output.dense", HIDDEN, FEED_FORWARD),
            ):
                t[p + part + ".weight"] = w(rows, columns)
                t[p + part + ".bias"] = w(rows)
            for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
                t[p + norm + ".weight"] = 1 + w(HIDDEN)
                t[p + norm + ".bias"] = w(HIDDEN)
        self.weights = t

    @staticmethod
    def vocab() -> list[str]:
        return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS)]

    def files(self) -> dict[str, bytes]:
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

        vocab = {w: i for i, w in enumerate(self.vocab())}
        tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
        config = {
            "model_type": self.model_type,
            "hidden_size": HIDDEN,
            "num_hidden_layers": LAYERS,
            "num_attention_heads": HEADS,
            "intermediate_size": FEED_FORWARD,
            "max_position_embeddings": POSITIONS,
            "layer_norm_eps": 1e-12,
            "hidden_act": "gelu",
            "pad_token_id": 0,
        }
        pooling = {
            "word_embedding_dimension": HIDDEN,
            "pooling_mode_cls_token": self.pooling == "cls",
            "pooling_mode_mean_tokens": self.pooling == "mean",
        }
        return {
            "config.json": json.dumps(config).encode(),
            "tokenizer.json": tokenizer.to_str().encode(),
            "model.safetensors": safetensors_bytes(self.weights),
            "1_Pooling/config.json": json.dumps(pooling).encode(),
            "sentence_bert_config.json": json.dumps({"max_seq_length": 256}).encode(),
            "README.md": b"# tiny\n",
        }

    def embed(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The model's sentence vector of one tokenized text, in float64 NumPy."""
        t = {k: v.astype(np.float64) for k, v in self.weights.items()}
        x = t["embeddings.word_embeddings.weight"][ids]
        x = x + t["embeddings.position_embeddings.weight"][: len(ids)]
        x = x + t["embeddings.token_type_embeddings.weight"][0]
        x = _norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        size = HIDDEN // HEADS
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."

            def dense(part: str, v: npt.NDArray[Any], p: str = p) -> npt.NDArray[Any]:
                return v @ t[p + part + ".weight"].T + t[p + part + ".bias"]

            q, k, v = (
                dense(f"attention.self.{n}", x).reshape(len(ids), HEADS, size).transpose(1, 0, 2)
                for n in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(size)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(1, 0, 2).reshape(len(ids), HIDDEN)
            x = _norm(
                x + dense("attention.output.dense", context),
                t[p + "attention.output.LayerNorm.weight"],
                t[p + "attention.output.LayerNorm.bias"],
            )
            inner = dense("intermediate.dense", x)
            from math import erf

            gelu = 0.5 * inner * (1 + np.vectorize(erf)(inner / np.sqrt(2)))
            x = _norm(
                x + dense("output.dense", gelu),
                t[p + "output.LayerNorm.weight"],
                t[p + "output.LayerNorm.bias"],
            )
        pooled = x[0] if self.pooling == "cls" else x.mean(axis=0)
        unit: npt.NDArray[np.float32] = (pooled / np.linalg.norm(pooled)).astype(np.float32)
        return unit


def _norm(x: npt.NDArray[Any], weight: npt.NDArray[Any], bias: npt.NDArray[Any]) -> Any:
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-12) * weight + bias


def safetensors_bytes(tensors: dict[str, npt.NDArray[np.float32]]) -> bytes:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    body = b""
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [len(body), len(body) + len(data)],
        }
        body += data
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + body


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class TinyHub:
    """The hub for one repository `repo` holding `files`. `corrupt` serves other bytes for a
    file than the hash listed for it."""

    def __init__(self, repo: str, files: dict[str, bytes], corrupt: str | None = None) -> None:
        self.repo = repo
        self.files = files
        self.corrupt = corrupt
        self.requests: list[str] = []
        hub = self

        class Handler(ApiHandler):
            def do_GET(self) -> None:  # noqa: N802 - stdlib's name
                hub.requests.append(self.path)
                status, body, kind = hub.answer(self.path)
                self.send(status, body, kind)

        self.server = Loopback(Handler)

    def answer(self, path: str) -> tuple[int, bytes, str]:
        url = urlsplit(path)
        listing = f"/api/models/{self.repo}/revision/"
        if url.path.startswith(listing):
            siblings = []
            for name, data in self.files.items():
                entry: dict[str, Any] = {"rfilename": name, "size": len(data)}
                if name.endswith(".safetensors"):
                    digest = hashlib.sha256(data).hexdigest()
                    entry["lfs"] = {"sha256": digest, "size": len(data)}
                else:
                    entry["blobId"] = git_blob_sha1(data)
                siblings.append(entry)
            body = json.dumps({"id": self.repo, "sha": COMMIT, "siblings": siblings})
            return 200, body.encode(), "application/json"
        prefix = f"/{self.repo}/resolve/{COMMIT}/"
        if url.path.startswith(prefix):
            name = url.path[len(prefix) :]
            if name in self.files:
                data = self.files[name]
                if name == self.corrupt:
                    data = data[:-4] + b"\0\0\0\0"
                return 200, data, "application/octet-stream"
        return 404, b'{"error": "Repository not found"}', "application/json"

    def __enter__(self) -> TinyHub:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def url(self) -> str:
        return self.server.url()
