"""Notes: written, read and edited through the API."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.wire.documents import DocumentOut


class NoteListedOut(DocumentOut):
    excerpt: str = Field(
        description="the note's first lines, plain text (its title's line left out)"
    )


class NoteOut(BaseModel):
    document: DocumentOut
    text: str
    html: str = Field(description="the note rendered from Markdown and sanitized")
