"""Users, brain members, API tokens and web sessions in the SQLite database.

Secrets never reach this layer in the clear: tokens and sessions are looked up by the SHA-256 of
their secret, computed by `loci.auth`. A brain's members live here too, beside the users they
name; the brains themselves belong to `SqliteStore`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import apsw

from loci.errors import Conflict, NotFound
from loci.models import ApiToken, Member, Role, TokenScope, User, UserModel, WebSession
from loci.store.sqlite.connection import Database, Row


def _user(row: Row) -> User:
    return User(row["id"], row["name"], bool(row["is_admin"]), row["created_at"])


def _token(row: Row) -> ApiToken:
    brains = row["brain_ids"]
    return ApiToken(
        id=row["id"],
        user_id=row["user_id"],
        name=row["name"],
        prefix=row["prefix"],
        scope=row["scope"],
        brain_ids=tuple(json.loads(brains)) if brains is not None else None,
        expires_at=row["expires_at"],
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
        revoked_at=row["revoked_at"],
    )


class SqliteAccounts:
    def __init__(self, db: Database) -> None:
        self.db = db

    # users --------------------------------------------------------------------------------
    def create_user(self, name: str, *, is_admin: bool = False) -> User:
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO users(name, is_admin) VALUES (?, ?)", (name, int(is_admin))
                )
        except apsw.ConstraintError:
            raise Conflict(f"a user named {name!r} already exists") from None
        return self.find_user(name)

    def find_user(self, name: str) -> User:
        row = self.db.row("SELECT * FROM users WHERE name = ?", (name,))
        if row is None:
            raise NotFound(f"no user named {name!r}")
        return _user(row)

    def get_user(self, user_id: int) -> User:
        row = self.db.row("SELECT * FROM users WHERE id = ?", (user_id,))
        if row is None:
            raise NotFound(f"no user with id {user_id}")
        return _user(row)

    def list_users(self) -> list[User]:
        return [_user(r) for r in self.db.rows("SELECT * FROM users ORDER BY id")]

    # members ------------------------------------------------------------------------------
    def members(self, brain_id: int) -> list[Member]:
        rows = self.db.rows(
            "SELECT u.*, m.role FROM brain_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.brain_id = ? ORDER BY u.name",
            (brain_id,),
        )
        return [Member(_user(r), r["role"]) for r in rows]

    def roles(self, user_id: int) -> dict[int, Role]:
        """brain id -> the user's role there, for every brain they are a member of."""
        rows = self.db.rows(
            "SELECT brain_id, role FROM brain_members WHERE user_id = ?", (user_id,)
        )
        return {r["brain_id"]: r["role"] for r in rows}

    def brains_with_members(self) -> set[int]:
        rows = self.db.rows("SELECT DISTINCT brain_id FROM brain_members")
        return {r["brain_id"] for r in rows}

    def set_member(self, brain_id: int, user_id: int, role: Role) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO brain_members(brain_id, user_id, role) VALUES (?,?,?)"
                " ON CONFLICT(brain_id, user_id) DO UPDATE SET role = excluded.role",
                (brain_id, user_id, role),
            )

    def remove_member(self, brain_id: int, user_id: int) -> bool:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM brain_members WHERE brain_id = ? AND user_id = ?",
                (brain_id, user_id),
            )
            return bool(conn.changes())

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
    ) -> ApiToken:
        brains = json.dumps(sorted(set(brain_ids))) if brain_ids is not None else None
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO api_tokens(user_id, name, prefix, secret_hash, scope, brain_ids,"
                " expires_at) VALUES (?,?,?,?,?,?,?)",
                (user_id, name, prefix, secret_hash, scope, brains, expires_at),
            )
            token_id = conn.last_insert_rowid()
        return self.get_token(token_id)

    def get_token(self, token_id: int) -> ApiToken:
        row = self.db.row("SELECT * FROM api_tokens WHERE id = ?", (token_id,))
        if row is None:
            raise NotFound(f"no token with id {token_id}")
        return _token(row)

    def token_by_hash(self, secret_hash: str) -> ApiToken | None:
        row = self.db.row("SELECT * FROM api_tokens WHERE secret_hash = ?", (secret_hash,))
        return _token(row) if row else None

    def list_tokens(self, user_id: int) -> list[ApiToken]:
        rows = self.db.rows("SELECT * FROM api_tokens WHERE user_id = ? ORDER BY id", (user_id,))
        return [_token(r) for r in rows]

    def revoke_token(self, user_id: int, token_id: int, now: float) -> bool:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND user_id = ?"
                " AND revoked_at IS NULL",
                (now, token_id, user_id),
            )
            changed = bool(conn.changes())
            conn.execute("DELETE FROM web_sessions WHERE token_id = ?", (token_id,))
        return changed

    def touch_token(self, token_id: int, now: float) -> None:
        with self.db.write() as conn:
            conn.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (now, token_id))

    # a user's own chat model --------------------------------------------------------------
    def user_model(self, user_id: int) -> UserModel | None:
        row = self.db.row("SELECT * FROM user_llm WHERE user_id = ?", (user_id,))
        if row is None:
            return None
        return UserModel(
            row["base_url"],
            row["model"],
            tuple(json.loads(row["fallback_models"])),
            row["sealed_api_key"],
        )

    def set_user_model(self, user_id: int, model: UserModel) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO user_llm(user_id, base_url, model, fallback_models, sealed_api_key)"
                " VALUES (?,?,?,?,?) ON CONFLICT(user_id) DO UPDATE SET"
                " base_url = excluded.base_url, model = excluded.model,"
                " fallback_models = excluded.fallback_models,"
                " sealed_api_key = excluded.sealed_api_key,"
                " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')",
                (
                    user_id,
                    model.base_url,
                    model.model,
                    json.dumps(list(model.fallback_models)),
                    model.sealed_api_key,
                ),
            )

    def delete_user_model(self, user_id: int) -> bool:
        with self.db.write() as conn:
            conn.execute("DELETE FROM user_llm WHERE user_id = ?", (user_id,))
            return bool(conn.changes())

    # web sessions -------------------------------------------------------------------------
    def create_session(
        self, secret_hash: str, user_id: int, token_id: int, csrf: str, expires_at: float
    ) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO web_sessions(secret_hash, user_id, token_id, csrf, expires_at)"
                " VALUES (?,?,?,?,?)",
                (secret_hash, user_id, token_id, csrf, expires_at),
            )

    def session_by_hash(self, secret_hash: str) -> WebSession | None:
        row = self.db.row("SELECT * FROM web_sessions WHERE secret_hash = ?", (secret_hash,))
        if row is None:
            return None
        return WebSession(row["user_id"], row["token_id"], row["csrf"], row["expires_at"])

    def delete_session(self, secret_hash: str) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM web_sessions WHERE secret_hash = ?", (secret_hash,))

    def purge_sessions(self, now: float) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM web_sessions WHERE expires_at < ?", (now,))
