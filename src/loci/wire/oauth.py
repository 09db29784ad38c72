"""The consent page's questions and answers (the OAuth protocol endpoints speak OAuth's own
form and JSON bodies, outside this API)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.models import Role


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
