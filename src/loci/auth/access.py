"""What a principal may do in a brain — the one place access is decided.

A principal is a user acting through one token (directly, or through a web session the token
opened). Their role in a brain comes from membership; a `workspace` brain lets every user read;
a brain with no members at all (made by the local CLI before any account existed) belongs to the
workspace's admins. The token then narrows it: a token limited to some brains sees no others, and
a read token never writes whatever the role.

A token limited to some brains, and any token an application holds (an OAuth grant), act for
part of an account: what belongs to the whole account — its model and key, its password, its
tokens, the people of the workspace — needs the whole account (`require_account`): a token the
person made that reaches every brain, or a web session. A key stored for one model must never be
sent where a narrower credential points it.

A read token reads: it may search, ask and read the caller's conversations. Asking keeps the
question and answer in the caller's own conversation (a follow-up needs it, and it changes nothing
anyone else sees), but every other change to stored state needs a write token — renaming or
deleting a conversation and rating an answer included (`own`: any role that reads, a write token).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loci.auth.records import ApiToken, User
from loci.errors import Forbidden
from loci.models import Brain, Role

# read: see it; own: change the caller's own things in it (conversations, ratings); write: change
# its documents; manage: its settings and members.
Need = Literal["read", "own", "write", "manage"]


@dataclass(frozen=True)
class Principal:
    user: User
    token: ApiToken
    via_session: bool = False

    @property
    def can_write(self) -> bool:
        return self.token.scope == "write"

    def reaches(self, brain_id: int) -> bool:
        return self.token.brain_ids is None or brain_id in self.token.brain_ids

    @property
    def whole_account(self) -> bool:
        """Whether this credential acts for the person's whole account: a token they made
        themselves (not an application's) that no brain list narrows."""
        return self.token.brain_ids is None and self.token.client_id is None


def require_account(principal: Principal, doing: str, *, write: bool = True) -> None:
    """Forbidden unless `principal` acts for the whole account (and may write, for a change):
    `doing` completes "… cannot {doing}" in the refusal."""
    if principal.token.client_id is not None:
        raise Forbidden(f"a token an application holds cannot {doing}")
    if principal.token.brain_ids is not None:
        raise Forbidden(
            f"a token limited to some brains cannot {doing}: use a token of your whole account"
            " or the web app"
        )
    if write and not principal.can_write:
        raise Forbidden(f"a read-only token cannot {doing}")


def require_session(principal: Principal, doing: str) -> None:
    """Forbidden unless a person signed in to the web app acts: what only a person decides
    (approving an application) is never done with a bearer token."""
    if not principal.via_session:
        raise Forbidden(f"{doing} takes a person signed in to the web app")


def require_admin(principal: Principal, doing: str) -> None:
    """What reaches beyond the caller's brains — the workspace's people, a folder on the
    server — takes an admin acting with their full powers: a write credential of their whole
    account (a token they made that reaches every brain, or a session)."""
    if not principal.user.is_admin:
        raise Forbidden(f"only an admin may {doing}")
    require_account(principal, doing)


def role_in(
    principal: Principal, brain: Brain, member_role: Role | None, has_members: bool
) -> Role | None:
    """The principal's role in the brain, or None when they may not even know it exists."""
    if not principal.reaches(brain.id):
        return None
    return user_role_in(principal.user, brain, member_role, has_members)


def user_role_in(
    user: User, brain: Brain, member_role: Role | None, has_members: bool
) -> Role | None:
    """The user's own role, whatever token they use: what an integration they were linked to
    (a Slack identity) acts with."""
    if member_role is not None:
        return member_role
    if not has_members and user.is_admin:
        return "owner"
    if brain.visibility == "workspace":
        return "viewer"
    return None


def allows(principal: Principal, role: Role, need: Need) -> bool:
    if need == "read":
        return True
    if not principal.can_write:
        return False
    if need == "own":
        return True
    if need == "write":
        return role in ("owner", "editor")
    return role == "owner"
