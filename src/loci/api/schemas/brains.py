"""Brains, their members, status and jobs."""

from __future__ import annotations

from pydantic import Field

from loci.api.schemas.common import BRAIN_NAME, RequestIn
from loci.models import Role, Visibility


class BrainIn(RequestIn):
    name: str = Field(min_length=1, max_length=64, pattern=BRAIN_NAME)
    visibility: Visibility = "restricted"


class BrainPatch(RequestIn):
    name: str | None = Field(default=None, min_length=1, max_length=64, pattern=BRAIN_NAME)
    visibility: Visibility | None = None
    language: str | None = Field(
        default=None,
        min_length=2,
        max_length=40,
        pattern=r"^[A-Za-z_]+$",
        description="how the text search stems the brain's words: 'auto' (each passage in its"
        " detected language), a Snowball stemmer ('english', 'german', 'russian', …) or"
        " 'simple' (no stemming)",
    )


class MemberIn(RequestIn):
    role: Role
