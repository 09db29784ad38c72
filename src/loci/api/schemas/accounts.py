"""Users, sessions and API tokens, and a user's own chat model."""

from __future__ import annotations

from pydantic import Field

from loci.api.schemas.common import BRAIN_NAME, NOT_BLANK, RequestIn
from loci.auth.records import TokenScope


class TokenIn(RequestIn):
    name: str = Field(min_length=1, max_length=100, pattern=NOT_BLANK)
    scope: TokenScope = "write"
    brains: list[str] | None = Field(default=None, description="limit to these brains")
    expires_in_days: float | None = Field(
        default=None, ge=1 / 1440, le=3650, strict=True, description="at least one minute"
    )


class UserIn(RequestIn):
    name: str = Field(min_length=1, max_length=64, pattern=BRAIN_NAME)
    is_admin: bool = Field(default=False, strict=True)  # 0, "yes" and "on" are not booleans


class ModelIn(RequestIn):
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
