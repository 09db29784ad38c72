"""The consent page's questions and answers (the OAuth protocol endpoints speak OAuth's own
form and JSON bodies, outside this API)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loci.api.schemas.common import RequestIn
from loci.models import Role

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


class BrainChoiceOut(BaseModel):
    name: str
    role: Role


class ConsentOut(BaseModel):
    """What the application asks, to show the person — or, when the request must go back to
    the application with an error, only `redirect`."""

    redirect: str | None = Field(default=None, description="go here at once: an error")
    client_id: str | None = None
    client_name: str | None = None
    redirect_host: str | None = Field(default=None, description="where the answer is sent")
    redirect_uri: str | None = None
    scopes: list[str] = Field(default_factory=list, description="what it asked: read, write")
    resource: str | None = Field(default=None, description="where the token will work")
    user: str | None = None
    brains: list[BrainChoiceOut] = Field(default_factory=list)


class RedirectOut(BaseModel):
    redirect: str = Field(description="the application's redirect URI with a code or an error")
