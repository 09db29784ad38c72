"""Request and response bodies of the HTTP API — separate from the storage rows they show.

Each response model has a `of(...)` constructor from the domain model, so what the API exposes
is chosen field by field (a token's hash, for one, never leaves the store).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from loci.auth.accounts import IssuedToken
from loci.auth.user_models import ModelView
from loci.models import (
    ApiToken,
    Brain,
    ChatMessage,
    Chunk,
    Conversation,
    Document,
    DocumentKind,
    DocumentStatus,
    Hit,
    Job,
    Member,
    Role,
    SearchMode,
    TokenScope,
    User,
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
class UserOut(BaseModel):
    id: int
    name: str
    is_admin: bool
    created_at: str

    @classmethod
    def of(cls, user: User) -> UserOut:
        return cls(id=user.id, name=user.name, is_admin=user.is_admin, created_at=user.created_at)


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
        )


class JobOut(BaseModel):
    id: int
    document_id: int
    kind: str
    status: str
    attempts: int
    last_error: str | None

    @classmethod
    def of(cls, job: Job) -> JobOut:
        return cls(
            id=job.id,
            document_id=job.document_id,
            kind=job.kind,
            status=job.status,
            attempts=job.attempts,
            last_error=job.last_error,
        )


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


class TextOut(BaseModel):
    document_id: int
    text: str
    truncated: bool


class ChunkOut(BaseModel):
    id: int
    index: int
    text: str
    heading_path: list[str]
    page: int | None
    line_start: int | None
    line_end: int | None
    token_count: int

    @classmethod
    def of(cls, chunk: Chunk) -> ChunkOut:
        return cls(
            id=chunk.id,
            index=chunk.index,
            text=chunk.text,
            heading_path=list(chunk.heading_path),
            page=chunk.page,
            line_start=chunk.line_start,
            line_end=chunk.line_end,
            token_count=chunk.token_count,
        )


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
    snippet: str = Field(description="an excerpt with the matched terms marked **like this**")
    text: str
    score: float
    text_rank: int | None
    vector_rank: int | None
    matched_by: Literal["text", "vector", "both"]

    @classmethod
    def of(cls, hit: Hit, brain: Brain) -> HitOut:
        c = hit.citation
        return cls(
            brain=brain.name,
            chunk_id=hit.chunk_id,
            document_id=c.document_id,
            name=c.name,
            title=c.title,
            chunk_index=c.chunk_index,
            page=c.page,
            line_start=c.line_start,
            line_end=c.line_end,
            heading_path=list(c.heading_path),
            source_url=c.source_url,
            snippet=hit.snippet,
            text=hit.text,
            score=hit.score,
            text_rank=hit.text_rank,
            vector_rank=hit.vector_rank,
            matched_by=hit.matched_by,  # type: ignore[arg-type]
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


class ConversationIn(BaseModel):
    title: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)


class ConversationOut(BaseModel):
    id: int
    title: str
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, conversation: Conversation) -> ConversationOut:
        return cls(
            id=conversation.id,
            title=conversation.title,
            created_at=conversation.created_at,
            updated_at=conversation.updated_at,
        )


class MessageOut(BaseModel):
    id: int
    role: Literal["user", "assistant"]
    content: str
    citations: list[dict[str, Any]]
    intent: str | None
    created_at: str

    @classmethod
    def of(cls, message: ChatMessage) -> MessageOut:
        return cls(
            id=message.id,
            role=message.role,
            content=message.content,
            citations=list(message.citations),
            intent=message.intent,
            created_at=message.created_at,
        )


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


class ModelOut(BaseModel):
    base_url: str
    model: str
    fallback_models: list[str]
    has_api_key: bool

    @classmethod
    def of(cls, view: ModelView) -> ModelOut:
        return cls(
            base_url=view.base_url,
            model=view.model,
            fallback_models=list(view.fallback_models),
            has_api_key=view.has_api_key,
        )
