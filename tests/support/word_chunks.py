"""Documents whose chunks are single words, for the SQLite search-index tests: each chunk reads
"<word> notes" and its vector depends on the word only, so searches are repeatable."""

from __future__ import annotations

import numpy as np

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument
from loci.store.sqlite import SqliteStore

DIMS = 8


def word_vector(word: str) -> np.ndarray:
    rng = np.random.default_rng(sum(word.encode()) * 7919 + len(word))
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def add_words(store: SqliteStore, brain_id: int, name: str, words: list[str]) -> int:
    """A document `name` with one chunk per word; its id."""
    doc = store.create_document(
        brain_id,
        NewDocument("file", name, None, None, "text/plain", 10, name.encode().hex().ljust(64, "0")),
        "index",
    )
    reindex_words(store, doc.id, name, words)
    return doc.id


def reindex_words(store: SqliteStore, doc_id: int, name: str, words: list[str]) -> None:
    chunks, vectors = [], {}
    for index, word in enumerate(words):
        text = f"{word} notes"
        draft = ChunkDraft(index, text, (), Location(None, 1, 1, 0, len(text)), 2, f"{name}-{word}")
        chunks.append(IndexedChunk(draft, f"{name}-{word}"))
        vectors[f"{name}-{word}"] = word_vector(word)
    store.replace_index(doc_id, chunks, vectors, "m", "", None, None)
