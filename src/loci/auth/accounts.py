"""Accounts as a service: users, their API tokens and web sessions, and brains seen through them.

Surfaces (the HTTP API, the CLI's `users`/`tokens` commands) call this; it decides who the caller
is and which brain a name means for them, and hands the brain to `Loci` for the work itself.
A brain the caller may not read is `NotFound` — the same answer as a brain that does not exist —
so no response confirms that someone else's brain is there.
"""

from __future__ import annotations

import getpass
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loci.auth.access import Need, Principal, allows, require_account, role_in, user_role_in
from loci.auth.oauth.resources import covers
from loci.auth.records import ApiToken, Member, TokenScope, User
from loci.auth.secrets import SESSION_PREFIX, hash_secret, new_secret, shown_prefix
from loci.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthenticated
from loci.models import Brain, Role, Visibility
from loci.names import NAME_PATTERN, check_name

if TYPE_CHECKING:
    from loci.store.base import Store

SESSION_DAYS = 30
TOUCH_EVERY_S = 60.0  # last-used times are advisory: one write a minute per token is plenty
DAY_S = 86400.0


@dataclass(frozen=True)
class IssuedToken:
    """A token as created: the only moment its secret exists outside the caller's hands."""

    token: ApiToken
    secret: str


@dataclass(frozen=True)
class OpenedSession:
    secret: str
    csrf: str
    expires_at: float
    principal: Principal


class Accounts:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.accounts = store.accounts
        self.clock = clock

    # users --------------------------------------------------------------------------------
    def users(self) -> list[User]:
        return self.accounts.list_users()

    def user(self, name: str) -> User:
        return self.accounts.find_user(name)

    def bootstrap_owner(self, name: str | None = None) -> IssuedToken | None:
        """On a workspace with no users, create the owner (an admin) and a first token."""
        if self.accounts.list_users():
            return None
        _, issued = self.add_user(name or _login_name(), is_admin=True)
        return issued

    def add_user(self, name: str, *, is_admin: bool = False) -> tuple[User, IssuedToken]:
        user = self.accounts.create_user(self.new_user_name(name), is_admin=is_admin)
        return user, self.issue_token(user, name="sign-in", scope="write")

    def new_user_name(self, name: str) -> str:
        """`name`, if a new user may take it: Conflict when it is another spelling of a user's
        name (`ALICE`, `alİce` beside `alice` would sign in as them), before the name rule."""
        try:
            existing = self.accounts.find_user(name)
        except NotFound:
            return check_name("user", name)
        same = "" if existing.name == name else f" ({name!r} is the same name)"
        raise Conflict(f"a user named {existing.name!r} already exists{same}")

    # tokens -------------------------------------------------------------------------------
    def issue_token(
        self,
        user: User,
        *,
        name: str,
        scope: TokenScope = "write",
        brain_ids: Sequence[int] | None = None,
        expires_in_days: float | None = None,
    ) -> IssuedToken:
        if scope not in ("read", "write"):
            raise InvalidInput(f"token scope must be read or write, got {scope!r}")
        if expires_in_days is not None and expires_in_days <= 0:
            raise InvalidInput("a token's lifetime must be positive")
        if not name.strip():
            raise InvalidInput("a token needs a name")
        secret = new_secret()
        expires_at = self.clock() + expires_in_days * DAY_S if expires_in_days else None
        token = self.accounts.create_token(
            user.id,
            name=name.strip()[:100],
            prefix=shown_prefix(secret),
            secret_hash=hash_secret(secret),
            scope=scope,
            brain_ids=brain_ids,
            expires_at=expires_at,
        )
        return IssuedToken(token, secret)

    def issue_token_as(
        self,
        principal: Principal,
        *,
        name: str,
        scope: TokenScope,
        brains: Sequence[str] | None,
        expires_in_days: float | None,
    ) -> IssuedToken:
        """A token made by a caller for themselves. Only a credential of the whole account
        makes one: a token an application holds, or one limited to some brains, could otherwise
        mint a token that outlives it (an application disconnected, a token revoked)."""
        require_account(principal, "create tokens")
        brain_ids = None
        if brains is not None:
            brain_ids = [self.brain(principal, b, "read")[0].id for b in brains]
        return self.issue_token(
            principal.user,
            name=name,
            scope=scope,
            brain_ids=brain_ids,
            expires_in_days=expires_in_days,
        )

    def tokens(self, user: User) -> list[ApiToken]:
        return self.accounts.list_tokens(user.id)

    def tokens_seen_by(self, principal: Principal) -> list[ApiToken]:
        """The tokens a caller may see: all of the account's through a credential of the whole
        account; otherwise only the one it holds (the others' names tell what they are for)."""
        mine = self.tokens(principal.user)
        if principal.whole_account:
            return mine
        return [t for t in mine if t.id == principal.token.id]

    def revoke(self, user: User, token_id: int) -> None:
        if not self.accounts.revoke_token(user.id, token_id, self.clock()):
            raise NotFound(f"no active token with id {token_id}")

    def revoke_as(self, principal: Principal, token_id: int) -> None:
        """A caller revokes one of their tokens: any, through a credential of the whole account;
        otherwise only the one it holds."""
        if token_id != principal.token.id:
            require_account(principal, "revoke other tokens")
        elif not principal.can_write:
            raise Forbidden("a read-only token cannot revoke tokens")
        self.revoke(principal.user, token_id)

    def authenticate(self, secret: str, resource: str | None = None) -> Principal:
        """The principal a token secret stands for, at `resource` (the URL it is used at):
        a token an OAuth application holds works only at the resource it was issued for."""
        token = self.accounts.token_by_hash(hash_secret(secret))
        now = self.clock()
        if token is None or token.revoked_at is not None:
            raise Unauthenticated("unknown or revoked token")
        if token.expires_at is not None and token.expires_at <= now:
            raise Unauthenticated("this token has expired")
        if token.resource is not None and (
            resource is None or not covers(token.resource, resource)
        ):
            raise Unauthenticated(f"this token was issued for {token.resource}, not for here")
        user = self.accounts.get_user(token.user_id)
        if user.disabled:  # disabling revokes the tokens too; this closes any race with it
            raise Unauthenticated("unknown or revoked token")
        if token.last_used_at is None or now - token.last_used_at > TOUCH_EVERY_S:
            self.accounts.touch_token(token.id, now)
        return Principal(user, token)

    # web sessions -------------------------------------------------------------------------
    def open_session(self, token_secret: str, resource: str | None = None) -> OpenedSession:
        """A web session for a token the person holds. An application's token never opens
        one: a session can approve other applications, which only the person may do."""
        principal = self.authenticate(token_secret, resource)
        if principal.token.client_id is not None:
            raise Forbidden("a token an application holds cannot sign in to the web app")
        return self._open_session(principal)

    def open_password_session(self, user: User) -> OpenedSession:
        """A session for a person who proved their password: it gets a token of its own (kind
        "session": not listed, unrestricted, gone when the session ends) so that everything
        downstream sees the same kind of principal as a token sign-in."""
        secret = new_secret()
        token = self.accounts.create_token(
            user.id,
            name="web sign-in",
            prefix=shown_prefix(secret),
            secret_hash=hash_secret(secret),
            scope="write",
            brain_ids=None,
            expires_at=self.clock() + SESSION_DAYS * DAY_S,
            kind="session",
        )
        return self._open_session(Principal(user, token))

    def _open_session(self, principal: Principal) -> OpenedSession:
        now = self.clock()
        expires_at = now + SESSION_DAYS * DAY_S
        if principal.token.expires_at is not None:
            expires_at = min(expires_at, principal.token.expires_at)
        secret, csrf = new_secret(SESSION_PREFIX), new_secret("")
        self.accounts.purge_sessions(now)
        self.accounts.create_session(
            hash_secret(secret), principal.user.id, principal.token.id, csrf, expires_at
        )
        return OpenedSession(secret, csrf, expires_at, principal)

    def session(self, secret: str) -> tuple[Principal, str]:
        """The principal behind a session cookie, and the session's CSRF token."""
        session = self.accounts.session_by_hash(hash_secret(secret))
        now = self.clock()
        if session is None or session.expires_at <= now:
            raise Unauthenticated("not signed in, or the session has expired")
        token = self.accounts.get_token(session.token_id)
        if token.revoked_at is not None or (token.expires_at and token.expires_at <= now):
            raise Unauthenticated("the token this session signed in with is no longer valid")
        user = self.accounts.get_user(session.user_id)
        if user.disabled:
            raise Unauthenticated("not signed in, or the session has expired")
        return Principal(user, token, via_session=True), session.csrf

    def close_session(self, secret: str) -> None:
        self.accounts.delete_session(hash_secret(secret))

    # brains as a principal sees them ------------------------------------------------------
    def readable_brains(self, principal: Principal) -> list[tuple[Brain, Role]]:
        roles = self.accounts.roles(principal.user.id)
        claimed = self.accounts.brains_with_members()
        seen = []
        for brain in self.store.list_brains():
            role = role_in(principal, brain, roles.get(brain.id), brain.id in claimed)
            if role is not None:
                seen.append((brain, role))
        return seen

    def brain(self, principal: Principal, name: str, need: Need = "read") -> tuple[Brain, Role]:
        """The brain `name` if the principal may `need` it; NotFound if they may not see it."""
        try:
            brain = self.store.get_brain(name)
        except NotFound:
            raise NotFound(f"no brain named {name!r}") from None
        members = self.accounts.members(brain.id)
        mine = next((m.role for m in members if m.user.id == principal.user.id), None)
        role = role_in(principal, brain, mine, bool(members))
        if role is None:
            raise NotFound(f"no brain named {name!r}")
        if not allows(principal, role, need):
            if not principal.can_write:
                raise Forbidden("this token is read-only")
            raise Forbidden(f"your role in {name!r} is {role}; this needs {_needed(need)}")
        return brain, role

    def user_may_read(self, user: User, brain: Brain) -> bool:
        """Whether `user` may read `brain` by their own role: the check for an integration
        answering as a linked user (Slack asks). A disabled user reads nothing."""
        if user.disabled:
            return False
        members = self.accounts.members(brain.id)
        mine = next((m.role for m in members if m.user.id == user.id), None)
        return user_role_in(user, brain, mine, bool(members)) is not None

    def user_may_write(self, user: User, brain: Brain) -> bool:
        """Whether `user` may write `brain` by their own role (no token narrowing it): the
        check for an integration acting as a linked user. A disabled user writes nothing."""
        if user.disabled:
            return False
        members = self.accounts.members(brain.id)
        mine = next((m.role for m in members if m.user.id == user.id), None)
        return user_role_in(user, brain, mine, bool(members)) in ("owner", "editor")

    def create_brain(self, principal: Principal, name: str, visibility: Visibility) -> Brain:
        if not principal.can_write:
            raise Forbidden("this token is read-only")
        if principal.token.brain_ids is not None:
            raise Forbidden("this token is limited to some brains and cannot create new ones")
        _check_visibility(visibility)
        return self.store.create_brain(check_name("brain", name), visibility, principal.user.id)

    def update_brain(
        self,
        principal: Principal,
        name: str,
        *,
        new_name: str | None = None,
        visibility: Visibility | None = None,
    ) -> Brain:
        brain, _ = self.brain(principal, name, "manage")
        if new_name is not None:
            check_name("brain", new_name)
        if visibility is not None:
            _check_visibility(visibility)
        return self.store.update_brain(brain.id, name=new_name, visibility=visibility)

    # members ------------------------------------------------------------------------------
    def members(self, principal: Principal, name: str) -> list[Member]:
        brain, _ = self.brain(principal, name, "read")
        return self.accounts.members(brain.id)

    def set_member(self, principal: Principal, name: str, user_name: str, role: Role) -> Member:
        brain, _ = self.brain(principal, name, "manage")
        if role not in ("owner", "editor", "viewer"):
            raise InvalidInput(f"role must be owner, editor or viewer, got {role!r}")
        user = self.accounts.find_user(user_name)
        members = self.accounts.members(brain.id)
        if not members:
            # An admin's unclaimed brain: claim it first, so sharing it keeps the admin in.
            self.accounts.set_member(brain.id, principal.user.id, "owner")
        elif any(m.user.id == user.id and m.role == "owner" for m in members) and role != "owner":
            self._keep_an_owner(members, user.id)  # demoting an owner
        self.accounts.set_member(brain.id, user.id, role)
        return Member(user, role)

    def remove_member(self, principal: Principal, name: str, user_name: str) -> None:
        brain, _ = self.brain(principal, name, "manage")
        user = self.accounts.find_user(user_name)
        members = self.accounts.members(brain.id)
        self._keep_an_owner(members, user.id)
        if not self.accounts.remove_member(brain.id, user.id):
            raise NotFound(f"{user_name!r} is not a member of {name!r}")

    @staticmethod
    def _keep_an_owner(members: list[Member], leaving_user_id: int) -> None:
        owners = [m for m in members if m.role == "owner" and m.user.id != leaving_user_id]
        if not owners:
            raise Conflict("a brain must keep at least one owner")


def _needed(need: Need) -> str:
    return {"read": "viewer", "own": "viewer", "write": "editor or owner", "manage": "owner"}[need]


def _check_visibility(visibility: str) -> None:
    if visibility not in ("restricted", "workspace"):
        raise InvalidInput(f"visibility must be restricted or workspace, got {visibility!r}")


def _login_name() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # no login name in some containers
        name = "owner"
    return name if NAME_PATTERN.fullmatch(name) else "owner"
