"""Request and response bodies of the HTTP API — separate from the storage rows they show.

Each response model has a `of(...)` constructor from the domain model, so what the API exposes
is chosen field by field (a token's hash, for one, never leaves the store).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from loci.auth.accounts import IssuedToken
from loci.curate.pipeline import Captured, Ingested
from loci.graph.results import DeletePlan, Page, QueryHit, Written
from loci.models import (
    ApiToken,
    Brain,
    Document,
    DocumentKind,
    DocumentStatus,
    Hit,
    Member,
    Role,
    SearchMode,
    TokenScope,
    Visibility,
)
from loci.service import Status

BRAIN_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"  # user names too: `loci.auth.accounts.check_name`
# Text the service refuses as empty (Python's `str.strip` also strips \x1c-\x1f, which a regex
# `\s` does not match) is refused by the schema already.
NOT_BLANK = r"[^\s\x1c-\x1f]"
# The largest id the API takes: ids are sequential, and above 2**53 a JSON number loses digits
# in many clients (and FastAPI writes the schema's bounds as floats).
MAX_ID = 2**53 - 1


def _json_integer(cls: type, value: object) -> object:
    """A field validator: JSON Schema's integer is a number with no fraction (3 or 3.0), never a
    string or a boolean, which pydantic's lax mode would take."""
    if isinstance(value, bool | str):
        raise ValueError("an integer is a JSON number")
    return value


def json_integers(*fields: str) -> Any:
    return field_validator(*fields, mode="before")(classmethod(_json_integer))


REGION_HELP = (
    "for text read by OCR: where it sits on the page or image, as left,top,right,bottom"
    " fractions of its width and height (origin top left)"
)
CONFIDENCE_HELP = "for text read by OCR: the engine's lowest confidence in it, 0-1"


class Mirror(BaseModel):
    """A response whose fields are, name for name, those of the domain object it shows: `of`
    copies them (tuples become lists). Models that choose or reshape fields write their own."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def of(cls, value: Any) -> Self:
        return cls.model_validate(value)


def _timestamp(value: float | None) -> str | None:
    if value is None:
        return None
    return dt.datetime.fromtimestamp(value, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ErrorOut(BaseModel):
    error: str = Field(description="stable machine-readable code, e.g. not_found")
    message: str = Field(description="one line a person can read")


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the error statuses a route can answer with."""
    return {status: {"model": ErrorOut} for status in statuses}


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str


# users, sessions, tokens ------------------------------------------------------------------
class UserOut(Mirror):
    id: int
    name: str
    is_admin: bool
    created_at: str


class TokenOut(BaseModel):
    id: int
    name: str
    prefix: str = Field(description="the first characters of the secret, to tell tokens apart")
    scope: TokenScope
    brain_ids: list[int] | None = Field(description="null: every brain the user can reach")
    expires_at: str | None
    created_at: str
    last_used_at: str | None
    revoked: bool

    @classmethod
    def of(cls, token: ApiToken) -> TokenOut:
        return cls(
            id=token.id,
            name=token.name,
            prefix=token.prefix,
            scope=token.scope,
            brain_ids=list(token.brain_ids) if token.brain_ids is not None else None,
            expires_at=_timestamp(token.expires_at),
            created_at=token.created_at,
            last_used_at=_timestamp(token.last_used_at),
            revoked=token.revoked_at is not None,
        )


class IssuedTokenOut(TokenOut):
    secret: str = Field(description="shown once; store it now — only its hash is kept")

    @classmethod
    def issued(cls, issued: IssuedToken) -> IssuedTokenOut:
        return cls(**TokenOut.of(issued.token).model_dump(), secret=issued.secret)


class MeOut(BaseModel):
    user: UserOut
    token: TokenOut
    csrf_token: str | None = Field(
        default=None, description="send as X-CSRF-Token on writes made with the session cookie"
    )


class SessionIn(BaseModel):
    token: str = Field(min_length=1, max_length=200)


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=100, pattern=NOT_BLANK)
    scope: TokenScope = "write"
    brains: list[str] | None = Field(default=None, description="limit to these brains")
    expires_in_days: float | None = Field(
        default=None, ge=1 / 1440, le=3650, strict=True, description="at least one minute"
    )


class UserIn(BaseModel):
    name: str = Field(min_length=1, max_length=64, pattern=BRAIN_NAME)
    is_admin: bool = Field(default=False, strict=True)  # 0, "yes" and "on" are not booleans


class NewUserOut(BaseModel):
    user: UserOut
    token: IssuedTokenOut


# brains and members -----------------------------------------------------------------------
class BrainIn(BaseModel):
    name: str = Field(min_length=1, max_length=64, pattern=BRAIN_NAME)
    visibility: Visibility = "restricted"


class BrainPatch(BaseModel):
    name: str | None = Field(default=None, min_length=1, max_length=64, pattern=BRAIN_NAME)
    visibility: Visibility | None = None
    language: str | None = Field(
        default=None,
        min_length=2,
        max_length=40,
        pattern=r"^[A-Za-z_]+$",
        description="the text search's stemming language (PostgreSQL: any text-search "
        "configuration the server has, e.g. german; SQLite: english only)",
    )


class BrainOut(BaseModel):
    id: int
    name: str
    visibility: Visibility
    role: Role = Field(description="the caller's role in this brain")
    embedder_model: str | None
    embedder_dims: int | None
    created_at: str

    @classmethod
    def of(cls, brain: Brain, role: Role) -> BrainOut:
        return cls(
            id=brain.id,
            name=brain.name,
            visibility=brain.visibility,
            role=role,
            embedder_model=brain.embedder_model,
            embedder_dims=brain.embedder_dims,
            created_at=brain.created_at,
        )


class MemberIn(BaseModel):
    role: Role


class MemberOut(BaseModel):
    user: str
    role: Role

    @classmethod
    def of(cls, member: Member) -> MemberOut:
        return cls(user=member.user.name, role=member.role)


class StatusOut(BaseModel):
    brain: str
    documents_by_status: dict[str, int]
    documents_by_kind: dict[str, int]
    chunks: int
    jobs_by_status: dict[str, int]
    bytes_stored: int
    embedder_model: str | None
    language: str = Field(description="the language the text search stems this brain's words in")

    @classmethod
    def of(cls, status: Status) -> StatusOut:
        stats = status.stats
        return cls(
            brain=status.brain.name,
            documents_by_status=stats.documents_by_status,
            documents_by_kind=stats.documents_by_kind,
            chunks=stats.chunks,
            jobs_by_status=stats.jobs_by_status,
            bytes_stored=stats.bytes_stored,
            embedder_model=status.embedder_model,
            language=status.language,
        )


class JobOut(Mirror):
    id: int
    document_id: int
    kind: str
    status: str
    attempts: int
    last_error: str | None


# documents --------------------------------------------------------------------------------
class DocumentOut(BaseModel):
    id: int
    brain: str
    kind: DocumentKind
    name: str
    title: str | None
    source_url: str | None
    mime_type: str | None
    size_bytes: int
    content_hash: str
    status: DocumentStatus
    status_reason: str | None
    chunk_count: int
    tags: list[str]
    color: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, document: Document, brain: Brain) -> DocumentOut:
        color = document.metadata.get("color")
        return cls(
            id=document.id,
            brain=brain.name,
            kind=document.kind,
            name=document.name,
            title=document.title,
            source_url=document.source_url,
            mime_type=document.mime_type,
            size_bytes=document.size_bytes,
            content_hash=document.content_hash,
            status=document.status,
            status_reason=document.status_reason,
            chunk_count=document.chunk_count,
            tags=list(document.tags),
            color=color if isinstance(color, str) else None,
            created_at=document.created_at,
            updated_at=document.updated_at,
        )


class AddedOut(BaseModel):
    document: DocumentOut
    deduped: bool = Field(description="true: these exact bytes were already in the brain")


class UploadResultOut(BaseModel):
    name: str
    document: DocumentOut | None = None
    deduped: bool = False
    error: ErrorOut | None = None


class UploadOut(BaseModel):
    results: list[UploadResultOut]


class UrlIn(BaseModel):
    url: str = Field(min_length=1, max_length=4096)
    tags: list[str] = Field(default_factory=list, max_length=50)
    markdown: str | None = Field(
        default=None,
        min_length=1,
        max_length=20_000_000,
        description="the page as the browser shows it, in Markdown (a browser extension's "
        "extraction): kept as is and cited to `url`, which is then not fetched",
    )
    title: str | None = Field(
        default=None, max_length=300, description="the page's title, with `markdown`"
    )

    @model_validator(mode="after")
    def _title_needs_markdown(self) -> Self:
        # A fetched page takes its title from its own HTML; one sent here would be dropped.
        if self.title is not None and self.markdown is None:
            raise ValueError("`title` is only taken with `markdown`")
        return self


class TextOut(BaseModel):
    document_id: int
    text: str
    truncated: bool


class ChunkOut(Mirror):
    id: int
    index: int
    text: str
    heading_path: list[str]
    page: int | None
    line_start: int | None
    line_end: int | None
    token_count: int
    region: str | None = Field(default=None, description=REGION_HELP)
    ocr_confidence: float | None = Field(default=None, description=CONFIDENCE_HELP)


class NoteIn(BaseModel):
    text: str = Field(min_length=1, max_length=1_000_000, pattern=NOT_BLANK)
    title: str | None = Field(default=None, max_length=300)
    tags: list[str] = Field(default_factory=list, max_length=50)
    color: str | None = Field(default=None, pattern=r"^#[0-9a-fA-F]{6}$")


class NoteUpdate(NoteIn):
    expected_hash: str = Field(
        min_length=64,
        max_length=64,
        description="the content_hash you read; a note changed since is a 409, not overwritten",
    )


class NoteOut(BaseModel):
    document: DocumentOut
    text: str
    html: str = Field(description="the note rendered from Markdown and sanitized")


# search -----------------------------------------------------------------------------------
class FiltersIn(BaseModel):
    name: str | None = Field(default=None, max_length=300, description="file name; * and ? glob")
    kinds: list[DocumentKind] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list, max_length=20)
    created_after: dt.date | None = None
    created_before: dt.date | None = None

    @field_validator("created_after", "created_before", mode="before")
    @classmethod
    def _iso_date(cls, value: object) -> object:
        # Pydantic would read a number as a Unix time; the schema promises a YYYY-MM-DD string.
        if value is not None and not isinstance(value, str | dt.date):
            raise ValueError("a date is a string, YYYY-MM-DD")
        return value


class SearchIn(BaseModel):
    query: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)
    limit: int = Field(default=10, ge=1, le=30)
    mode: SearchMode = "hybrid"
    filters: FiltersIn = Field(default_factory=FiltersIn)
    min_similarity: float | None = Field(default=None, ge=-1, le=1, strict=True)
    include_archived: bool = Field(
        default=False,
        strict=True,
        description="hybrid search leaves merged and archived brain pages out unless this is set",
    )

    _integers = json_integers("limit")


class HitOut(BaseModel):
    brain: str
    chunk_id: int
    document_id: int
    name: str
    title: str | None
    chunk_index: int
    page: int | None
    line_start: int | None
    line_end: int | None
    heading_path: list[str]
    source_url: str | None
    region: str | None = Field(default=None, description=REGION_HELP)
    ocr_confidence: float | None = Field(default=None, description=CONFIDENCE_HELP)
    snippet: str = Field(description="an excerpt with the matched terms marked **like this**")
    text: str
    score: float
    text_rank: int | None
    vector_rank: int | None
    matched_by: str = Field(
        description="text, vector or both legs of the search; +graph when a link from a better "
        "hit lifted it; graph when only a link brought it in"
    )
    graph_path: list[str] = Field(
        description="for a hit a link lifted or brought in: the page ids from the search hit "
        "to this one"
    )

    @classmethod
    def of(cls, hit: Hit, brain: Brain) -> HitOut:
        return cls(
            brain=brain.name,
            chunk_id=hit.chunk_id,
            **dataclasses.asdict(hit.citation),
            snippet=hit.snippet,
            text=hit.text,
            score=hit.score,
            text_rank=hit.text_rank,
            vector_rank=hit.vector_rank,
            matched_by=hit.matched_by,
            graph_path=list(hit.graph_path),
        )


class SearchOut(BaseModel):
    query: str
    mode: SearchMode
    hits: list[HitOut]


# ask and conversations --------------------------------------------------------------------
class AskIn(BaseModel):
    question: str = Field(min_length=1, max_length=4000, pattern=NOT_BLANK)
    conversation_id: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ID,
        description="continue this conversation (its history resolves follow-ups)",
    )

    _integers = json_integers("conversation_id")


class AnswerOut(BaseModel):
    answer: str = Field(description="the answer, citing sources as [1], [2], …")
    citations: list[dict[str, Any]] = Field(
        description="what each number cites: name, page, lines, section (`where`), snippet"
    )
    intent: str
    conversation_id: int = Field(description="send it back to ask a follow-up")


class ConversationIn(BaseModel):
    title: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)


class ConversationOut(Mirror):
    id: int
    title: str
    created_at: str
    updated_at: str


class MessageOut(Mirror):
    id: int
    role: Literal["user", "assistant"]
    content: str
    citations: list[dict[str, Any]]
    intent: str | None
    created_at: str


class ConversationDetailOut(BaseModel):
    conversation: ConversationOut
    messages: list[MessageOut]


# study tools ------------------------------------------------------------------------------
class StudyIn(BaseModel):
    topic: str | None = Field(default=None, max_length=500, description="default: recent documents")
    count: int = Field(default=5, ge=1, le=30)

    _integers = json_integers("count")


class QuizQuestionOut(BaseModel):
    question: str
    choices: list[str]
    answer: int = Field(description="index of the correct choice")
    explanation: str
    source: dict[str, Any] = Field(description="the passage the question comes from")


class FlashcardOut(BaseModel):
    front: str
    back: str
    source: dict[str, Any]


# a user's own chat model ------------------------------------------------------------------
class ModelIn(BaseModel):
    base_url: str = Field(
        min_length=1,
        max_length=500,
        pattern=r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9\[]",
        examples=["https://openrouter.ai/api/v1"],
    )
    model: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)
    api_key: str | None = Field(
        default=None, max_length=500, description="kept encrypted; never returned"
    )
    keep_api_key: bool = Field(
        default=True,
        strict=True,
        description="with no api_key: keep the stored one (false: remove it)",
    )
    fallback_models: list[str] = Field(default_factory=list, max_length=5)


class ModelOut(Mirror):
    base_url: str
    model: str
    fallback_models: list[str]
    has_api_key: bool


# the brain graph ----------------------------------------------------------------------------
EXPECTED_HASH = Field(
    default=None,
    min_length=64,
    max_length=64,
    description="the content_hash you read; a document changed since is a 409, not overwritten",
)
SOURCE_REF = Field(
    default=None,
    pattern=r"^[a-z0-9][a-z0-9_-]{0,31}:[^\s\]|]{1,220}$",  # loci.graph.links.SOURCE_REF
    description="where it came from, provider:id (e.g. slack:C01/1712345)",
)
ISO_DAY = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


class GraphSummaryOut(Mirror):
    id: str
    kind: str = Field(description="page or evidence")
    type: str
    folder: str
    path: str
    status: str
    title: str
    aliases: list[str]
    merged_into: str | None
    updated: str
    content_hash: str = Field(description="send it back as expected_hash to edit this version")
    document_id: int | None = Field(description="the indexed document search cites")


class GraphEdgeOut(Mirror):
    source: str
    target: str
    type: str = Field(description="a relation type, wiki_link or cites")


class GraphTimelineEntryOut(Mirror):
    doc_id: str
    entry_id: str
    at: str
    text: str
    source: str | None


class GraphPageOut(BaseModel):
    document: GraphSummaryOut
    content: str = Field(description="the exact Markdown, frontmatter first")
    truth: str = Field(description="the compiled truth")
    relations: list[GraphEdgeOut] = Field(description="typed relations in the frontmatter")
    sources: list[str]
    timeline: list[GraphTimelineEntryOut]
    links: list[GraphEdgeOut] = Field(description="edges from this document")
    backlinks: list[GraphEdgeOut] = Field(description="edges from other documents to this one")

    @classmethod
    def of(cls, page: Page) -> GraphPageOut:
        doc = page.doc
        return cls(
            document=GraphSummaryOut.of(page.summary),
            content=page.content,
            truth=doc.truth,
            relations=[
                GraphEdgeOut(source=doc.id, target=r.target, type=r.type) for r in doc.relations
            ],
            sources=list(doc.sources),
            timeline=[
                GraphTimelineEntryOut(
                    doc_id=doc.id, entry_id=e.id, at=e.at, text=e.text, source=e.source
                )
                for e in doc.timeline
            ],
            links=[GraphEdgeOut.of(e) for e in page.links],
            backlinks=[GraphEdgeOut.of(e) for e in page.backlinks],
        )


class GraphWrittenOut(BaseModel):
    document: GraphSummaryOut
    changed: bool = Field(description="false: the document already had that")

    @classmethod
    def of(cls, written: Written) -> GraphWrittenOut:
        return cls(document=GraphSummaryOut.of(written.document), changed=written.changed)


class GraphEvidenceOut(BaseModel):
    evidence: GraphSummaryOut
    document: GraphSummaryOut = Field(description="the page that now cites it")


class GraphDeleteOut(BaseModel):
    document: GraphSummaryOut
    backlinks: list[GraphEdgeOut] = Field(description="links other documents are left with")
    deleted: bool = Field(description="false: a dry run, nothing changed")

    @classmethod
    def of(cls, plan: DeletePlan) -> GraphDeleteOut:
        return cls(
            document=GraphSummaryOut.of(plan.document),
            backlinks=[GraphEdgeOut.of(e) for e in plan.backlinks],
            deleted=plan.deleted,
        )


class GraphVersionOut(Mirror):
    id: int
    doc_id: str
    action: str
    actor: str
    content: str = Field(description="the content this write replaced (or deleted)")
    content_hash: str
    created_at: str


class GraphFolderOut(Mirror):
    folder: str
    documents: int = Field(description="directly in this folder")
    total: int = Field(description="in it and every folder under it")


class GraphQueryIn(BaseModel):
    query: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)
    limit: int = Field(default=10, ge=1, le=30)
    include_merged: bool = Field(default=False, strict=True)
    include_archived: bool = Field(default=False, strict=True)

    _integers = json_integers("limit")


class CitationOut(Mirror):
    document_id: int
    name: str
    title: str | None
    chunk_index: int
    page: int | None
    line_start: int | None
    line_end: int | None
    heading_path: list[str]
    source_url: str | None
    region: str | None = Field(default=None, description=REGION_HELP)
    ocr_confidence: float | None = Field(default=None, description=CONFIDENCE_HELP)


class GraphHitOut(BaseModel):
    document: GraphSummaryOut
    score: float
    matched_by: str = Field(description="text, vector, both, or graph (reached through links)")
    snippet: str
    citation: CitationOut
    links: list[GraphEdgeOut]
    backlinks: list[GraphEdgeOut]
    path: list[str] = Field(description="for a graph hit: the ids from the search hit to it")

    @classmethod
    def of(cls, hit: QueryHit) -> GraphHitOut:
        return cls(
            document=GraphSummaryOut.of(hit.document),
            score=hit.score,
            matched_by=hit.matched_by,
            snippet=hit.snippet,
            citation=CitationOut.of(hit.citation),
            links=[GraphEdgeOut.of(e) for e in hit.links],
            backlinks=[GraphEdgeOut.of(e) for e in hit.backlinks],
            path=list(hit.path),
        )


class GraphQueryOut(BaseModel):
    query: str
    hits: list[GraphHitOut]


GraphType = Literal[
    "person", "company", "project", "meeting", "concept", "source", "analysis", "note",
    "media", "email", "writing",
]  # fmt: skip  # the last three are older names (media and email: source; writing: analysis)
GraphStatus = Literal["draft", "active", "archived", "merged"]
SLUG = r"^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$"  # loci.graph.links.SLUG
FOLDER = r"^[a-z0-9][a-z0-9._-]{0,63}(?:/[a-z0-9][a-z0-9._-]{0,63})*/?$"


class GraphCreateIn(BaseModel):
    type: GraphType | None = Field(default=None, description="needed unless text has frontmatter")
    title: str | None = Field(default=None, max_length=300, pattern=NOT_BLANK)
    folder: str | None = Field(
        default=None, max_length=300, pattern=FOLDER, description="default: per type"
    )
    id: str | None = Field(default=None, pattern=SLUG, description="default: the title's slug")
    status: Literal["draft", "active", "archived"] | None = Field(
        default=None, description="default: draft"
    )
    text: str = Field(
        default="",
        max_length=1_000_000,
        description="the compiled truth, or a whole Markdown document (frontmatter first)",
    )


class GraphTruthIn(BaseModel):
    truth: str = Field(max_length=1_000_000, description="the new compiled truth (Markdown)")
    expected_hash: str | None = EXPECTED_HASH


class GraphFieldsIn(BaseModel):
    fields: dict[str, str] = Field(
        min_length=1,
        max_length=10,
        description="title, type, status, folder, aliases, relations or sources; lists "
        "comma-separated, relations as type:target",
    )
    expected_hash: str | None = EXPECTED_HASH


class GraphTimelineIn(BaseModel):
    text: str = Field(min_length=1, max_length=10_000, pattern=NOT_BLANK)
    at: dt.date | None = Field(default=None, description="default: today")
    source: str | None = SOURCE_REF
    expected_hash: str | None = EXPECTED_HASH

    @field_validator("at", mode="before")
    @classmethod
    def _iso_date(cls, value: object) -> object:
        if value is not None and not isinstance(value, str | dt.date):
            raise ValueError("a date is a string, YYYY-MM-DD")
        return value


class GraphEvidenceIn(BaseModel):
    text: str = Field(min_length=1, max_length=1_000_000, pattern=NOT_BLANK)
    title: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)
    source: str | None = SOURCE_REF
    expected_hash: str | None = EXPECTED_HASH


class GraphAliasIn(BaseModel):
    alias: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)


class GraphLinkIn(BaseModel):
    relation: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$", examples=["works_at"])
    target: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)


class GraphMergeIn(BaseModel):
    into: str = Field(min_length=1, max_length=300, pattern=NOT_BLANK)
    alias_title: bool = Field(
        default=True, strict=True, description="keep the merged document's title as an alias"
    )


class GraphMoveIn(BaseModel):
    folder: str | None = Field(default=None, max_length=300, pattern=FOLDER)
    new_id: str | None = Field(default=None, pattern=SLUG)
    expected_hash: str | None = EXPECTED_HASH


class CaptureIn(BaseModel):
    text: str = Field(min_length=1, max_length=1_000_000, pattern=NOT_BLANK)
    title: str | None = Field(default=None, max_length=300)
    source: str | None = SOURCE_REF


class CapturedOut(BaseModel):
    item: DocumentOut = Field(description="the kept capture; processing until curated")
    draft: GraphSummaryOut | None = Field(description="its inbox draft")
    evidence: GraphSummaryOut | None = None
    deduped: bool = Field(description="true: the same text was kept before")

    @classmethod
    def of(cls, result: Captured | Ingested, brain: Brain) -> CapturedOut:
        evidence = result.evidence if isinstance(result, Ingested) else None
        return cls(
            item=DocumentOut.of(result.item, brain),
            draft=GraphSummaryOut.of(result.draft) if result.draft is not None else None,
            evidence=GraphSummaryOut.of(evidence) if evidence is not None else None,
            deduped=result.deduped,
        )
