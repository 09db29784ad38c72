"""Notes: short Markdown a person writes in Loci, added, listed as cards, read and edited (an
edit made against a stale version is refused, not merged)."""

from __future__ import annotations

from collections.abc import Sequence

from loci.errors import Conflict, InvalidInput, NotFound
from loci.ingest.sources import (
    note_body,
    note_excerpt,
    note_markdown,
    note_name,
    note_title,
)
from loci.models import (
    Brain,
    Document,
    NewDocument,
)
from loci.service.adding import Adding, AddResult
from loci.store.blobs import sha256_hex
from loci.store.job_order import INDEX_JOB


class Notes(Adding):
    """Writing and editing notes (a note is added as any document is)."""

    def add_note(
        self,
        brain: Brain,
        text: str,
        *,
        title: str | None = None,
        tags: Sequence[str] = (),
        color: str | None = None,
    ) -> AddResult:
        if not text.strip():
            raise InvalidInput("the note is empty")
        return self.add_bytes(
            brain,
            note_name(text, title),
            note_markdown(text, title, tags),
            kind="note",
            tags=tags,
            # Untitled, it reads as its first line; that title stays out of the note's bytes,
            # so it follows the first line when the text is edited.
            title=title or note_title(text),
            mime_type="text/markdown",
            metadata={"color": color} if color else None,
        )

    def note_excerpts(self, documents: Sequence[Document]) -> dict[int, str]:
        """The first lines of each note (by id), for a list of notes as cards."""
        return {
            d.id: note_excerpt(note_body(self.blobs.get(d.content_hash)), d.title)
            for d in documents
        }

    def note(self, brain: Brain, document_id: int) -> tuple[Document, str]:
        """A note and the text it was written with (without its frontmatter)."""
        document = self.store.get_document(brain.id, document_id)
        if document.kind != "note":
            raise NotFound(f"no note with id {document_id}")
        return document, note_body(self.blobs.get(document.content_hash))

    def update_note(
        self,
        brain: Brain,
        document_id: int,
        text: str,
        *,
        expected_hash: str,
        title: str | None = None,
        tags: Sequence[str] = (),
        color: str | None = None,
    ) -> Document:
        """Rewrite a note if it is still at `expected_hash`; a concurrent edit is `Conflict`."""
        old, _ = self.note(brain, document_id)
        if not text.strip():
            raise InvalidInput("the note is empty")
        if old.content_hash != expected_hash:  # checked again, atomically, by the store
            raise Conflict("the note changed since you read it; reload it and apply your edit")
        tags = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
        data = note_markdown(text, title, tags)
        self.blobs.put(data)
        new = NewDocument(
            kind="note",
            name=note_name(text, title),
            title=title or note_title(text),
            source_url=None,
            mime_type="text/markdown",
            size_bytes=len(data),
            content_hash=sha256_hex(data),
            tags=tags,
            metadata={"color": color} if color else {},
        )
        document, unused = self.store.replace_content(
            brain.id,
            document_id,
            expected_hash,
            new,
            INDEX_JOB,
            keep_versions=self.settings.versions_keep,
        )
        self.forget_blobs(unused)
        return document
