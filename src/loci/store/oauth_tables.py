"""OAuth clients, authorization codes and refresh tokens, the same on every backend.

Secrets arrive here as hashes only (`loci.auth.secrets.hash_secret`). Using a code or a refresh
token is one conditional `UPDATE … RETURNING`, so of two requests racing with the same one
exactly one wins. The access token an OAuth client holds is a row of `api_tokens` (see
`AccountTables`); refreshing it replaces its secret in place, so the token lists show one row
per connected application however often it refreshes. The SQL is portable
(`loci.store.portable`); a backend's subclass says how JSON columns read back and how
registrations are made one at a time.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol

from loci.auth.records import (
    OAuthClient,
    OAuthCode,
    RefreshToken,
    RegistrationLoad,
)
from loci.store.portable import PortableDatabase, Row

_CLIENT = "client_id, name, redirect_uris, grant_types, auth_method, secret_hash, created_at"
_CODE = (
    "code_hash, client_id, user_id, redirect_uri, scope, brain_ids, resource, code_challenge,"
    " expires_at, used_at, token_id"
)
_REFRESH = "secret_hash, token_id, expires_at, used_at"


class OAuthStore(Protocol):
    """Registered OAuth clients, authorization codes and refresh tokens (hashes only)."""

    def create_client(self, client: OAuthClient) -> OAuthClient: ...
    def register_client(
        self,
        client: OAuthClient,
        address: str,
        since: str,
        admit: Callable[[RegistrationLoad], None],
    ) -> OAuthClient:
        """Keep `client` (registered from `address` at its `created_at`) unless `admit`, shown
        the load since `since`, raises — which is raised. One registration at a time."""
        ...

    def client(self, client_id: str) -> OAuthClient | None: ...
    def purge_clients(self, created_before: str) -> int: ...
    def create_code(self, code: OAuthCode) -> None: ...
    def code(self, code_hash: str) -> OAuthCode | None: ...
    def use_code(self, code_hash: str, now: float) -> bool:
        """Mark it used if it is unused and unexpired; False when it was not (a race lost)."""
        ...

    def set_code_token(self, code_hash: str, token_id: int) -> None: ...
    def purge_codes(self, before: float) -> None: ...
    def create_refresh(self, secret_hash: str, token_id: int, expires_at: float) -> None: ...
    def refresh(self, secret_hash: str) -> RefreshToken | None: ...
    def use_refresh(self, secret_hash: str, now: float) -> bool: ...
    def rotate_token(
        self, token_id: int, *, prefix: str, secret_hash: str, expires_at: float
    ) -> bool: ...
    def purge_refresh(self, before: float) -> None: ...


class OAuthTables(ABC):
    def __init__(self, db: PortableDatabase) -> None:
        self.db = db

    @abstractmethod
    def _json(self, value: Any) -> Any:
        """A JSON column's value as read back, decoded."""

    @abstractmethod
    def _one_registration_at_a_time(self, conn: Any) -> None:
        """Inside `register_client`'s transaction: make any other wait until it ends."""

    def _client(self, row: Row) -> OAuthClient:
        return OAuthClient(
            client_id=row["client_id"],
            name=row["name"],
            redirect_uris=tuple(self._json(row["redirect_uris"])),
            grant_types=tuple(self._json(row["grant_types"])),
            auth_method=row["auth_method"],
            secret_hash=row["secret_hash"],
            created_at=row["created_at"],
        )

    def _code(self, row: Row) -> OAuthCode:
        brains = row["brain_ids"]
        return OAuthCode(
            **{
                **row,
                "user_id": int(row["user_id"]),
                "brain_ids": tuple(self._json(brains)) if brains is not None else None,
                "token_id": int(row["token_id"]) if row["token_id"] is not None else None,
            }
        )

    # clients ------------------------------------------------------------------------------
    def create_client(self, client: OAuthClient) -> OAuthClient:
        rows = self.db.returning(
            "INSERT INTO oauth_clients(client_id, name, redirect_uris, grant_types, auth_method,"
            f" secret_hash) VALUES (?,?,?,?,?,?) RETURNING {_CLIENT}",
            (
                client.client_id,
                client.name,
                json.dumps(list(client.redirect_uris)),
                json.dumps(list(client.grant_types)),
                client.auth_method,
                client.secret_hash,
            ),
        )
        return self._client(rows[0])

    def register_client(
        self,
        client: OAuthClient,
        address: str,
        since: str,
        admit: Callable[[RegistrationLoad], None],
    ) -> OAuthClient:
        """Keep `client`, registered from `address` at its `created_at`, unless `admit` raises
        on seeing what registering holds already: when `address` registered since `since`,
        and the clients that never got a token. Registrations are weighed one at a time, so
        two cannot each take the last place; addresses older than `since` are forgotten."""
        with self.db.transaction() as conn:
            self._one_registration_at_a_time(conn)
            self.db.run(
                conn,
                "UPDATE oauth_clients SET registered_from = NULL"
                " WHERE registered_from IS NOT NULL AND created_at < ?",
                (since,),
            )
            recent = self.db.run(
                conn,
                "SELECT created_at FROM oauth_clients WHERE registered_from = ?"
                " AND created_at >= ? ORDER BY created_at",
                (address, since),
            )
            unused = self.db.run(
                conn,
                "SELECT count(*) AS n, min(created_at) AS oldest FROM oauth_clients c"
                " WHERE NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.client_id = c.client_id)",
            )[0]
            admit(
                RegistrationLoad(
                    recent=tuple(r["created_at"] for r in recent),
                    unused=int(unused["n"]),
                    oldest_unused=unused["oldest"],
                )
            )
            rows = self.db.run(
                conn,
                "INSERT INTO oauth_clients(client_id, name, redirect_uris, grant_types,"
                " auth_method, secret_hash, created_at, registered_from)"
                f" VALUES (?,?,?,?,?,?,?,?) RETURNING {_CLIENT}",
                (
                    client.client_id,
                    client.name,
                    json.dumps(list(client.redirect_uris)),
                    json.dumps(list(client.grant_types)),
                    client.auth_method,
                    client.secret_hash,
                    client.created_at,
                    address,
                ),
            )
        return self._client(rows[0])

    def client(self, client_id: str) -> OAuthClient | None:
        rows = self.db.query(
            f"SELECT {_CLIENT} FROM oauth_clients WHERE client_id = ?", (client_id,)
        )
        return self._client(rows[0]) if rows else None

    def purge_clients(self, created_before: str) -> int:
        """Forget registrations made before `created_before` (an ISO time) that never got a
        token: dynamic registration is open to anyone, so unused ones must not pile up."""
        return self.db.change(
            "DELETE FROM oauth_clients WHERE created_at < ? AND NOT EXISTS"
            " (SELECT 1 FROM api_tokens t WHERE t.client_id = oauth_clients.client_id)",
            (created_before,),
        )

    # authorization codes ------------------------------------------------------------------
    def create_code(self, code: OAuthCode) -> None:
        brains = json.dumps(sorted(set(code.brain_ids))) if code.brain_ids is not None else None
        self.db.change(
            "INSERT INTO oauth_codes(code_hash, client_id, user_id, redirect_uri, scope,"
            " brain_ids, resource, code_challenge, expires_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                code.code_hash,
                code.client_id,
                code.user_id,
                code.redirect_uri,
                code.scope,
                brains,
                code.resource,
                code.code_challenge,
                code.expires_at,
            ),
        )

    def code(self, code_hash: str) -> OAuthCode | None:
        rows = self.db.query(f"SELECT {_CODE} FROM oauth_codes WHERE code_hash = ?", (code_hash,))
        return self._code(rows[0]) if rows else None

    def use_code(self, code_hash: str, now: float) -> bool:
        """Mark the code used if it is unused and unexpired: exactly one caller wins."""
        rows = self.db.returning(
            "UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL"
            " AND expires_at > ? RETURNING code_hash",
            (now, code_hash, now),
        )
        return bool(rows)

    def set_code_token(self, code_hash: str, token_id: int) -> None:
        self.db.change(
            "UPDATE oauth_codes SET token_id = ? WHERE code_hash = ?", (token_id, code_hash)
        )

    def purge_codes(self, before: float) -> None:
        """Forget codes that expired before `before` (a used one is kept until then, so its
        reuse is still recognised and answered by revoking its token)."""
        self.db.change("DELETE FROM oauth_codes WHERE expires_at < ?", (before,))

    # refresh tokens -----------------------------------------------------------------------
    def create_refresh(self, secret_hash: str, token_id: int, expires_at: float) -> None:
        self.db.change(
            "INSERT INTO oauth_refresh_tokens(secret_hash, token_id, expires_at) VALUES (?,?,?)",
            (secret_hash, token_id, expires_at),
        )

    def refresh(self, secret_hash: str) -> RefreshToken | None:
        rows = self.db.query(
            f"SELECT {_REFRESH} FROM oauth_refresh_tokens WHERE secret_hash = ?", (secret_hash,)
        )
        if not rows:
            return None
        row = rows[0]
        return RefreshToken(
            row["secret_hash"], int(row["token_id"]), row["expires_at"], row["used_at"]
        )

    def use_refresh(self, secret_hash: str, now: float) -> bool:
        rows = self.db.returning(
            "UPDATE oauth_refresh_tokens SET used_at = ? WHERE secret_hash = ?"
            " AND used_at IS NULL AND expires_at > ? RETURNING secret_hash",
            (now, secret_hash, now),
        )
        return bool(rows)

    def rotate_token(
        self, token_id: int, *, prefix: str, secret_hash: str, expires_at: float
    ) -> bool:
        """Give a live OAuth token a new secret (a refresh); False if it was revoked."""
        rows = self.db.returning(
            "UPDATE api_tokens SET prefix = ?, secret_hash = ?, expires_at = ?"
            " WHERE id = ? AND revoked_at IS NULL AND client_id IS NOT NULL RETURNING id",
            (prefix, secret_hash, expires_at, token_id),
        )
        return bool(rows)

    def purge_refresh(self, before: float) -> None:
        """Forget refresh tokens that expired before `before`; a used one is kept until then,
        so presenting it again is recognised as a stolen token and revokes its grant."""
        self.db.change("DELETE FROM oauth_refresh_tokens WHERE expires_at < ?", (before,))
