"""A brain's documents as they are: listing and finding them, reading their text, chunks and
bytes, removing them, and queueing them to be indexed again."""

from __future__ import annotations

from collections.abc import Sequence

from loci.curate.pipeline import CURATE_JOB
from loci.embed.catalog import CatalogModel
from loci.models import (
    Brain,
    Chunk,
    Document,
    DocumentKind,
    DocumentStatus,
    Job,
)
from loci.service.document_query import DocumentPage, DocumentQuery, select
from loci.service.library_base import LibraryBase
from loci.store.job_order import INDEX_JOB, REINDEX_JOB


class Documents(LibraryBase):
    """Reading and changing the documents a brain holds."""

    def documents(
        self,
        brain: Brain,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[Document]:
        return self.store.list_documents(brain.id, status=status, kind=kind, tag=tag)

    def find(self, brain: Brain, query: DocumentQuery) -> DocumentPage:
        """The documents `query` asks for, in its order, one page of them, and how many match."""
        # One status or one kind is narrowed in SQL; several are filtered with the rest.
        status = query.statuses[0] if len(query.statuses) == 1 else None
        kind = query.kinds[0] if len(query.kinds) == 1 else None
        listing = self.store.list_document_index(brain.id, status=status, kind=kind, tag=query.tag)
        page, total = select(listing, query)
        return DocumentPage(self.store.get_documents(brain.id, [d.id for d in page]), total)

    def recent_documents(
        self, brain: Brain, limit: int, kinds: Sequence[DocumentKind] = ()
    ) -> list[Document]:
        """The brain's `limit` newest documents (of `kinds`, if given), newest first."""
        return self.store.recent_documents(brain.id, limit, kinds)

    def document(self, brain: Brain, document_id: int) -> Document:
        return self.store.get_document(brain.id, document_id)

    def document_text(self, brain: Brain, document_id: int) -> str | None:
        return self.store.document_text(brain.id, document_id)

    def chunks(self, brain: Brain, document_id: int) -> list[Chunk]:
        return self.store.list_chunks(brain.id, document_id)

    def original(self, brain: Brain, document_id: int) -> bytes:
        return self.blobs.get(self.store.get_document(brain.id, document_id).content_hash)

    def remove(self, brain: Brain, document_id: int) -> Document:
        """Delete a document with its earlier versions, and the blobs nothing else uses."""
        document = self.store.get_document(brain.id, document_id)
        self.forget_blobs(self.store.delete_document(brain.id, document_id))
        return document

    def forget_blobs(self, content_hashes: Sequence[str]) -> None:
        """Delete the blobs of these hashes, which the store found no document or version
        uses any more."""
        for content_hash in content_hashes:
            self.blobs.delete(content_hash)

    def jobs(self, brain: Brain, limit: int = 100) -> list[Job]:
        return self.store.list_jobs(brain.id, limit)

    def reprocess(self, brain: Brain, document_id: int) -> Document:
        document = self.store.get_document(brain.id, document_id)
        kind = CURATE_JOB if document.kind == "item" else INDEX_JOB
        return self.store.requeue_document(brain.id, document_id, kind)

    def reindex(
        self, brain: Brain, *, embeddings: bool = False, model: CatalogModel | None = None
    ) -> list[Document]:
        """Rebuild every derived row of a brain from its blobs, a document at a time; with
        `embeddings`, under `model` (a local model of the catalog), or the configured
        embedder when None: the brain's recorded identity changes to it at once. Search is
        never blind meanwhile: each document keeps its passages until its new ones replace
        them, and a passage not yet embedded by the new model is found by its words (and
        scored by them alone) until its vector comes."""
        if embeddings:
            if model is not None:
                self.store.set_brain_embedder(brain.id, model.model_id, model.dimensions)
            else:
                default = self._embedder()
                self.store.set_brain_embedder(brain.id, default.model_id, default.dimensions)
        items = {d.id for d in self.store.list_documents(brain.id, kind="item")}  # not indexed
        return [
            self.store.requeue_document(brain.id, doc_id, REINDEX_JOB)
            for doc_id in self.store.document_ids(brain.id)
            if doc_id not in items
        ]
