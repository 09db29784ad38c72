"""A brain's documents: upload, list, read, download, preview, chunks, delete, reprocess, URLs.

Uploads return at once with status `processing`; the worker parses, chunks and embeds in the
background, and the list shows each document's status (and a failure's reason) as it moves.
"""

from __future__ import annotations

import mimetypes
from typing import Annotated, Any, Literal, get_args
from urllib.parse import quote

from fastapi import APIRouter, File, Form, Header, Query, Response, UploadFile
from fastapi.responses import JSONResponse

from loci.api.byte_ranges import byte_slice
from loci.api.deps import LociDep, ReadableBrain, RowId, WritableBrain
from loci.api.errors import error_response, status_of
from loci.api.schemas.common import MAX_ID, NoNul, errors
from loci.api.schemas.documents import UrlIn
from loci.api.schemas.preflight import UrlsPreflightIn
from loci.errors import LociError
from loci.ingest.formats import FORMATS
from loci.ingest.pdf_view import MAX_WIDTH, MIN_WIDTH
from loci.models import DocumentKind, DocumentStatus
from loci.search.related import MAX_RELATED
from loci.service import Upload
from loci.service.document_query import DocumentQuery, Sort
from loci.wire.common import ErrorOut
from loci.wire.documents import (
    AddedOut,
    ChunkOut,
    DocumentOut,
    PassageMarksOut,
    RelatedOut,
    TextOut,
    UploadOut,
    UploadResultOut,
)
from loci.wire.preflight import PreflightOut

router = APIRouter(prefix="/brains/{brain}", tags=["files"])
READ_CHUNK = 1024 * 1024
TOTAL_HEADER = "X-Total-Count"


def _mime(upload: UploadFile) -> str | None:
    """The type the client declared, unless it is the generic one: then a guess by name."""
    declared = upload.content_type
    if declared and declared != "application/octet-stream":
        return declared
    return mimetypes.guess_type(upload.filename or "")[0] or declared


def _read(upload: UploadFile, limit: int) -> Upload:
    """An uploaded file read up to one byte past the cap (no more is held in memory); the
    service holds its whole size against the cap, with the message every surface gives."""
    data = upload.file.read(limit + 1)
    size = upload.size if upload.size is not None else len(data)
    return Upload(upload.filename or "upload", data, max(size, len(data)), _mime(upload))


def _tags(raw: str | None) -> list[str]:
    return [t.strip() for t in (raw or "").split(",") if t.strip()]


@router.post(
    "/files",
    status_code=202,
    response_model=UploadOut,
    responses=errors(404, 403, 413, 400),
)
def upload_files(
    brain: WritableBrain,
    loci: LociDep,
    files: Annotated[list[UploadFile], File(description="one or more files", min_length=1)],
    tags: Annotated[
        str | None, NoNul, Form(description="comma-separated tags for every file")
    ] = None,
) -> UploadOut | JSONResponse:
    """Store files and queue them for indexing. Each file stands alone: one that is too large
    or empty is reported in its result and the others still land. Identical bytes already in
    the brain return the existing document with `deduped: true`. When every file fails, the
    response carries the first failure's status (413 for too large)."""
    limit = loci.settings.max_file_bytes
    results: list[UploadResultOut] = []
    first_error: LociError | None = None
    for upload in files:
        name = upload.filename or "upload"
        try:
            added = loci.library.add_upload(brain, _read(upload, limit), _tags(tags))
            results.append(
                UploadResultOut(
                    name=added.document.name,
                    document=DocumentOut.of(added.document, brain),
                    deduped=added.deduped,
                )
            )
        except LociError as error:
            first_error = first_error or error
            results.append(
                UploadResultOut(name=name, error=ErrorOut(error=error.code, message=error.message))
            )
    if first_error is not None and all(r.document is None for r in results):
        return error_response(status_of(first_error), first_error.code, first_error.message)
    return UploadOut(results=results)


@router.post(
    "/urls",
    status_code=202,
    response_model=AddedOut,
    responses=errors(400, 404, 403, 422, 502),
)
def add_url(body: UrlIn, brain: WritableBrain, loci: LociDep) -> AddedOut:
    """Fetch a web page now (refusing private addresses and challenge pages) and queue it —
    or, given `markdown`, keep that text for the page without fetching it (what the browser
    extension saves). Either way it is searchable once indexed, moments later."""
    if body.markdown is not None:
        added = loci.library.add_page_text(
            brain, body.url, body.markdown, title=body.title, tags=body.tags
        )
    else:
        added = loci.library.add_url(brain, body.url, tags=body.tags)
    return AddedOut(
        document=DocumentOut.of(added.document, brain),
        deduped=added.deduped,
        refreshed=added.refreshed,
    )


@router.post("/preflight/files", response_model=PreflightOut, responses=errors(400, 404, 403, 413))
def preflight_files(
    brain: WritableBrain,
    loci: LociDep,
    files: Annotated[list[UploadFile], File(description="one or more files", min_length=1)],
) -> PreflightOut:
    """What uploading these files would do, without storing anything: per file its type and
    parser, size, whether it is already in the brain (and as which document), whether it is
    over the size limit, whether OCR will run, and chunks and indexing time (estimated); totals;
    `status` ok | warning | error with `warnings`, `errors` and `existing_rows`."""
    limit = loci.settings.max_file_bytes
    uploads = [_read(upload, limit) for upload in files]
    return PreflightOut.of(loci.library.preflight(brain, uploads=uploads))


@router.post("/preflight/urls", response_model=PreflightOut, responses=errors(400, 404, 403, 422))
def preflight_urls(body: UrlsPreflightIn, brain: WritableBrain, loci: LociDep) -> PreflightOut:
    """What adding these URLs would do, without storing anything. Each address is checked
    first, without connecting; an allowed URL is fetched (rendered in a browser if it needs
    JavaScript) to see its type, size and whether the brain already has it."""
    return PreflightOut.of(loci.library.preflight(brain, urls=body.urls))


def _one_of(values: tuple[str, ...]) -> str:
    """The pattern of a comma-separated list of some of `values` ("pdf,word")."""
    one = "|".join(values)
    return f"^({one})(,({one}))*$"


def _listed(raw: str | None) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(raw.split(","))) if raw else ()


@router.get(
    "/files",
    response_model=list[DocumentOut],
    responses={
        200: {"headers": {TOTAL_HEADER: {"description": "how many match, over every page"}}},
        **errors(404),
    },
)
def list_files(
    brain: ReadableBrain,
    loci: LociDep,
    response: Response,
    status: DocumentStatus | None = None,
    kind: Annotated[
        str | None,
        Query(
            max_length=200,
            pattern=_one_of(get_args(DocumentKind)),
            description="only these kinds, comma-separated (file,web,note)",
        ),
    ] = None,
    format: Annotated[  # noqa: A002 - the parameter's name
        str | None,
        Query(
            max_length=300,
            pattern=_one_of(FORMATS),
            description="only these formats, comma-separated (pdf,word,image,web,note,…)",
        ),
    ] = None,
    tag: str | None = Query(default=None, max_length=200),
    q: Annotated[
        str | None,
        Query(max_length=300, description="words in the name, title, path or address"),
    ] = None,
    sort: Sort = "added",
    order: Literal["asc", "desc"] = "asc",
    limit: Annotated[int | None, Query(ge=1, le=1000, description="a page of this many")] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[DocumentOut]:
    """The brain's documents with their status: oldest first unless `sort` and `order` say
    otherwise (`sort=added&order=desc`: newest first), all of them unless `limit` asks for a
    page. The `X-Total-Count` header says how many match the filters."""
    query = DocumentQuery(
        statuses=(status,) if status else (),
        kinds=_listed(kind),
        formats=_listed(format),
        tag=tag,
        words=q,
        sort=sort,
        descending=order == "desc",
        limit=limit,
        offset=offset,
    )
    found = loci.library.find(brain, query)
    response.headers[TOTAL_HEADER] = str(found.total)
    return [DocumentOut.of(d, brain) for d in found.documents]


@router.get("/files/{document_id}", response_model=DocumentOut, responses=errors(404))
def get_file(document_id: RowId, brain: ReadableBrain, loci: LociDep) -> DocumentOut:
    return DocumentOut.of(loci.library.document(brain, document_id), brain)


@router.get(
    "/files/{document_id}/download",
    response_class=Response,
    responses={
        200: {"content": {"application/octet-stream": {}}},
        206: {"description": "the byte range asked for (`Range: bytes=start-end`)"},
        416: {"description": "a range past the end"},
        **errors(404),
    },
)
def download_file(
    document_id: RowId,
    brain: ReadableBrain,
    loci: LociDep,
    range_: Annotated[str | None, Header(alias="Range", max_length=200)] = None,
) -> Response:
    """The original bytes, always as an attachment (never rendered by the browser); one byte
    range on request, so a player can seek in a recording."""
    document = loci.library.document(brain, document_id)
    part = byte_slice(loci.library.original(brain, document_id), range_)
    ascii_name = document.name.encode("ascii", "replace").decode().replace('"', "_")
    headers = {
        "Content-Disposition": (
            f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(document.name)}"
        ),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox",
        "Accept-Ranges": "bytes",
    }
    if part.content_range is not None:
        headers["Content-Range"] = part.content_range
    return Response(
        content=part.body,
        status_code=part.status,
        media_type=document.mime_type or "application/octet-stream",
        headers=headers,
    )


def attachment(data: bytes, name: str, mime_type: str | None) -> Response:
    """Bytes a user gave, as a download the browser never renders (nor sniffs, nor runs)."""
    ascii_name = name.encode("ascii", "replace").decode().replace('"', "_")
    return Response(
        content=data,
        media_type=mime_type or "application/octet-stream",
        headers={
            "Content-Disposition": (
                f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name)}"
            ),
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox",
        },
    )


@router.get("/files/{document_id}/text", response_model=TextOut, responses=errors(404))
def file_text(
    document_id: RowId,
    brain: ReadableBrain,
    loci: LociDep,
    max_chars: int = Query(default=200_000, ge=1, le=5_000_000),
) -> TextOut:
    """The extracted text, as search sees it (empty until the document is indexed)."""
    loci.library.document(brain, document_id)
    text = loci.library.document_text(brain, document_id) or ""
    return TextOut(document_id=document_id, text=text[:max_chars], truncated=len(text) > max_chars)


@router.get("/files/{document_id}/chunks", response_model=list[ChunkOut], responses=errors(404))
def file_chunks(document_id: RowId, brain: ReadableBrain, loci: LociDep) -> list[ChunkOut]:
    """The passages search matches against, with page, lines and heading path."""
    loci.library.document(brain, document_id)
    return [ChunkOut.of(c) for c in loci.library.chunks(brain, document_id)]


@router.get(
    "/files/{document_id}/page",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}}, **errors(400, 404)},
)
def file_page(
    document_id: RowId,
    brain: ReadableBrain,
    loci: LociDep,
    number: Annotated[int, Query(ge=1, le=100_000, description="the page, from 1")],
    width: Annotated[int, Query(ge=MIN_WIDTH, le=MAX_WIDTH, description="in pixels")] = 1000,
) -> Response:
    """A page of a PDF drawn as a PNG image (400 for a document that is not a PDF, or a page
    it does not have)."""
    png = loci.reading.page_image(brain, document_id, number, width)
    # Private: a page is the brain's content. Cached a little: a reader turns back and forth.
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})


@router.get("/files/{document_id}/passage", response_model=PassageMarksOut, responses=errors(404))
def file_passage(
    document_id: RowId,
    brain: ReadableBrain,
    loci: LociDep,
    chunk_id: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="the passage (a chunk id); none: the start")
    ] = None,
) -> PassageMarksOut:
    """A passage of the document and where to mark it in the source: its boxes on the PDF
    page (found in the page's text layer, or the region OCR read) or the image; and a PDF's
    page count, to turn its pages."""
    return PassageMarksOut.of(loci.reading.passage(brain, document_id, chunk_id))


@router.get("/files/{document_id}/related", response_model=list[RelatedOut], responses=errors(404))
def related_files(
    document_id: RowId,
    brain: ReadableBrain,
    loci: LociDep,
    limit: int = Query(default=5, ge=1, le=MAX_RELATED),
) -> list[RelatedOut]:
    """Other documents about what this one is about, closest first: the brain's passages
    nearest the mean of this document's passage vectors, best per document. Empty while the
    document is not indexed yet."""
    return [RelatedOut.of(r, brain) for r in loci.searching.related(brain, document_id, limit)]


@router.delete("/files/{document_id}", status_code=204, responses=errors(404, 403))
def delete_file(document_id: RowId, brain: WritableBrain, loci: LociDep) -> Response:
    """Delete the document, its chunks and index entries, and its original if unshared."""
    loci.library.remove(brain, document_id)
    return Response(status_code=204)


@router.post(
    "/files/{document_id}/reprocess",
    status_code=202,
    response_model=DocumentOut,
    responses=errors(404, 403),
)
def reprocess_file(document_id: RowId, brain: WritableBrain, loci: LociDep) -> DocumentOut:
    """Parse, chunk and embed again from the stored original (after a failure, or an upgrade)."""
    return DocumentOut.of(loci.library.reprocess(brain, document_id), brain)
