"""Folders a brain follows: list them, register one (admins, inside the server's allowed roots),
stop following one, sync them now, and settle a conflict of a folder kept as pages. A sync
runs in the request and answers with its report; the worker then indexes what it queued.

Feeds and web pages a brain follows on a schedule are sources too (listed and removed with the
folders): an admin follows one at `/followed` (only on hosts the server's
`LOCI_SOURCES_ALLOWED_HOSTS` lists), the worker runs it on its schedule, and
`/followed/{id}/sync` runs it now.

They live at `/brains/{brain}/folders` (and `/sync`, as `loci sync`), not `/sources`:
`/brains/{brain}/sources/{provider}` already takes providers' items (webhooks), and a source id
under the same prefix would make `/sources/jamie` and `/sources/3` ambiguous."""

from __future__ import annotations

from fastapi import APIRouter, Query

from loci.api.deps import (
    LociDep,
    ManagedBrain,
    PrincipalDep,
    ReadableBrain,
    RowId,
    SourceRootsDep,
    WritableBrain,
)
from loci.api.schemas.common import errors
from loci.api.schemas.sources import FollowIn, ResolveIn, SourceIn
from loci.auth.access import require_admin
from loci.jobs.worker import worker_name
from loci.service.source_roots import confine
from loci.wire.sources import SourceOut, SourceRemovedOut, SourceSyncOut, SyncOut

router = APIRouter(prefix="/brains/{brain}", tags=["folders"])


@router.get("/folders", response_model=list[SourceOut], responses=errors(404))
def list_folders(brain: ReadableBrain, loci: LociDep) -> list[SourceOut]:
    """The folders this brain follows, with what their last sync found and whether a running
    server or worker watches them."""
    watching = loci.sources.watching(brain)
    return [SourceOut.of(s, brain.name, watching) for s in loci.sources.list(brain)]


@router.post("/folders", status_code=201, response_model=SourceOut, responses=errors(400, 403, 404))
def add_folder(
    body: SourceIn,
    brain: ManagedBrain,
    principal: PrincipalDep,
    loci: LociDep,
    roots: SourceRootsDep,
) -> SourceOut:
    """Follow a folder on the server, which must lie inside one of the directories
    `LOCI_SOURCES_ALLOWED_ROOTS` lists and neither be nor hold Loci's data directory: admins
    only, with a credential of their whole account, since it names a path on the server, beyond
    any brain. Nothing is read until a sync."""
    require_admin(principal, "register a folder on the server")
    folder = confine(body.path, roots, loci.settings.fence)
    source = loci.sources.add(brain, folder, body.include, body.exclude, body.on_delete, body.mode)
    return SourceOut.of(source, brain.name, {})  # watched from the watcher's next look


@router.post(
    "/followed", status_code=201, response_model=SourceOut, responses=errors(400, 403, 404)
)
def follow(
    body: FollowIn, brain: ManagedBrain, principal: PrincipalDep, loci: LociDep
) -> SourceOut:
    """Follow a feed or web pages on a schedule: admins only (the server fetches the address
    on its own, again and again), and only on a host `LOCI_SOURCES_ALLOWED_HOSTS` lists. The
    worker runs it first at once, then every `every_s` seconds."""
    require_admin(principal, "follow a feed or page on the server")
    options = {"urls": body.urls} if body.urls else {}
    source = loci.scheduled.add(
        brain,
        body.url,
        body.every_s,
        kind=body.kind,
        on_delete=body.on_delete,
        options=options,
        confined=True,
    )
    return SourceOut.of(source, brain.name, {})


@router.post(
    "/followed/{source_id}/sync", response_model=SourceSyncOut, responses=errors(403, 404, 409)
)
def sync_followed(source_id: RowId, brain: WritableBrain, loci: LociDep) -> SourceSyncOut:
    """Run a followed feed or page now, in this request (409 while a worker runs it), and
    report what changed; the worker indexes what it added."""
    result = loci.scheduled.run_now(brain, source_id, worker_name())
    return SourceSyncOut.of(result, brain.name)


@router.delete("/folders/{source_id}", response_model=SourceRemovedOut, responses=errors(403, 404))
def remove_folder(
    source_id: RowId,
    brain: ManagedBrain,
    loci: LociDep,
    keep_documents: bool = Query(default=False, description="keep the folder's documents"),
) -> SourceRemovedOut:
    """Stop following a folder; its documents are removed unless `keep_documents`."""
    source, removed = loci.sources.remove(brain, source_id, keep_documents)
    return SourceRemovedOut(
        source=SourceOut.of(source, brain.name, {}),
        documents_kept=keep_documents,
        documents_removed=removed,
    )


@router.post("/sync", response_model=SyncOut, responses=errors(403, 404))
def sync_folders(brain: WritableBrain, loci: LociDep) -> SyncOut:
    """Bring each followed folder up to date once (in this request) and report what changed;
    new and changed files are then indexed by the worker (`GET /brains/{brain}/status`)."""
    report = loci.sources.sync(brain)
    return SyncOut(ok=report.ok, sources=[SourceSyncOut.of(r, brain.name) for r in report.sources])


@router.post(
    "/folders/{source_id}/resolve", response_model=SourceSyncOut, responses=errors(403, 404)
)
def resolve_conflict(
    source_id: RowId, body: ResolveIn, brain: WritableBrain, loci: LociDep
) -> SourceSyncOut:
    """Settle a conflict of a folder kept as pages (a file changed both in the folder and in
    Loci) by keeping one side: `file` puts the file's text into the page (the page's history
    keeps Loci's), `loci` writes the page to the file. The folder is synced at once."""
    return SourceSyncOut.of(
        loci.sources.resolve(brain, source_id, body.path, body.keep), brain.name
    )
