"""Turning stored documents into their derived index: parse → chunk → embed → swap in.

Everything here is rebuildable from the blob, so the indexer may run any number of times for the
same document: the final `replace_index` swaps the old chunks for the new ones in one transaction,
which is why a worker killed half-way leaves no half-indexed document and no duplicate chunks.

The three steps are separate so a worker can index a batch of small documents in one pass: one
cache lookup and one embedder call for all their passages (an endpoint embedder sends them in
batches of up to 96), then one transaction per document.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loci.context_line import context_line
from loci.embed.base import Embedder, Vectors
from loci.embed.identity import check_identity
from loci.ingest.caption import Captioner, with_captions
from loci.ingest.chunking import chunk_document
from loci.ingest.parsers import ParseBudgets
from loci.ingest.plan import plan_file
from loci.language import passage_languages
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import Brain, ChunkDraft, Document, IndexedChunk, ParsedDocument
from loci.nul import NUL, strip_nul, strip_nul_deep
from loci.store.base import Store
from loci.store.blobs import BlobStore

log = logging.getLogger(__name__)

CONTEXT_TOKENS = 48  # room kept in every chunk for the title / heading line embedded with it


@dataclass(frozen=True)
class IndexerSettings:
    overlap_tokens: int = 32
    max_chunks: int = 1024
    budgets: ParseBudgets = field(default_factory=ParseBudgets)
    caption_images: bool = False  # the chat model takes images: caption pictures on ingest


@dataclass
class Prepared:
    """A parsed and chunked document waiting for its vectors."""

    brain: Brain
    document: Document
    parsed: ParsedDocument
    title: str | None
    chunks: tuple[ChunkDraft, ...]
    inputs: list[str]  # exactly what is embedded for each chunk
    hashes: list[str]  # sha256 of each input: the vector cache key
    truncated: bool
    parser: str | None = None  # the format it was read as (`plan_file`): "pdf", "html", …
    languages: tuple[str | None, ...] = ()  # each chunk's detected language (`loci.language`)


def without_nul(parsed: ParsedDocument) -> ParsedDocument:
    """The parsed file with no NUL left in its text, title or metadata: PostgreSQL stores none
    (`loci.nul`), and a stray one in a file's text is no reason to refuse the file."""
    if (
        not any(NUL in b.text for b in parsed.blocks)
        and NUL not in (parsed.title or "")
        and NUL not in json.dumps(parsed.metadata, default=str, ensure_ascii=False)
    ):
        return parsed
    return dataclasses.replace(
        parsed,
        title=strip_nul(parsed.title) if parsed.title is not None else None,
        blocks=tuple(dataclasses.replace(b, text=strip_nul(b.text)) for b in parsed.blocks),
        metadata=strip_nul_deep(parsed.metadata),
    )


class Indexer:
    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        embedder: Embedder,
        settings: IndexerSettings,
        chat: Chat | None = None,
        transcriber: Transcriber | None = None,
    ) -> None:
        self.store = store
        self.transcriber = transcriber  # recordings: None fails them, saying what to set
        self.blobs = blobs
        self.embedder = embedder
        self.settings = settings
        self.captioner = Captioner(chat) if chat is not None and settings.caption_images else None

    def index(self, brain: Brain, document: Document) -> None:
        prepared = self.prepare(brain, document)
        vectors = self.embed([prepared])
        self.commit(prepared, vectors)

    def prepare(self, brain: Brain, document: Document) -> Prepared:
        check_identity(brain, self.embedder)
        data = self.blobs.get(document.content_hash)
        plan = plan_file(
            document.name,
            data,
            kind=document.kind,
            mime_type=document.mime_type,
            source_url=document.source_url,
        )  # no size cap: what is stored is never refused on reindex
        parsed = plan.parse(self.settings.budgets, self.transcriber)
        if self.captioner is not None and document.kind in ("file", "web"):
            parsed = with_captions(parsed, data, self.captioner)
        parsed = without_nul(parsed)
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
        languages = passage_languages(parsed.text, [c.text for c in result.chunks])
        return Prepared(
            brain,
            document,
            parsed,
            title,
            result.chunks,
            inputs,
            hashes,
            result.truncated,
            plan.parser,
            tuple(languages),
        )

    def embed(self, batch: Sequence[Prepared]) -> dict[str, Vectors]:
        """Vectors for every input of the batch that the store has not seen under this model."""
        wanted: dict[str, str] = {}
        for prepared in batch:
            wanted.update(zip(prepared.hashes, prepared.inputs, strict=True))
        cached = self.store.cached_vectors(self.embedder.model_id, list(wanted))
        missing = [(h, text) for h, text in wanted.items() if h not in cached]
        if not missing:
            return {}
        vectors = self.embedder.embed([text for _, text in missing])
        return {h: vectors[i] for i, (h, _) in enumerate(missing)}

    def commit(self, prepared: Prepared, vectors: dict[str, Vectors]) -> None:
        brain, document, embedder = prepared.brain, prepared.document, self.embedder
        if brain.embedder_model is None:
            self.store.set_brain_embedder(brain.id, embedder.model_id, embedder.dimensions)
        reasons = list(prepared.parsed.warnings)
        if prepared.truncated:
            reasons.append(
                f"indexed the first {self.settings.max_chunks} chunks only: the file is longer"
            )
        if not prepared.chunks:
            reasons.append("no text found in this file")
        own = {h: vectors[h] for h in prepared.hashes if h in vectors}
        self.store.replace_index(
            document.id,
            [
                IndexedChunk(c, h, language)
                for c, h, language in zip(
                    prepared.chunks, prepared.hashes, prepared.languages, strict=True
                )
            ],
            own,
            self.embedder.model_id,
            prepared.parsed.text,
            prepared.title,
            "; ".join(reasons) or None,
        )
        if document.kind in ("file", "web"):
            # What the parser read from the file (its format, language, author, sheets, sender,
            # ...), kept apart from the metadata given with the document; rebuilt on every
            # reindex. Notes and graph pages are skipped: their frontmatter is already their
            # canonical form.
            extracted = {"parser": prepared.parser, **prepared.parsed.metadata}
            self.store.set_extracted(document.id, extracted, file_tags(prepared.parsed.metadata))
        log.info("indexed document %s: %d chunks", document.id, len(prepared.chunks))

    def _embedding_input(self, title: str | None, heading_path: tuple[str, ...], text: str) -> str:
        context = context_line(title, heading_path)
        if not context:
            return text
        limit = CONTEXT_TOKENS - 2
        if self.embedder.count_tokens(context) > limit:
            context = context[: limit * 3]
            while context and self.embedder.count_tokens(context) > limit:
                context = context[: int(len(context) * 0.8)]
        return f"{context}\n\n{text}"


MAX_FILE_TAGS = 50  # as many as an add may give
MAX_TAG_CHARS = 64


def file_tags(metadata: dict[str, Any]) -> list[str]:
    """The tags a file names itself (a Markdown frontmatter's `tags:`, which the parser reads as
    a list): Obsidian's `#house` is `house`; blanks and repeats dropped; 64 characters each."""
    raw = metadata.get("tags")
    if not isinstance(raw, list):
        return []
    tags = (str(t).strip().lstrip("#").strip()[:MAX_TAG_CHARS] for t in raw)
    return list(dict.fromkeys(t for t in tags if t))[:MAX_FILE_TAGS]
