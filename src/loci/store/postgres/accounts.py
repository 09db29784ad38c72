"""Users, brain members, API tokens and web sessions in PostgreSQL (see the SQLite twin).

Secrets never reach this layer in the clear: tokens and sessions are looked up by the SHA-256 of
their secret. User names are unique and matched without regard to case, as on SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from psycopg import errors

from loci.errors import Conflict, NotFound
from loci.models import ApiToken, Member, Role, TokenScope, User, UserModel, WebSession
from loci.store.postgres.connection import Database, Row

_USER = "id, name, is_admin, created_at"
_TOKEN = (
    "id, user_id, name, prefix, scope, brain_ids, expires_at, created_at, last_used_at, revoked_at"
)


def _user(row: Row) -> User:
    return User(int(row["id"]), row["name"], bool(row["is_admin"]), row["created_at"])


def _token(row: Row) -> ApiToken:
    brains = row["brain_ids"]
    return ApiToken(**{**row, "brain_ids": tuple(brains) if brains is not None else None})


class PostgresAccounts:
    def __init__(self, db: Database) -> None:
        self.db = db

    # users --------------------------------------------------------------------------------
    def create_user(self, name: str, *, is_admin: bool = False) -> User:
        try:
            row = self.db.row(
                f"INSERT INTO users(name, is_admin) VALUES (%s, %s) RETURNING {_USER}",
                (name, is_admin),
            )
        except errors.UniqueViolation:
            raise Conflict(f"a user named {name!r} already exists") from None
        assert row is not None
        return _user(row)

    def find_user(self, name: str) -> User:
        row = self.db.row(f"SELECT {_USER} FROM users WHERE lower(name) = lower(%s)", (name,))
        if row is None:
            raise NotFound(f"no user named {name!r}")
        return _user(row)

    def get_user(self, user_id: int) -> User:
        row = self.db.row(f"SELECT {_USER} FROM users WHERE id = %s", (user_id,))
        if row is None:
            raise NotFound(f"no user with id {user_id}")
        return _user(row)

    def list_users(self) -> list[User]:
        return [_user(r) for r in self.db.rows(f"SELECT {_USER} FROM users ORDER BY id")]

    # members ------------------------------------------------------------------------------
    def members(self, brain_id: int) -> list[Member]:
        rows = self.db.rows(
            "SELECT u.id, u.name, u.is_admin, u.created_at, m.role FROM brain_members m"
            " JOIN users u ON u.id = m.user_id WHERE m.brain_id = %s"
            " ORDER BY lower(u.name), u.name",
            (brain_id,),
            brain_id,
        )
        return [Member(_user(r), r["role"]) for r in rows]

    def roles(self, user_id: int) -> dict[int, Role]:
        rows = self.db.rows(
            "SELECT brain_id, role FROM brain_members WHERE user_id = %s", (user_id,)
        )
        return {int(r["brain_id"]): r["role"] for r in rows}

    def brains_with_members(self) -> set[int]:
        return {
            int(r["brain_id"]) for r in self.db.rows("SELECT DISTINCT brain_id FROM brain_members")
        }

    def set_member(self, brain_id: int, user_id: int, role: Role) -> None:
        self.db.rows(
            "INSERT INTO brain_members(brain_id, user_id, role) VALUES (%s, %s, %s)"
            " ON CONFLICT (brain_id, user_id) DO UPDATE SET role = excluded.role",
            (brain_id, user_id, role),
            brain_id,
        )

    def remove_member(self, brain_id: int, user_id: int) -> bool:
        gone = self.db.rows(
            "DELETE FROM brain_members WHERE brain_id = %s AND user_id = %s RETURNING user_id",
            (brain_id, user_id),
            brain_id,
        )
        return bool(gone)

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
        row = self.db.row(
            "INSERT INTO api_tokens(user_id, name, prefix, secret_hash, scope, brain_ids,"
            f" expires_at) VALUES (%s,%s,%s,%s,%s,%s,%s) RETURNING {_TOKEN}",
            (user_id, name, prefix, secret_hash, scope, brains, expires_at),
        )
        assert row is not None
        return _token(row)

    def get_token(self, token_id: int) -> ApiToken:
        row = self.db.row(f"SELECT {_TOKEN} FROM api_tokens WHERE id = %s", (token_id,))
        if row is None:
            raise NotFound(f"no token with id {token_id}")
        return _token(row)

    def token_by_hash(self, secret_hash: str) -> ApiToken | None:
        row = self.db.row(f"SELECT {_TOKEN} FROM api_tokens WHERE secret_hash = %s", (secret_hash,))
        return _token(row) if row else None

    def list_tokens(self, user_id: int) -> list[ApiToken]:
        rows = self.db.rows(
            f"SELECT {_TOKEN} FROM api_tokens WHERE user_id = %s ORDER BY id", (user_id,)
        )
        return [_token(r) for r in rows]

    def revoke_token(self, user_id: int, token_id: int, now: float) -> bool:
        with self.db.tx() as cur:
            cur.execute(
                "UPDATE api_tokens SET revoked_at = %s WHERE id = %s AND user_id = %s"
                " AND revoked_at IS NULL",
                (now, token_id, user_id),
            )
            changed = cur.rowcount > 0
            cur.execute("DELETE FROM web_sessions WHERE token_id = %s", (token_id,))
        return changed

    def touch_token(self, token_id: int, now: float) -> None:
        self.db.rows("UPDATE api_tokens SET last_used_at = %s WHERE id = %s", (now, token_id))

    # a user's own chat model --------------------------------------------------------------
    def user_model(self, user_id: int) -> UserModel | None:
        row = self.db.row(
            "SELECT base_url, model, fallback_models, sealed_api_key FROM user_llm"
            " WHERE user_id = %s",
            (user_id,),
        )
        if row is None:
            return None
        return UserModel(
            row["base_url"], row["model"], tuple(row["fallback_models"]), row["sealed_api_key"]
        )

    def set_user_model(self, user_id: int, model: UserModel) -> None:
        self.db.rows(
            "INSERT INTO user_llm(user_id, base_url, model, fallback_models, sealed_api_key)"
            " VALUES (%s,%s,%s,%s,%s) ON CONFLICT (user_id) DO UPDATE SET"
            " base_url = excluded.base_url, model = excluded.model,"
            " fallback_models = excluded.fallback_models,"
            " sealed_api_key = excluded.sealed_api_key, updated_at = loci_now()",
            (
                user_id,
                model.base_url,
                model.model,
                json.dumps(list(model.fallback_models)),
                model.sealed_api_key,
            ),
        )

    def delete_user_model(self, user_id: int) -> bool:
        gone = self.db.rows("DELETE FROM user_llm WHERE user_id = %s RETURNING user_id", (user_id,))
        return bool(gone)

    # web sessions -------------------------------------------------------------------------
    def create_session(
        self, secret_hash: str, user_id: int, token_id: int, csrf: str, expires_at: float
    ) -> None:
        self.db.rows(
            "INSERT INTO web_sessions(secret_hash, user_id, token_id, csrf, expires_at)"
            " VALUES (%s,%s,%s,%s,%s)",
            (secret_hash, user_id, token_id, csrf, expires_at),
        )

    def session_by_hash(self, secret_hash: str) -> WebSession | None:
        row = self.db.row(
            "SELECT user_id, token_id, csrf, expires_at FROM web_sessions WHERE secret_hash = %s",
            (secret_hash,),
        )
        if row is None:
            return None
        return WebSession(int(row["user_id"]), int(row["token_id"]), row["csrf"], row["expires_at"])

    def delete_session(self, secret_hash: str) -> None:
        self.db.rows("DELETE FROM web_sessions WHERE secret_hash = %s", (secret_hash,))

    def purge_sessions(self, now: float) -> None:
        self.db.rows("DELETE FROM web_sessions WHERE expires_at < %s", (now,))
