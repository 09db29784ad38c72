"""Markdown notes: create, read (with safe HTML), update against the version read, delete."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response

from loci.api.deps import LociDep, ReadableBrain, RowId, WritableBrain
from loci.api.schemas.common import errors
from loci.api.schemas.notes import NoteIn, NoteUpdate
from loci.render import markdown_to_safe_html
from loci.wire.documents import AddedOut, DocumentOut
from loci.wire.notes import NoteListedOut, NoteOut

router = APIRouter(prefix="/brains/{brain}", tags=["notes"])


@router.post("/notes", status_code=201, response_model=AddedOut, responses=errors(400, 404, 403))
def create_note(body: NoteIn, brain: WritableBrain, loci: LociDep) -> AddedOut:
    """Save a note; it is searchable with the brain's files once indexed (seconds)."""
    added = loci.library.add_note(
        brain, body.text, title=body.title, tags=body.tags, color=body.color
    )
    return AddedOut(document=DocumentOut.of(added.document, brain), deduped=added.deduped)


@router.get("/notes", response_model=list[NoteListedOut], responses=errors(404))
def list_notes(
    brain: ReadableBrain, loci: LociDep, tag: str | None = Query(default=None, max_length=200)
) -> list[NoteListedOut]:
    """The brain's notes, oldest first, each with its first lines."""
    notes = loci.library.documents(brain, kind="note", tag=tag)
    excerpts = loci.library.note_excerpts(notes)
    return [
        NoteListedOut(**DocumentOut.of(d, brain).model_dump(), excerpt=excerpts[d.id])
        for d in notes
    ]


@router.get("/notes/{document_id}", response_model=NoteOut, responses=errors(404))
def get_note(document_id: RowId, brain: ReadableBrain, loci: LociDep) -> NoteOut:
    document, text = loci.library.note(brain, document_id)
    return NoteOut(
        document=DocumentOut.of(document, brain), text=text, html=markdown_to_safe_html(text)
    )


@router.put(
    "/notes/{document_id}",
    response_model=DocumentOut,
    responses=errors(400, 404, 403, 409),
)
def update_note(
    document_id: RowId, body: NoteUpdate, brain: WritableBrain, loci: LociDep
) -> DocumentOut:
    """Replace a note's text, title, tags and colour — only if it is still the version you
    read (`expected_hash`); otherwise 409, and nothing is overwritten."""
    document = loci.library.update_note(
        brain,
        document_id,
        body.text,
        expected_hash=body.expected_hash,
        title=body.title,
        tags=body.tags,
        color=body.color,
    )
    return DocumentOut.of(document, brain)


@router.delete("/notes/{document_id}", status_code=204, responses=errors(404, 403))
def delete_note(document_id: RowId, brain: WritableBrain, loci: LociDep) -> Response:
    loci.library.note(brain, document_id)  # a file's id is not a note: 404 rather than deleting it
    loci.library.remove(brain, document_id)
    return Response(status_code=204)
