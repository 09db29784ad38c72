"""Brains, their members, status and jobs."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.auth.records import Member
from loci.models import Brain, Role, Visibility
from loci.service import Status
from loci.wire.mirror import Mirror, shown


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
        return shown(cls, brain, role=role)


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
    vectors_pending: int = Field(
        description="documents found by their words whose vectors are still being written"
    )
    queue_by_stage: dict[str, int] = Field(
        description="jobs queued or running by stage: text (parse, chunk, text index), then"
        " vectors (embedding)"
    )
    bytes_stored: int
    embedder_model: str | None
    language: str = Field(
        description="how the text search stems this brain's words: 'auto' (each passage in its"
        " detected language) or one stemmer ('english', 'german', …, 'simple')"
    )
    languages: dict[str, int] = Field(
        default_factory=dict,
        description="the languages detected in the brain's documents (ISO 639-1) and how many"
        " documents are mostly in each, most first",
    )

    @classmethod
    def of(cls, status: Status) -> StatusOut:
        stats = status.stats
        return cls(
            brain=status.brain.name,
            documents_by_status=stats.documents_by_status,
            documents_by_kind=stats.documents_by_kind,
            chunks=stats.chunks,
            jobs_by_status=stats.jobs_by_status,
            vectors_pending=stats.vectors_pending,
            queue_by_stage=stats.queue_by_stage,
            bytes_stored=stats.bytes_stored,
            embedder_model=status.embedder_model,
            language=status.language,
            languages=status.languages,
        )


class JobOut(Mirror):
    id: int
    document_id: int
    kind: str
    status: str
    attempts: int
    last_error: str | None
