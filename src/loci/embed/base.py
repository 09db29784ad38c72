"""The seam to whatever turns text into vectors.

A brain records the identity (`model_id`, `dimensions`) of the embedder that wrote its vectors and
refuses vectors of any other identity: two models' vectors live in unrelated spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Stable identity, e.g. 'sentence-transformers/all-MiniLM-L6-v2'."""
        ...

    @property
    def dimensions(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """Content tokens (special tokens excluded) one input may have before truncation."""
        ...

    def count_tokens(self, text: str) -> int:
        """Content tokens of `text` in this model's own tokenizer (special tokens excluded)."""
        ...

    def words_in_pieces(self, text: str) -> int | None:
        """How many words of `text` this model reads only in pieces: split into several
        subword tokens, or unknown to its vocabulary. None: its tokenizer is not at hand."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length float32 vectors, shape (len(texts), dimensions), in input order."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Vectors of search queries. A model trained with instructions (multilingual-e5's
    "query: " / "passage: ") offers `embed_queries`; for every other embedder a query is
    embedded like a passage. Looked up rather than required, so an `Embedder` need not know."""
    method = getattr(embedder, "embed_queries", None)
    if method is None:
        return embedder.embed(texts)
    vectors: Vectors = method(texts)
    return vectors


def question_and_passages(
    embedder: Embedder, question: str, texts: Sequence[str]
) -> tuple[Vectors, Vectors]:
    """A question's vector and its candidate passages' vectors, in one batch where the model
    reads both alike (MiniLM); a model with a query form (e5's "query: ") offers
    `question_and_passages` and embeds the question its own way."""
    method = getattr(embedder, "question_and_passages", None)
    if method is not None:
        found: tuple[Vectors, Vectors] = method(question, texts)
        return found
    vectors = embedder.embed([question, *texts])
    return vectors[0], vectors[1:]
