"""Turning one stored document into its derived index: parse → chunk → embed → swap in.

Everything here is rebuildable from the blob, so the indexer may run any number of times for the
same document: the final `replace_index` swaps the old chunks for the new ones in one transaction,
which is why a worker killed half-way leaves no half-indexed document and no duplicate chunks.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from loci.embed.base import Embedder, Vectors
from loci.ingest.chunking import chunk_document
from loci.ingest.encoding import decode_text
from loci.ingest.parsers import ParseBudgets, parse
from loci.ingest.parsers.html import parse_html
from loci.models import Brain, Document, IndexedChunk, ParsedDocument
from loci.search.engine import check_identity
from loci.store.base import Store
from loci.store.blobs import BlobStore

log = logging.getLogger(__name__)

CONTEXT_TOKENS = 48  # room kept in every chunk for the title / heading line embedded with it
EMBED_BATCH = 96


@dataclass(frozen=True)
class IndexerSettings:
    overlap_tokens: int = 32
    max_chunks: int = 1024
    budgets: ParseBudgets = ParseBudgets()


def parse_stored(document: Document, data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    if document.kind == "web" and (document.mime_type or "").startswith(
        ("text/html", "application/xhtml")
    ):
        return parse_html(decode_text(data), url=document.source_url)
    return parse(data, document.name, budgets)


def context_line(title: str | None, heading_path: tuple[str, ...]) -> str:
    """What is embedded before a chunk's text so a passage keeps the meaning of where it sits."""
    parts = [p for p in (title, " / ".join(h for h in heading_path if h != title)) if p]
    return " — ".join(parts)


class Indexer:
    def __init__(
        self, store: Store, blobs: BlobStore, embedder: Embedder, settings: IndexerSettings
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.embedder = embedder
        self.settings = settings

    def index(self, brain: Brain, document: Document) -> None:
        check_identity(brain, self.embedder)
        parsed = parse_stored(
            document, self.blobs.get(document.content_hash), self.settings.budgets
        )
        title = parsed.title or document.title
        result = chunk_document(
            parsed,
            self.embedder.count_tokens,
            max_tokens=self.embedder.max_tokens - CONTEXT_TOKENS,
            overlap_tokens=self.settings.overlap_tokens,
            max_chunks=self.settings.max_chunks,
        )
        inputs = [self._embedding_input(title, c.heading_path, c.text) for c in result.chunks]
        hashes = [hashlib.sha256(text.encode()).hexdigest() for text in inputs]
        model = self.embedder.model_id
        cached = self.store.cached_vectors(model, hashes)
        missing = [
            (h, text)
            for h, text in dict(zip(hashes, inputs, strict=True)).items()
            if h not in cached
        ]
        new_vectors: dict[str, Vectors] = {}
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            vectors = self.embedder.embed([text for _, text in batch])
            new_vectors.update({h: vectors[i] for i, (h, _) in enumerate(batch)})
        if brain.embedder_model is None:
            self.store.set_brain_embedder(brain.id, model, self.embedder.dimensions)
        reasons = list(parsed.warnings)
        if result.truncated:
            reasons.append(
                f"indexed the first {self.settings.max_chunks} chunks only: the file is longer"
            )
        if not result.chunks:
            reasons.append("no text found in this file")
        self.store.replace_index(
            document.id,
            [IndexedChunk(c, h) for c, h in zip(result.chunks, hashes, strict=True)],
            new_vectors,
            model,
            parsed.text,
            title,
            "; ".join(reasons) or None,
        )
        log.info(
            "indexed document %s: %d chunks, %d embedded",
            document.id,
            len(result.chunks),
            len(new_vectors),
        )

    def _embedding_input(self, title: str | None, heading_path: tuple[str, ...], text: str) -> str:
        context = context_line(title, heading_path)
        if not context:
            return text
        if self.embedder.count_tokens(context) > CONTEXT_TOKENS - 2:
            context = context[: (CONTEXT_TOKENS - 2) * 3]
            while context and self.embedder.count_tokens(context) > CONTEXT_TOKENS - 2:
                context = context[: int(len(context) * 0.8)]
        return f"{context}\n\n{text}"
