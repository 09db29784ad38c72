"""A document's earlier contents (`/brains/{brain}/files/{id}/versions`): the list, a diff
between two of them, and a restore's result. `loci show ID --versions --json` and the
`loci versions` commands print the same shapes."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.models import Brain
from loci.service.versions import Restored, VersionDiff, VersionList
from loci.wire.documents import DocumentOut
from loci.wire.mirror import Mirror, shown


class VersionOut(Mirror):
    number: int = Field(description="counts the document's contents from 1")
    name: str
    mime_type: str | None
    size_bytes: int
    content_hash: str
    saved_at: str = Field(description="when this content became the document's")
    replaced_at: str = Field(description="when newer content took its place")


class CurrentVersionOut(BaseModel):
    number: int
    size_bytes: int
    content_hash: str
    saved_at: str


class VersionListOut(BaseModel):
    document: DocumentOut
    current: CurrentVersionOut
    versions: list[VersionOut] = Field(description="earlier contents, newest first")

    @classmethod
    def of(cls, listed: VersionList, brain: Brain) -> VersionListOut:
        document = listed.document
        return cls(
            document=DocumentOut.of(document, brain),
            current=CurrentVersionOut(
                number=listed.current,
                size_bytes=document.size_bytes,
                content_hash=document.content_hash,
                saved_at=listed.current_since,
            ),
            versions=[VersionOut.of(v) for v in listed.versions],
        )


class VersionDiffOut(BaseModel):
    document_id: int
    old: int
    new: int
    diff: str | None = Field(
        description="a unified diff of the two versions' extracted text (empty: the same text)"
    )
    reason: str | None = Field(description="why there is no diff (a format without text)")

    @classmethod
    def of(cls, diff: VersionDiff) -> VersionDiffOut:
        return shown(cls, diff, document_id=diff.document.id)


class RestoredOut(BaseModel):
    document: DocumentOut
    restored: int = Field(description="the version whose content is current again")
    changed: bool = Field(description="false: it was the current content already")
    file_written: bool = Field(
        default=False,
        description="true: the document is a followed folder's file, and the restored bytes "
        "were written to that file too (a file changed since Loci last read it is a 409 "
        "conflict instead, and nothing is restored)",
    )

    @classmethod
    def of(cls, restored: Restored, brain: Brain) -> RestoredOut:
        return cls(
            document=DocumentOut.of(restored.document, brain),
            restored=restored.number,
            changed=restored.changed,
            file_written=restored.written_to is not None,
        )
