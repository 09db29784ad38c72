"""Users, brain members, API tokens, users' own chat models and web sessions, the same on every
backend.

Secrets never reach this layer in the clear: tokens and sessions are looked up by the SHA-256 of
their secret, computed by `loci.auth`. A brain's members live here too, beside the users they
name; the brains themselves belong to the store. User names are unique without regard to case
and found by their key (`loci.names.user_key`), which Python computes, not the database, and
stores beside the name. The
SQL is portable (`loci.store.portable`); a backend's subclass says how it matches and orders
names that way, how JSON columns read back, and which error a duplicate raises.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from loci.auth.records import (
    ApiToken,
    Invite,
    Member,
    TokenKind,
    TokenScope,
    User,
    UserModel,
    WebSession,
)
from loci.errors import Conflict, NotFound
from loci.models import (
    Role,
)
from loci.names import is_user_key, user_key
from loci.store.portable import PortableDatabase, Row

# Always read through the alias `u`. The password hash is read only by `password_hash`.
_USER = (
    "u.id, u.name, u.is_admin, u.created_at, u.email, u.disabled_at,"
    " CASE WHEN u.password_hash IS NULL THEN 0 ELSE 1 END AS has_password"
)
_TOKEN = (
    "id, user_id, name, prefix, scope, brain_ids, expires_at, created_at, last_used_at,"
    " revoked_at, kind, client_id, resource"
)
_INVITE = "id, user_id, expires_at, used_at, created_at"


def _user(row: Row) -> User:
    return User(
        int(row["id"]),
        row["name"],
        bool(row["is_admin"]),
        row["created_at"],
        row["email"],
        row["disabled_at"],
        bool(row["has_password"]),
    )


def _invite(row: Row) -> Invite:
    return Invite(
        int(row["id"]), int(row["user_id"]), row["expires_at"], row["used_at"], row["created_at"]
    )


class AccountStore(Protocol):
    """Users, brain members, API tokens (by the hash of their secret) and web sessions."""

    def create_user(
        self, name: str, *, is_admin: bool = False, email: str | None = None
    ) -> User: ...
    def find_user(self, name: str) -> User: ...
    def get_user(self, user_id: int) -> User: ...
    def list_users(self) -> list[User]: ...
    def update_user(
        self, user_id: int, *, is_admin: bool | None = None, email: str | None = None
    ) -> None: ...
    def password_hash(self, user_id: int) -> str | None: ...
    def set_password(
        self, user_id: int, password_hash: str, now: float, keep_token_id: int | None = None
    ) -> None:
        """Store the hash and end the sessions of every other password sign-in."""
        ...

    def set_disabled(self, user_id: int, disabled_at: float | None) -> None:
        """Disabling revokes every token and ends every session in the same transaction."""
        ...

    def delete_user(self, user_id: int) -> bool: ...

    def create_invite(self, user_id: int, secret_hash: str, expires_at: float) -> Invite: ...
    def invite_by_hash(self, secret_hash: str) -> Invite | None: ...
    def use_invite(self, invite_id: int, now: float) -> bool:
        """Mark it used if it is unused and unexpired; False when it was not (a race lost)."""
        ...

    def open_invites(self, now: float) -> dict[int, Invite]: ...

    def members(self, brain_id: int) -> list[Member]: ...
    def roles(self, user_id: int) -> dict[int, Role]: ...
    def brains_with_members(self) -> set[int]: ...
    def set_member(self, brain_id: int, user_id: int, role: Role) -> None: ...
    def remove_member(self, brain_id: int, user_id: int) -> bool: ...

    def create_token(
        self,
        user_id: int,
        *,
        name: str,
        prefix: str,
        secret_hash: str,
        scope: TokenScope,
        brain_ids: Sequence[int] | None,
        expires_at: float | None,
        kind: TokenKind = "api",
        client_id: str | None = None,
        resource: str | None = None,
    ) -> ApiToken: ...
    def get_token(self, token_id: int) -> ApiToken: ...
    def token_by_hash(self, secret_hash: str) -> ApiToken | None: ...
    def list_tokens(self, user_id: int) -> list[ApiToken]: ...
    def revoke_token(self, user_id: int, token_id: int, now: float) -> bool:
        """Revoke one of the user's tokens and end the web sessions it opened."""
        ...

    def touch_token(self, token_id: int, now: float) -> None: ...

    def user_model(self, user_id: int) -> UserModel | None: ...
    def set_user_model(self, user_id: int, model: UserModel) -> None: ...
    def delete_user_model(self, user_id: int) -> bool: ...

    def create_session(
        self, secret_hash: str, user_id: int, token_id: int, csrf: str, expires_at: float
    ) -> None: ...
    def session_by_hash(self, secret_hash: str) -> WebSession | None: ...
    def delete_session(self, secret_hash: str) -> None: ...
    def purge_sessions(self, now: float) -> None: ...


class AccountTables(ABC):
    # The SQL of the current time.
    now: ClassVar[str]
    # Users `u` whose name folds to a key (`loci.names.user_key`, kept in `name_key` since
    # migration 29: names may be in any script, which no backend folds as Python does), and
    # users in the order of their names without regard to case.
    name_is: ClassVar[str] = "u.name_key = ?"
    by_name: ClassVar[str] = "u.name_key, u.name"
    # What the backend raises when a write breaks a unique constraint.
    unique_error: ClassVar[type[Exception]]

    def __init__(self, db: PortableDatabase) -> None:
        self.db = db

    @abstractmethod
    def _json(self, value: Any) -> Any:
        """A JSON column's value as read back, decoded."""

    def _token(self, row: Row) -> ApiToken:
        brains = row["brain_ids"]
        decoded = tuple(self._json(brains)) if brains is not None else None
        return ApiToken(**{**row, "brain_ids": decoded})

    # users --------------------------------------------------------------------------------
    def create_user(self, name: str, *, is_admin: bool = False, email: str | None = None) -> User:
        try:
            rows = self.db.returning(
                "INSERT INTO users(name, name_key, is_admin, email) VALUES (?, ?, ?, ?)"
                " RETURNING id",
                (name, user_key(name), is_admin, email),
            )
        except self.unique_error:
            raise Conflict(f"a user named {name!r} already exists") from None
        return self.get_user(int(rows[0]["id"]))

    def find_user(self, name: str) -> User:
        """The user whose name has the same key as `name` (`loci.names.user_key`)."""
        key = user_key(name)
        if not is_user_key(key):  # no stored name folds to it
            raise NotFound(f"no user named {name!r}")
        rows = self.db.query(f"SELECT {_USER} FROM users u WHERE {self.name_is}", (key,))
        if not rows:
            raise NotFound(f"no user named {name!r}")
        return _user(rows[0])

    def get_user(self, user_id: int) -> User:
        rows = self.db.query(f"SELECT {_USER} FROM users u WHERE u.id = ?", (user_id,))
        if not rows:
            raise NotFound(f"no user with id {user_id}")
        return _user(rows[0])

    def list_users(self) -> list[User]:
        return [_user(r) for r in self.db.query(f"SELECT {_USER} FROM users u ORDER BY u.id")]

    def update_user(
        self, user_id: int, *, is_admin: bool | None = None, email: str | None = None
    ) -> None:
        if is_admin is not None:
            self.db.change("UPDATE users SET is_admin = ? WHERE id = ?", (is_admin, user_id))
        if email is not None:
            self.db.change("UPDATE users SET email = ? WHERE id = ?", (email or None, user_id))

    def password_hash(self, user_id: int) -> str | None:
        rows = self.db.query("SELECT password_hash FROM users WHERE id = ?", (user_id,))
        return rows[0]["password_hash"] if rows else None

    def set_password(
        self, user_id: int, password_hash: str, now: float, keep_token_id: int | None = None
    ) -> None:
        """Store a new password hash and end every password sign-in's session but the one
        holding `keep_token_id` (a changed password signs out the browsers that knew the old
        one, not the person changing it)."""
        with self.db.transaction() as conn:
            self.db.run(
                conn, "UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id)
            )
            self._revoke_all(conn, user_id, now, only_kind="session", keep=keep_token_id)

    def set_disabled(self, user_id: int, disabled_at: float | None) -> None:
        """Disable (revoking every token, ending every session, voiding open invites at once)
        or enable a user again (their revoked tokens stay revoked)."""
        with self.db.transaction() as conn:
            self.db.run(
                conn, "UPDATE users SET disabled_at = ? WHERE id = ?", (disabled_at, user_id)
            )
            if disabled_at is not None:
                self._revoke_all(conn, user_id, disabled_at)
                self.db.run(conn, "DELETE FROM invites WHERE user_id = ?", (user_id,))

    def delete_user(self, user_id: int) -> bool:
        """Remove a user and, by cascade, their memberships, tokens, sessions, invites, own
        model settings and private conversations."""
        return self.db.change("DELETE FROM users WHERE id = ?", (user_id,)) > 0

    def _revoke_all(
        self,
        conn: Any,
        user_id: int,
        now: float,
        only_kind: TokenKind | None = None,
        keep: int | None = None,
    ) -> None:
        kind = "" if only_kind is None else " AND kind = ?"
        extra: tuple[Any, ...] = () if only_kind is None else (only_kind,)
        if keep is not None:
            kind += " AND id <> ?"
            extra += (keep,)
        self.db.run(
            conn,
            "DELETE FROM web_sessions WHERE token_id IN"
            f" (SELECT id FROM api_tokens WHERE user_id = ?{kind})",
            (user_id, *extra),
        )
        self.db.run(
            conn,
            f"UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL{kind}",
            (now, user_id, *extra),
        )

    # invites ------------------------------------------------------------------------------
    def create_invite(self, user_id: int, secret_hash: str, expires_at: float) -> Invite:
        """A new invite for the user; any earlier one of theirs stops working."""
        with self.db.transaction() as conn:
            self.db.run(conn, "DELETE FROM invites WHERE user_id = ?", (user_id,))
            rows = self.db.run(
                conn,
                "INSERT INTO invites(user_id, secret_hash, expires_at) VALUES (?, ?, ?)"
                f" RETURNING {_INVITE}",
                (user_id, secret_hash, expires_at),
            )
        return _invite(rows[0])

    def invite_by_hash(self, secret_hash: str) -> Invite | None:
        rows = self.db.query(f"SELECT {_INVITE} FROM invites WHERE secret_hash = ?", (secret_hash,))
        return _invite(rows[0]) if rows else None

    def use_invite(self, invite_id: int, now: float) -> bool:
        """Mark the invite used, if it still can be: exactly one caller wins a race."""
        rows = self.db.returning(
            "UPDATE invites SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?"
            " RETURNING id",
            (now, invite_id, now),
        )
        return bool(rows)

    def open_invites(self, now: float) -> dict[int, Invite]:
        """user id -> their unused, unexpired invite."""
        rows = self.db.query(
            f"SELECT {_INVITE} FROM invites WHERE used_at IS NULL AND expires_at > ?", (now,)
        )
        return {int(r["user_id"]): _invite(r) for r in rows}

    # members ------------------------------------------------------------------------------
    def members(self, brain_id: int) -> list[Member]:
        rows = self.db.query(
            f"SELECT {_USER}, m.role FROM brain_members m"
            f" JOIN users u ON u.id = m.user_id WHERE m.brain_id = ? ORDER BY {self.by_name}",
            (brain_id,),
            brain_id,
        )
        return [Member(_user(r), r["role"]) for r in rows]

    def roles(self, user_id: int) -> dict[int, Role]:
        """brain id -> the user's role there, for every brain they are a member of."""
        rows = self.db.query(
            "SELECT brain_id, role FROM brain_members WHERE user_id = ?", (user_id,)
        )
        return {int(r["brain_id"]): r["role"] for r in rows}

    def brains_with_members(self) -> set[int]:
        rows = self.db.query("SELECT DISTINCT brain_id FROM brain_members")
        return {int(r["brain_id"]) for r in rows}

    def set_member(self, brain_id: int, user_id: int, role: Role) -> None:
        self.db.change(
            "INSERT INTO brain_members(brain_id, user_id, role) VALUES (?, ?, ?)"
            " ON CONFLICT (brain_id, user_id) DO UPDATE SET role = excluded.role",
            (brain_id, user_id, role),
            brain_id,
        )

    def remove_member(self, brain_id: int, user_id: int) -> bool:
        return (
            self.db.change(
                "DELETE FROM brain_members WHERE brain_id = ? AND user_id = ?",
                (brain_id, user_id),
                brain_id,
            )
            > 0
        )

    # tokens -------------------------------------------------------------------------------
    def create_token(
        self,
        user_id: int,
        *,
        name: str,
        prefix: str,
        secret_hash: str,
        scope: TokenScope,
        brain_ids: Sequence[int] | None,
        expires_at: float | None,
        kind: TokenKind = "api",
        client_id: str | None = None,
        resource: str | None = None,
    ) -> ApiToken:
        brains = json.dumps(sorted(set(brain_ids))) if brain_ids is not None else None
        rows = self.db.returning(
            "INSERT INTO api_tokens(user_id, name, prefix, secret_hash, scope, brain_ids,"
            f" expires_at, kind, client_id, resource) VALUES (?,?,?,?,?,?,?,?,?,?)"
            f" RETURNING {_TOKEN}",
            (
                user_id,
                name,
                prefix,
                secret_hash,
                scope,
                brains,
                expires_at,
                kind,
                client_id,
                resource,
            ),
        )
        return self._token(rows[0])

    def get_token(self, token_id: int) -> ApiToken:
        rows = self.db.query(f"SELECT {_TOKEN} FROM api_tokens WHERE id = ?", (token_id,))
        if not rows:
            raise NotFound(f"no token with id {token_id}")
        return self._token(rows[0])

    def token_by_hash(self, secret_hash: str) -> ApiToken | None:
        rows = self.db.query(
            f"SELECT {_TOKEN} FROM api_tokens WHERE secret_hash = ?", (secret_hash,)
        )
        return self._token(rows[0]) if rows else None

    def list_tokens(self, user_id: int) -> list[ApiToken]:
        """The user's own API tokens (not the ones password sign-ins made for their sessions)."""
        rows = self.db.query(
            f"SELECT {_TOKEN} FROM api_tokens WHERE user_id = ? AND kind = 'api' ORDER BY id",
            (user_id,),
        )
        return [self._token(r) for r in rows]

    def revoke_token(self, user_id: int, token_id: int, now: float) -> bool:
        with self.db.transaction() as conn:
            revoked = self.db.run(
                conn,
                "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND user_id = ?"
                " AND revoked_at IS NULL AND kind = 'api' RETURNING id",
                (now, token_id, user_id),
            )
            self.db.run(conn, "DELETE FROM web_sessions WHERE token_id = ?", (token_id,))
        return bool(revoked)

    def drop_brain_from_tokens(self, conn: Any, brain_id: int, now: float) -> None:
        """Inside the transaction deleting a brain: take it out of every token limited to it,
        and revoke (ending its sessions) a token it was the last brain of — a token for no
        brain must not become one for whatever comes next."""
        for row in self.db.run(conn, "SELECT id, brain_ids FROM api_tokens"):
            if row["brain_ids"] is None:
                continue
            scope = [int(b) for b in self._json(row["brain_ids"])]
            if brain_id not in scope:
                continue
            kept = [b for b in scope if b != brain_id]
            self.db.run(
                conn,
                "UPDATE api_tokens SET brain_ids = ? WHERE id = ?",
                (json.dumps(kept), row["id"]),
            )
            if not kept:
                self.db.run(
                    conn,
                    "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    (now, row["id"]),
                )
                self.db.run(conn, "DELETE FROM web_sessions WHERE token_id = ?", (row["id"],))

    def touch_token(self, token_id: int, now: float) -> None:
        self.db.change("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (now, token_id))

    # a user's own chat model --------------------------------------------------------------
    def user_model(self, user_id: int) -> UserModel | None:
        rows = self.db.query(
            "SELECT base_url, model, fallback_models, sealed_api_key FROM user_llm"
            " WHERE user_id = ?",
            (user_id,),
        )
        if not rows:
            return None
        row = rows[0]
        return UserModel(
            row["base_url"],
            row["model"],
            tuple(self._json(row["fallback_models"])),
            row["sealed_api_key"],
        )

    def set_user_model(self, user_id: int, model: UserModel) -> None:
        self.db.change(
            "INSERT INTO user_llm(user_id, base_url, model, fallback_models, sealed_api_key)"
            " VALUES (?,?,?,?,?) ON CONFLICT (user_id) DO UPDATE SET"
            " base_url = excluded.base_url, model = excluded.model,"
            " fallback_models = excluded.fallback_models,"
            f" sealed_api_key = excluded.sealed_api_key, updated_at = {self.now}",
            (
                user_id,
                model.base_url,
                model.model,
                json.dumps(list(model.fallback_models)),
                model.sealed_api_key,
            ),
        )

    def delete_user_model(self, user_id: int) -> bool:
        return self.db.change("DELETE FROM user_llm WHERE user_id = ?", (user_id,)) > 0

    # web sessions -------------------------------------------------------------------------
    def create_session(
        self, secret_hash: str, user_id: int, token_id: int, csrf: str, expires_at: float
    ) -> None:
        self.db.change(
            "INSERT INTO web_sessions(secret_hash, user_id, token_id, csrf, expires_at)"
            " VALUES (?,?,?,?,?)",
            (secret_hash, user_id, token_id, csrf, expires_at),
        )

    def session_by_hash(self, secret_hash: str) -> WebSession | None:
        rows = self.db.query(
            "SELECT user_id, token_id, csrf, expires_at FROM web_sessions WHERE secret_hash = ?",
            (secret_hash,),
        )
        if not rows:
            return None
        row = rows[0]
        return WebSession(int(row["user_id"]), int(row["token_id"]), row["csrf"], row["expires_at"])

    def delete_session(self, secret_hash: str) -> None:
        """End a session; the token a password sign-in made for it goes too."""
        with self.db.transaction() as conn:
            rows = self.db.run(
                conn,
                "DELETE FROM web_sessions WHERE secret_hash = ? RETURNING token_id",
                (secret_hash,),
            )
            if rows:
                self.db.run(
                    conn,
                    "DELETE FROM api_tokens WHERE id = ? AND kind = 'session'",
                    (rows[0]["token_id"],),
                )

    def purge_sessions(self, now: float) -> None:
        """Forget expired sessions, and the session tokens no session can use any more."""
        with self.db.transaction() as conn:
            self.db.run(conn, "DELETE FROM web_sessions WHERE expires_at < ?", (now,))
            self.db.run(
                conn,
                "DELETE FROM api_tokens WHERE kind = 'session'"
                " AND (revoked_at IS NOT NULL OR expires_at < ?)",
                (now,),
            )
