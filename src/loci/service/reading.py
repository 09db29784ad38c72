"""Reading a document at a cited passage: its PDF pages as images, and where on the page (or the
image) the passage is, so a citation opens the source with the passage marked."""

from __future__ import annotations

from dataclasses import dataclass

from loci.errors import InvalidInput, NotFound
from loci.ingest.formats import document_format
from loci.models import Brain, Chunk, Document, Region
from loci.store.base import Store
from loci.store.blobs import BlobStore


@dataclass(frozen=True)
class Passage:
    """A passage of a document, and where to mark it: boxes on its page (PDF) or image, as
    fractions; none for a format read as text (its characters are the place)."""

    chunk: Chunk | None  # None: the document opened at its start
    boxes: list[Region]
    page_count: int | None  # a PDF's pages, to turn them; None for anything else


class Reading:
    def __init__(self, store: Store, blobs: BlobStore) -> None:
        self.store = store
        self.blobs = blobs

    def _pdf(self, brain: Brain, document_id: int) -> tuple[Document, bytes]:
        document = self.store.get_document(brain.id, document_id)
        if document_format(document) != "pdf":
            raise InvalidInput(f"{document.name} is not a PDF: it has no pages to show")
        return document, self.blobs.get(document.content_hash)

    def page_image(self, brain: Brain, document_id: int, number: int, width: int) -> bytes:
        """Page `number` of a PDF as a PNG `width` pixels wide."""
        from loci.ingest.pdf_view import render_page  # PDFium: only where a page is shown

        return render_page(self._pdf(brain, document_id)[1], number, width)

    def passage(self, brain: Brain, document_id: int, chunk_id: int | None) -> Passage:
        """Passage `chunk_id` of the document and its boxes; None: the document at its start
        (a PDF's page count, no boxes)."""
        document = self.store.get_document(brain.id, document_id)
        chunk = None
        if chunk_id is not None:
            chunks = self.store.list_chunks(brain.id, document_id)
            chunk = next((c for c in chunks if c.id == chunk_id), None)
            if chunk is None:
                raise NotFound(f"no passage {chunk_id} in document {document_id}")
        region = chunk.location.region if chunk is not None else None
        boxes = [region] if region is not None else []
        if document_format(document) != "pdf":
            return Passage(chunk, boxes, None)
        from loci.ingest.pdf_view import page_count, passage_boxes

        data = self.blobs.get(document.content_hash)
        # Read by OCR, a passage has no text layer to search: its region is the place.
        if chunk is not None and region is None and chunk.location.page is not None:
            boxes = passage_boxes(data, chunk.location.page, chunk.text)
        return Passage(chunk, boxes, page_count(data))
