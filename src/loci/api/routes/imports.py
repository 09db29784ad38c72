"""Imports of what other tools export (`loci import` over HTTP): the kinds Loci reads, and an
export uploaded into a brain.

The upload is copied to a folder of the data directory as it arrives, up to the size cap
(the one every upload has), read whole by its reader and removed when the request ends,
whatever happened: an export is never kept, only what it held. The reply is the import's
report, item by item; what it added is indexed by the worker moments later."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Form, UploadFile

from loci.api.deps import LociDep, PrincipalDep, WritableBrain
from loci.api.schemas.common import NoNul, errors
from loci.auth.access import require_admin
from loci.errors import InvalidInput
from loci.imports.readers import BY_NAME, KINDS
from loci.ingest.size_cap import over_cap
from loci.ingest.sources import clean_name
from loci.wire.imports import ImportKindOut, ImportReportOut, import_kinds

router = APIRouter(tags=["imports"])
READ_CHUNK = 1024 * 1024
_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,8}$")


@router.get("/imports/kinds", response_model=list[ImportKindOut], responses=errors(401))
def list_import_kinds(_: PrincipalDep) -> list[ImportKindOut]:
    """The kinds of export Loci imports, as `kind` takes them."""
    return import_kinds()


@router.post(
    "/brains/{brain}/imports",
    response_model=ImportReportOut,
    responses=errors(400, 403, 404, 413),
)
def import_export(
    brain: WritableBrain,
    loci: LociDep,
    principal: PrincipalDep,
    file: Annotated[UploadFile, File(description="the export, as the other tool wrote it")],
    kind: Annotated[
        str,
        NoNul,
        Form(
            max_length=40,
            description="what the export is: " + "; ".join(f"`{k.name}`: {k.what}" for k in KINDS),
        ),
    ],
    dry_run: Annotated[
        bool, Form(description="only say what the import would add, update, skip and fail")
    ] = False,
    tags: Annotated[
        str | None,
        NoNul,
        Form(max_length=2000, description="comma-separated tags for every imported document"),
    ] = None,
) -> ImportReportOut:
    """Import an export of another tool into the brain: each item a document known by its
    place in that tool, so importing the same export again adds nothing and an item edited
    since updates its document. A bad item fails alone, with its reason, in `items`; an export
    Loci cannot read is refused whole (400) and nothing of it is imported. With `dry_run`
    nothing is written and nothing is fetched. An export of places to follow (`opml`) makes
    the server fetch them on a schedule: as following one does, it is for admins, and only on
    the hosts `LOCI_SOURCES_ALLOWED_HOSTS` lists."""
    if kind not in BY_NAME:
        known = ", ".join(k.name for k in KINDS)
        raise InvalidInput(f"no importer for {kind!r}; Loci imports: {known}")
    if BY_NAME[kind].follows is not None:
        require_admin(principal, "follow the feeds of an OPML file on the server")
    wanted = [t.strip() for t in (tags or "").split(",") if t.strip()]
    with _kept(file, loci.settings.scratch_dir, loci.settings.max_file_bytes) as path:
        report = loci.importing.run(brain, kind, path, dry_run=dry_run, tags=wanted, confined=True)
    return ImportReportOut.of(report)


@contextmanager
def _kept(upload: UploadFile, scratch: Path | None, limit: int) -> Iterator[Path]:
    """The upload as a file of its own folder in `scratch`, refused past `limit` bytes, and
    gone afterwards. The file is named "export" and keeps only a plain suffix of the name the
    client sent (a reader may go by it): a sent name never becomes a path."""
    name = clean_name(upload.filename or "export")
    suffix = Path(name).suffix
    if scratch is not None:
        scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="import-", dir=scratch))
    try:
        path = folder / ("export" + (suffix.lower() if _SUFFIX.match(suffix) else ""))
        size = 0
        with path.open("wb") as out:
            while chunk := upload.file.read(READ_CHUNK):
                size += len(chunk)
                if size > limit:
                    too_large = over_cap(name, None, limit)
                    assert too_large is not None
                    raise too_large
                out.write(chunk)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)
