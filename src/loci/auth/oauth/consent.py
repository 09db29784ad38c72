"""The consent step: what a signed-in person is asked about an application, and what their
answer issues.

The authorization request is checked in full before anything is shown (Authlib: a registered
client, its redirect URI matched exactly, response type `code`, PKCE with S256) and again when
the person answers; Loci also requires `state`, and a resource of this server. A request whose
client or redirect URI is wrong is refused here, never redirected (the redirect could go
anywhere); any other fault goes back to the application as an OAuth error on its redirect URI.

The person picks read-only or write (write only if the application asked for it and they may
write themselves) and which brains; a session opened with a narrower token cannot grant more
than that token holds. Only a web session can approve: a bearer token cannot approve an
application for itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import InsecureTransportError, InvalidRequestError, OAuth2Error

from loci.auth.access import Principal, require_session
from loci.auth.accounts import Accounts
from loci.auth.oauth.grants import Choice, InvalidTargetError
from loci.auth.oauth.resources import Resources
from loci.auth.oauth.server import HttpCall, OAuthServer, insecure, oauth_error
from loci.auth.records import TokenScope
from loci.errors import Forbidden, InvalidInput

UNUSABLE = "this authorization request cannot be used: it holds characters OAuth does not allow"


@dataclass(frozen=True)
class Ask:
    """What the consent page shows."""

    client_id: str
    client_name: str
    redirect_uri: str
    redirect_host: str
    scopes: tuple[str, ...]  # what the application asked for
    resource: str


@dataclass(frozen=True)
class Redirect:
    """Where the browser goes next: the application's redirect URI, with a code or an error."""

    url: str


class Consent:
    def __init__(self, server: OAuthServer, accounts: Accounts) -> None:
        self.server = server
        self.accounts = accounts

    def ask(self, call: HttpCall, resources: Resources) -> Ask | Redirect:
        checked = self._check(call, resources)
        if isinstance(checked, Redirect):
            return checked
        grant, resource = checked
        request = grant.request
        redirect_uri = request.payload.redirect_uri
        return Ask(
            client_id=request.client.get_client_id(),
            client_name=request.client.stored.name,
            redirect_uri=redirect_uri,
            redirect_host=urlsplit(redirect_uri).netloc,
            scopes=tuple(request.scope.split()),
            resource=resource,
        )

    def answer(
        self,
        call: HttpCall,
        resources: Resources,
        principal: Principal,
        *,
        approve: bool,
        scope: TokenScope,
        brains: Sequence[str] | None,
    ) -> Redirect:
        require_session(principal, "approving an application")
        checked = self._check(call, resources)
        if isinstance(checked, Redirect):
            return checked
        grant, resource = checked
        if not approve:
            return self._redirect(grant, None)
        if scope not in ("read", "write"):
            raise InvalidInput(f"scope must be read or write, got {scope!r}")
        if scope == "write":
            if "write" not in grant.request.scope.split():
                raise InvalidInput("this application asked only to read")
            if not principal.can_write:
                raise Forbidden("you are signed in with a read-only token")
        brain_ids: tuple[int, ...] | None
        if brains is None:
            brain_ids = principal.token.brain_ids
        else:
            if not brains:
                raise InvalidInput("choose at least one brain, or all of them")
            brain_ids = tuple(self.accounts.brain(principal, name, "read")[0].id for name in brains)
        grant.request.loci_choice = Choice(scope, brain_ids, resource)
        return self._redirect(grant, principal)

    def _redirect(self, grant: Any, principal: Principal | None) -> Redirect:
        user = principal.user if principal else None
        reply = self.server.create_authorization_response(
            request=grant.request,
            grant_user=user,
            grant=grant,
        )
        if reply.location is None:  # an error the grant found without a redirect URI
            raise InvalidInput(f"this authorization request cannot be used: {reply.body}")
        return Redirect(reply.location)

    def _check(self, call: HttpCall, resources: Resources) -> tuple[Any, str] | Redirect:
        try:
            request = self.server.create_oauth2_request(call)
            grant = self.server.get_consent_grant(request)
        except InsecureTransportError:
            raise InvalidInput(insecure().body["error_description"]) from None
        except ValueError:  # Authlib echoing a value OAuth's error text may not hold
            raise InvalidInput(UNUSABLE) from None
        except OAuth2Error as error:
            if error.redirect_uri:
                return _error_redirect(error)
            raise InvalidInput(
                f"this authorization request cannot be used: {oauth_error(error)}"
            ) from None
        payload = grant.request.payload
        redirect_uri, state = payload.redirect_uri, payload.state
        if not state:
            return _error_redirect(
                InvalidRequestError("'state' is required", redirect_uri=redirect_uri)
            )
        resource = resources.known(payload.data.get("resource"))
        if resource is None:
            return _error_redirect(
                InvalidTargetError(
                    f"this server issues tokens only for {resources.base} and paths under it",
                    state=state,
                    redirect_uri=redirect_uri,
                )
            )
        return grant, resource


def _error_redirect(error: OAuth2Error) -> Redirect:
    _, _, headers = error()
    return Redirect(dict(headers)["Location"])
