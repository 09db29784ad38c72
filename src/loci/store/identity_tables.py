"""Accounts at single sign-on providers, each linked to one Loci user; the same SQL on every
backend (`loci.store.portable`). Linking is one `INSERT … ON CONFLICT DO NOTHING`: of two
first sign-ins racing, one links and the other finds its link."""

from __future__ import annotations

from typing import Protocol

from loci.store.portable import PortableDatabase


class IdentityStore(Protocol):
    """Accounts at single sign-on providers, linked to Loci users."""

    def identity_user(self, provider: str, subject: str) -> int | None: ...
    def link_identity(
        self, provider: str, subject: str, user_id: int, email: str | None
    ) -> int: ...
    def touch_identity(
        self, provider: str, subject: str, email: str | None, now: float
    ) -> None: ...
    def users_with_email(self, email: str) -> list[int]: ...


class IdentityTables:
    def __init__(self, db: PortableDatabase) -> None:
        self.db = db

    def identity_user(self, provider: str, subject: str) -> int | None:
        rows = self.db.query(
            "SELECT user_id FROM user_identities WHERE provider = ? AND subject = ?",
            (provider, subject),
        )
        return int(rows[0]["user_id"]) if rows else None

    def link_identity(self, provider: str, subject: str, user_id: int, email: str | None) -> int:
        """Link the account to `user_id` unless it is linked already; the user it is linked to."""
        self.db.change(
            "INSERT INTO user_identities(provider, subject, user_id, email) VALUES (?,?,?,?)"
            " ON CONFLICT (provider, subject) DO NOTHING",
            (provider, subject, user_id, email),
        )
        linked = self.identity_user(provider, subject)
        assert linked is not None
        return linked

    def touch_identity(self, provider: str, subject: str, email: str | None, now: float) -> None:
        self.db.change(
            "UPDATE user_identities SET email = ?, last_sign_in_at = ?"
            " WHERE provider = ? AND subject = ?",
            (email, now, provider, subject),
        )

    def users_with_email(self, email: str) -> list[int]:
        rows = self.db.query(
            "SELECT id FROM users WHERE lower(email) = ? ORDER BY id", (email.lower(),)
        )
        return [int(r["id"]) for r in rows]
