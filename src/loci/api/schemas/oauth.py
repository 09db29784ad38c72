"""The consent page's questions and answers (the OAuth protocol endpoints speak OAuth's own
form and JSON bodies, outside this API)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loci.api.schemas.common import RequestIn

SHORT = 2000  # a URL, a PKCE challenge, a state: nothing here is longer


class AuthorizationIn(RequestIn):
    """The application's authorization request, as it arrived at /oauth/authorize."""

    response_type: str = Field(max_length=50)
    client_id: str = Field(max_length=200)
    redirect_uri: str = Field(max_length=SHORT)
    state: str | None = Field(default=None, max_length=SHORT)
    code_challenge: str | None = Field(default=None, max_length=SHORT)
    code_challenge_method: str | None = Field(default=None, max_length=50)
    scope: str | None = Field(default=None, max_length=SHORT)
    resource: str | None = Field(default=None, max_length=SHORT)

    def pairs(self) -> list[tuple[str, str]]:
        asked = self.model_dump(include=set(AuthorizationIn.model_fields))
        return [(k, v) for k, v in asked.items() if v is not None]


class ConsentIn(AuthorizationIn):
    approve: bool = Field(strict=True, description="false: deny, and tell the application so")
    access: Literal["read", "write"] = Field(
        default="read", description="what the application may do in the chosen brains"
    )
    brains: list[str] | None = Field(
        default=None, max_length=1000, description="null: every brain you can reach"
    )
