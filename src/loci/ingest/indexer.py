"""Turning stored documents into their derived index, in two stages.

1. Text: parse → chunk → `write_text`, which swaps the old chunks for the new ones with their text
   index in one transaction. The document is then found by its words. Chunks whose embedding
   input is unchanged keep the vector they had (vectors are keyed by the input's hash).
2. Vectors: `pending_inputs` rebuilds what is embedded for each chunk still without a vector
   (title and heading line, then the text: the input whose hash the chunk carries), and the
   worker embeds them in slices, writing each slice with `Store.add_vectors`.

Everything here is rebuildable from the blob, so the indexer may run any number of times for the
same document: a worker killed half-way leaves no half-written chunks and no duplicates, and a
vectors stage cut short leaves a document searchable by words whose remaining vectors the next
run writes. `index` runs both stages at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loci.context_line import context_line, index_title
from loci.embed.base import Embedder, Vectors
from loci.embed.identity import check_identity
from loci.ingest.caption import Captioner, with_captions
from loci.ingest.chunking import chunk_document
from loci.ingest.parse_process import parse_file
from loci.ingest.parsers import ParseBudgets
from loci.ingest.plan import plan_file
from loci.ingest.progress import report
from loci.ingest.timings import IndexTimings
from loci.language import passage_languages
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import Brain, ChunkDraft, Document, IndexedChunk, IndexWrite, ParsedDocument
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
    embed_slice_s: float = 1.0  # seconds of embedding between two looks at the queue


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


class StaleChunks(Exception):
    """A chunk's embedding input, rebuilt from what is stored, no longer has the hash the chunk
    carries (its document's title changed since its text stage): index its text again. A signal
    between the indexer and the worker's handler, never shown to anyone."""


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
        timings: IndexTimings | None = None,
    ) -> None:
        self.store = store
        self.timings = timings or IndexTimings()
        self.transcriber = transcriber  # recordings: None fails them, saying what to set
        self.blobs = blobs
        self.embedder = embedder
        self.settings = settings
        self.captioner = Captioner(chat) if chat is not None and settings.caption_images else None

    def index(self, brain: Brain, document: Document) -> None:
        """Both stages at once: searchable by words, then every vector written."""
        prepared = self.prepare(brain, document)
        if self.write_text(prepared):
            document = self.store.get_document(brain.id, document.id)
            pending = self.pending_inputs(brain, document)
            vectors = self.embed(dict(pending))
            self.write_vectors(document, vectors)

    def prepare(
        self,
        brain: Brain,
        document: Document,
        languages_before: Mapping[str, str | None] | None = None,
    ) -> Prepared:
        """Parse and chunk a document; `languages_before`: its stored chunks' languages by
        embedding input hash (`Store.chunk_languages`), so an unchanged passage is not read
        again to tell its language (`passage_languages`)."""
        check_identity(brain, self.embedder)
        with self.timings.timed("parse"):
            data = self.blobs.get(document.content_hash)
            plan = plan_file(
                document.name,
                data,
                kind=document.kind,
                mime_type=document.mime_type,
                source_url=document.source_url,
            )  # no size cap: what is stored is never refused on reindex
            # In a parse process capped in memory: a hostile file fails alone.
            parsed = parse_file(plan, self.settings.budgets, self.transcriber)
            if self.captioner is not None and document.kind in ("file", "web"):
                parsed = with_captions(parsed, data, self.captioner)
            parsed = without_nul(parsed)
        report("chunk", 0, 1)
        with self.timings.timed("chunk"):
            title = parsed.title or document.title
            result = chunk_document(
                parsed,
                self.embedder.count_tokens,
                max_tokens=self.embedder.max_tokens - CONTEXT_TOKENS,
                overlap_tokens=self.settings.overlap_tokens,
                max_chunks=self.settings.max_chunks,
            )
            named = index_title(title, document.name, document.kind)
            inputs = [self._embedding_input(named, c.heading_path, c.text) for c in result.chunks]
            hashes = [_hash(text) for text in inputs]
            before = languages_before or {}
            languages = passage_languages(
                parsed.text,
                [c.text for c in result.chunks],
                {i: before[h] for i, h in enumerate(hashes) if h in before},
            )
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

    def write_text(self, prepared: Prepared) -> int | None:
        """Swap in the document's chunks and their text index (the vectors stored for unchanged
        inputs stay theirs); returns how many chunks still need a vector, None if the
        document's content changed since it was read (nothing is written)."""
        return self.write_texts([prepared])[0]

    def write_texts(self, batch: Sequence[Prepared]) -> list[int | None]:
        """`write_text` for several documents in one store write (all or, if one was deleted
        meanwhile, none); how many chunks each still needs a vector for, None for one whose
        content changed since it was read (not written)."""
        for brain in {p.brain.id: p.brain for p in batch}.values():
            if brain.embedder_model is None:
                self.store.set_brain_embedder(
                    brain.id, self.embedder.model_id, self.embedder.dimensions
                )
        with self.timings.timed("write"):
            missing = self.store.replace_indexes(
                [self._index_write(p) for p in batch], self.embedder.model_id
            )
            # What the parser read from each file (its format, language, author, sheets,
            # sender, ...), kept apart from the metadata given with the document; rebuilt on
            # every reindex. Notes and graph pages are skipped: their frontmatter is already
            # their canonical form.
            extracted = {
                p.document.id: (
                    {"parser": p.parser, **p.parsed.metadata},
                    file_tags(p.parsed.metadata),
                )
                for p, count in zip(batch, missing, strict=True)
                if p.document.kind in ("file", "web") and count is not None
            }
            if extracted:
                self.store.set_extracted(extracted)
        for prepared, count in zip(batch, missing, strict=True):
            if count is None:
                log.info(
                    "document %s changed while its text was read: its newer content is indexed"
                    " by a job of its own",
                    prepared.document.id,
                )
                continue
            log.info(
                "indexed the text of document %s: %d chunks, %d to embed",
                prepared.document.id,
                len(prepared.chunks),
                count,
            )
        return missing

    def _index_write(self, prepared: Prepared) -> IndexWrite:
        reasons = list(prepared.parsed.warnings)
        if prepared.truncated:
            reasons.append(
                f"indexed the first {self.settings.max_chunks} chunks only: the file is longer"
            )
        if not prepared.chunks:
            reasons.append("no text found in this file")
        return IndexWrite(
            prepared.document.id,
            [
                IndexedChunk(c, h, language)
                for c, h, language in zip(
                    prepared.chunks, prepared.hashes, prepared.languages, strict=True
                )
            ],
            prepared.parsed.text,
            prepared.title,
            "; ".join(reasons) or None,
            prepared.document.content_hash,
        )

    def pending_inputs(self, brain: Brain, document: Document) -> list[tuple[str, str]]:
        """(hash, input) of each of the document's chunks still without a vector, in order,
        each input once. `StaleChunks` when an input no longer matches its chunk."""
        check_identity(brain, self.embedder)
        pending: dict[str, str] = {}
        named = index_title(document.title, document.name, document.kind)
        for chunk in self.store.chunks_without_vectors(document.id, self.embedder.model_id):
            text = self._embedding_input(named, chunk.heading_path, chunk.text)
            if _hash(text) != chunk.embed_hash:
                raise StaleChunks(
                    f"document {document.id} changed since its text was indexed; indexing again"
                )
            pending[chunk.embed_hash] = text
        return list(pending.items())

    def embed(self, inputs: dict[str, str]) -> dict[str, Vectors]:
        """Vectors for the inputs (hash -> text) the store has not seen under this model."""
        cached = self.store.cached_vectors(self.embedder.model_id, list(inputs))
        missing = [(h, text) for h, text in inputs.items() if h not in cached]
        found = dict(cached)
        if missing:
            with self.timings.timed("embed"):
                vectors = self.embedder.embed([text for _, text in missing])
            self.timings.embedded += len(missing)
            found.update((h, vectors[i]) for i, (h, _) in enumerate(missing))
        return found

    def write_vectors(self, document: Document, vectors: dict[str, Vectors]) -> int:
        """Write the document's new vectors; returns how many of its chunks still have none."""
        with self.timings.timed("write"):
            return self.store.add_vectors(document.id, self.embedder.model_id, vectors)

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


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


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
