"""The brain graph over HTTP: pages and evidence with typed links, a timeline and versions;
plus capture-first saving and a provider's source items.

Thin over `loci.graph.service.BrainGraph` (as the `loci brain` CLI is). Every write records the
caller's user name as its actor, and the edits that take `expected_hash` refuse a stale one
with 409. Writes return at once; search indexes the change in the background (seconds).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials

from loci.api.deps import (
    AccountsDep,
    IntegrationsDep,
    LociDep,
    PrincipalDep,
    RawBody,
    ReadableBrain,
    WritableBrain,
    bearer,
    current_principal,
    session_cookie,
)
from loci.api.schemas.common import NOT_BLANK, NoNul, errors
from loci.api.schemas.graph import (
    ISO_DAY,
    CaptureIn,
    GraphAliasIn,
    GraphCreateIn,
    GraphEvidenceIn,
    GraphFieldsIn,
    GraphLinkIn,
    GraphMergeIn,
    GraphMoveIn,
    GraphQueryIn,
    GraphStatus,
    GraphTimelineIn,
    GraphTruthIn,
    GraphType,
)
from loci.graph.doctor import health
from loci.integrations.webhooks import SIGNATURE_HEADER
from loci.models import Brain
from loci.wire.graph import (
    CapturedOut,
    GraphDeleteOut,
    GraphEdgeOut,
    GraphEvidenceOut,
    GraphFolderOut,
    GraphHitOut,
    GraphPageOut,
    GraphQueryOut,
    GraphSummaryOut,
    GraphTimelineEntryOut,
    GraphVersionOut,
    GraphWrittenOut,
)
from loci.wire.graph_health import GraphDoctorOut

router = APIRouter(prefix="/brains/{brain}", tags=["graph"])

DocRef = Annotated[
    str,
    Path(
        min_length=1,
        max_length=300,
        pattern=NOT_BLANK,
        description="a graph document's id (or its exact title or an alias)",
    ),
]
Provider = Annotated[
    str,
    Path(
        min_length=1,
        max_length=32,
        pattern=r"^[a-z0-9][a-z0-9_-]*$",
        description="where the item comes from, e.g. jamie",
    ),
]
Filter = Annotated[str | None, Query(max_length=300)]
Flag = Annotated[bool, Query()]
DOCS = "/graph/documents"
ONE = DOCS + "/{doc_id}"


def _day(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


# reading ----------------------------------------------------------------------------------
@router.get(DOCS, response_model=list[GraphSummaryOut], responses=errors(404))
def list_graph_documents(
    brain: ReadableBrain,
    loci: LociDep,
    folder: Filter = None,
    type: Annotated[GraphType | None, Query()] = None,  # noqa: A002 - the parameter's name
    status: Annotated[GraphStatus | None, Query()] = None,
    include_merged: Flag = False,
    include_archived: Flag = False,
) -> list[GraphSummaryOut]:
    """Documents by folder (and below), type or status; merged and archived ones are left out
    unless asked for."""
    found = loci.graph.list_documents(
        brain, folder=folder, doc_type=type, status=status,
        include_merged=include_merged, include_archived=include_archived,
    )  # fmt: skip
    return [GraphSummaryOut.of(s) for s in found]


@router.get(ONE, response_model=GraphPageOut, responses=errors(400, 404))
def get_graph_document(doc_id: DocRef, brain: ReadableBrain, loci: LociDep) -> GraphPageOut:
    """One document: its Markdown, compiled truth, timeline, links and backlinks."""
    return GraphPageOut.of(loci.graph.get(brain, doc_id))


@router.get(ONE + "/history", response_model=list[GraphVersionOut], responses=errors(400, 404))
def graph_document_history(
    doc_id: DocRef, brain: ReadableBrain, loci: LociDep
) -> list[GraphVersionOut]:
    """The versions writes replaced or deleted, newest first, with who and when."""
    return [GraphVersionOut.of(v) for v in loci.graph.history(brain, doc_id)]


@router.get(
    "/graph/timeline", response_model=list[GraphTimelineEntryOut], responses=errors(400, 404)
)
def graph_timeline(
    brain: ReadableBrain,
    loci: LociDep,
    doc_id: Filter = None,
    since: Annotated[str | None, Query(pattern=ISO_DAY, description="on or after")] = None,
    until: Annotated[str | None, Query(pattern=ISO_DAY, description="before")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[GraphTimelineEntryOut]:
    """Timeline entries of the brain (or one document), newest first."""
    entries = loci.graph.timeline(brain, doc_id, since=since, until=until, limit=limit)
    return [GraphTimelineEntryOut.of(e) for e in entries]


@router.get("/graph/edges", response_model=list[GraphEdgeOut], responses=errors(404))
def graph_edges(brain: ReadableBrain, loci: LociDep) -> list[GraphEdgeOut]:
    """Every edge between the brain's graph documents (`source` → `target`, by id, with its
    type: a relation, `wiki_link` or `cites`), for drawing the graph; edges of merged and
    archived documents included (their documents are listed with `include_merged` and
    `include_archived`)."""
    return [GraphEdgeOut.of(e) for e in loci.graph.edges(brain)]


@router.get("/graph/folders", response_model=list[GraphFolderOut], responses=errors(404))
def graph_folders(brain: ReadableBrain, loci: LociDep) -> list[GraphFolderOut]:
    """The folder tree with document counts (in the folder; with its subfolders)."""
    return [GraphFolderOut.of(f) for f in loci.graph.folders(brain)]


@router.get("/graph/doctor", response_model=GraphDoctorOut, responses=errors(404))
def graph_doctor(
    brain: ReadableBrain,
    loci: LociDep,
    limit: Annotated[int, Query(ge=1, le=500, description="findings to list")] = 50,
) -> GraphDoctorOut:
    """The graph's health (`loci brain doctor` without its scratch-brain round trip), changing
    nothing: counts by kind, then the first findings, errors first, each with what to fix."""
    return GraphDoctorOut.of(health(loci.graph, brain, limit))


@router.post("/graph/query", response_model=GraphQueryOut, responses=errors(400, 404))
def query_graph(body: GraphQueryIn, brain: ReadableBrain, loci: LociDep) -> GraphQueryOut:
    """Hybrid search over pages and evidence, one hit per document, each with its links."""
    hits = loci.graph.query(
        brain, body.query, limit=body.limit, include_merged=body.include_merged,
        include_archived=body.include_archived,
    )  # fmt: skip
    return GraphQueryOut(query=body.query, hits=[GraphHitOut.of(h) for h in hits])


# writing ----------------------------------------------------------------------------------
@router.post(
    DOCS, status_code=201, response_model=GraphSummaryOut, responses=errors(400, 403, 404, 409)
)
def create_graph_document(
    body: GraphCreateIn, brain: WritableBrain, principal: PrincipalDep, loci: LociDep
) -> GraphSummaryOut:
    """A new document from `type` and `title` (and `text`, its compiled truth), or from a whole
    Markdown `text` whose frontmatter the given fields override. Validated; 409 if the id is
    taken."""
    made = loci.graph.create(
        brain, actor=principal.user.name, doc_type=body.type, title=body.title,
        folder=body.folder, doc_id=body.id, status=body.status, text=body.text,
    )  # fmt: skip
    return GraphSummaryOut.of(made)


@router.put(ONE + "/truth", response_model=GraphSummaryOut, responses=errors(400, 403, 404, 409))
def rewrite_graph_document(
    doc_id: DocRef,
    body: GraphTruthIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphSummaryOut:
    """Replace the compiled truth; frontmatter and timeline stay. With `expected_hash`, only if
    the document is still the version you read (else 409)."""
    done = loci.graph.rewrite(
        brain, doc_id, body.truth, actor=principal.user.name, expected_hash=body.expected_hash
    )
    return GraphSummaryOut.of(done)


@router.patch(ONE + "/fields", response_model=GraphSummaryOut, responses=errors(400, 403, 404, 409))
def set_graph_fields(
    doc_id: DocRef,
    body: GraphFieldsIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphSummaryOut:
    """Set frontmatter fields (an empty value clears a list). With `expected_hash`, only if the
    document is still the version you read (else 409)."""
    assignments = [f"{key}={value}" for key, value in body.fields.items()]
    done = loci.graph.set_fields(
        brain, doc_id, assignments, actor=principal.user.name, expected_hash=body.expected_hash
    )
    return GraphSummaryOut.of(done)


@router.post(
    ONE + "/timeline", response_model=GraphWrittenOut, responses=errors(400, 403, 404, 409)
)
def append_graph_timeline(
    doc_id: DocRef,
    body: GraphTimelineIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphWrittenOut:
    """Add a dated timeline entry; the same entry twice is kept once (`changed` false)."""
    done = loci.graph.append_timeline(
        brain, doc_id, body.text, actor=principal.user.name, at=_day(body.at),
        source=body.source, expected_hash=body.expected_hash,
    )  # fmt: skip
    return GraphWrittenOut.of(done)


@router.post(
    ONE + "/evidence",
    status_code=201,
    response_model=GraphEvidenceOut,
    responses=errors(400, 403, 404, 409),
)
def append_graph_evidence(
    doc_id: DocRef,
    body: GraphEvidenceIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphEvidenceOut:
    """Snapshot `text` into a new evidence record under evidence/ and cite it from the page's
    timeline; the same snapshot twice is one record."""
    evidence, page = loci.graph.append_evidence(
        brain, doc_id, body.text, title=body.title, actor=principal.user.name,
        source=body.source, expected_hash=body.expected_hash,
    )  # fmt: skip
    return GraphEvidenceOut(
        evidence=GraphSummaryOut.of(evidence), document=GraphSummaryOut.of(page)
    )


@router.post(ONE + "/aliases", response_model=GraphWrittenOut, responses=errors(400, 403, 404, 409))
def alias_graph_document(
    doc_id: DocRef,
    body: GraphAliasIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphWrittenOut:
    """Add another name for the document (409 if it already names another one)."""
    return GraphWrittenOut.of(
        loci.graph.alias(brain, doc_id, body.alias, actor=principal.user.name)
    )


@router.post(ONE + "/links", response_model=GraphWrittenOut, responses=errors(400, 403, 404, 409))
def link_graph_document(
    doc_id: DocRef,
    body: GraphLinkIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphWrittenOut:
    """Add a typed relation to another document of the brain."""
    done = loci.graph.link(brain, doc_id, body.relation, body.target, actor=principal.user.name)
    return GraphWrittenOut.of(done)


@router.post(ONE + "/merge", response_model=GraphSummaryOut, responses=errors(400, 403, 404, 409))
def merge_graph_document(
    doc_id: DocRef,
    body: GraphMergeIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphSummaryOut:
    """Fold this document into `into`: its aliases and timeline move, and it stays as a
    `merged` tombstone pointing at the survivor (returned)."""
    done = loci.graph.merge(
        brain, doc_id, body.into, actor=principal.user.name, alias_title=body.alias_title
    )
    return GraphSummaryOut.of(done)


@router.post(ONE + "/move", response_model=GraphSummaryOut, responses=errors(400, 403, 404, 409))
def move_graph_document(
    doc_id: DocRef,
    body: GraphMoveIn,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> GraphSummaryOut:
    """Move to another folder and/or rename (`new_id`); links from other documents follow."""
    done = loci.graph.move(
        brain, doc_id, actor=principal.user.name, folder=body.folder, new_id=body.new_id,
        expected_hash=body.expected_hash,
    )  # fmt: skip
    return GraphSummaryOut.of(done)


@router.delete(ONE, response_model=GraphDeleteOut, responses=errors(400, 403, 404, 409))
def delete_graph_document(
    doc_id: DocRef,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
    confirm: Annotated[bool, Query(description="really delete (default: a dry run)")] = False,
) -> GraphDeleteOut:
    """What deleting would do (a dry run), or with `confirm=true` do it; the last content is
    kept as a version."""
    plan = loci.graph.delete(brain, doc_id, actor=principal.user.name, confirm=confirm)
    return GraphDeleteOut.of(plan)


# capture first, curate later --------------------------------------------------------------
@router.post(
    "/captures", status_code=201, response_model=CapturedOut, responses=errors(400, 403, 404, 413)
)
def capture(
    body: CaptureIn, brain: WritableBrain, principal: PrincipalDep, loci: LociDep
) -> CapturedOut:
    """Keep something now as an inbox draft; curation (in the background) finds its home. The
    same text twice is one draft (`deduped`)."""
    captured = loci.library.save(
        brain, body.text, title=body.title, source=body.source, actor=principal.user.name
    )
    return CapturedOut.of(captured, brain)


def source_pusher(
    request: Request,
    brain: str,
    provider: Provider,
    body: RawBody,
    accounts: AccountsDep,
    integrations: IntegrationsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    session: Annotated[str | None, Depends(session_cookie)],
    signature: Annotated[
        str | None,
        Header(
            alias=SIGNATURE_HEADER,
            max_length=2000,
            description="instead of a token: `t=<unix time>,v1=<hex HMAC-SHA256 of "
            '"<t>.<raw body>">` with the brain\'s webhook secret for this provider '
            "(`loci webhooks create`); more than five minutes old is refused",
        ),
    ] = None,
) -> tuple[Brain, str]:
    """Who pushes, and into which brain: a signed request by its signature alone (a wrong or
    stale one is 401 whatever else it carries), otherwise the caller's token or session."""
    if signature is not None:
        pushed_to = integrations.webhooks.verify(brain, provider, signature, body)
        return pushed_to, f"webhook:{provider}"
    principal = current_principal(request, accounts, credentials, session)
    return accounts.brain(principal, brain, "write")[0], principal.user.name


@router.post(
    "/sources/{provider}",
    status_code=201,
    response_model=CapturedOut,
    responses=errors(400, 403, 404, 409, 413),
)
def ingest_source_item(
    provider: Provider,
    item: Annotated[
        dict[str, Any],
        NoNul,
        Body(
            description="the provider's item: `id`, `text` (or `transcript`), optionally "
            "`type`, `title`, `date`, `url`, `attendees`",
            examples=[{"id": "m-1", "text": "We agreed to ship on Friday.", "title": "Standup"}],
        ),
    ],
    pusher: Annotated[tuple[Brain, str], Depends(source_pusher)],
    loci: LociDep,
) -> CapturedOut:
    """Keep a provider's item (e.g. a meeting transcript with attendees), snapshot it into
    evidence/ and queue its curation; the same item twice is kept once (`deduped`). Send a
    token, or sign the request with the brain's webhook secret (`X-Loci-Signature`)."""
    brain, actor = pusher
    return CapturedOut.of(loci.library.ingest_item(brain, provider, item, actor=actor), brain)
