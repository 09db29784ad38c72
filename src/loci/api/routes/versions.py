"""A document's earlier contents: list them, download one, diff two, restore one.

A file synced or added again after an edit, a note rewritten and a web page fetched again keep
what they had as numbered versions (`LOCI_VERSIONS_KEEP` of them). The current content has the
next number, so it can be downloaded and diffed the same way. Access is the document's: another
brain's document is a 404, and a restore writes.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from loci.api.deps import LociDep, ReadableBrain, RowId, WritableBrain
from loci.api.routes.files import attachment
from loci.api.schemas.common import errors
from loci.wire.versions import RestoredOut, VersionDiffOut, VersionListOut

router = APIRouter(prefix="/brains/{brain}/files/{document_id}/versions", tags=["files"])
MAX_VERSION = 2**31 - 1
VersionNumber = Annotated[int, Path(ge=1, le=MAX_VERSION, description="a version's number")]


@router.get("", response_model=VersionListOut, responses=errors(404))
def list_versions(document_id: RowId, brain: ReadableBrain, loci: LociDep) -> VersionListOut:
    """The current content and the earlier ones kept, newest first, with when each was saved
    and replaced, its size and its SHA-256."""
    return VersionListOut.of(loci.versions.list(brain, document_id), brain)


@router.get("/diff", response_model=VersionDiffOut, responses=errors(404))
def diff_versions(
    document_id: RowId,
    brain: ReadableBrain,
    loci: LociDep,
    old: int = Query(ge=1, le=MAX_VERSION, description="the earlier version"),
    new: int | None = Query(
        default=None, ge=1, le=MAX_VERSION, description="the later version (default: current)"
    ),
) -> VersionDiffOut:
    """A unified diff of two versions' extracted text. A format without text (a PDF, an
    image) has no diff: `diff` is null and `reason` says so."""
    return VersionDiffOut.of(loci.versions.diff(brain, document_id, old, new))


@router.get(
    "/{version}/download",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}}, **errors(404)},
)
def download_version(
    document_id: RowId, version: VersionNumber, brain: ReadableBrain, loci: LociDep
) -> Response:
    """A version's exact bytes, always as an attachment (never rendered by the browser)."""
    kept, data = loci.versions.content(brain, document_id, version)
    return attachment(data, kept.name, kept.mime_type)


@router.post(
    "/{version}/restore",
    status_code=202,
    response_model=RestoredOut,
    responses=errors(404, 403, 409),
)
def restore_version(
    document_id: RowId, version: VersionNumber, brain: WritableBrain, loci: LociDep
) -> RestoredOut:
    """Make a version the document's content again (same id; the worker re-indexes it). The
    content it replaces is kept as the newest version. A followed folder's file gets the
    restored bytes too; if the file changed since Loci last read it, that is a 409 and nothing
    is restored."""
    return RestoredOut.of(loci.versions.restore(brain, document_id, version), brain)
