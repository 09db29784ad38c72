"""Slack identities, webhook signing secrets and handled delivery ids in the SQLite database.

Webhook secrets arrive here already sealed (`loci.auth.secret_box`); this layer never sees one
in the clear. A delivery claim is one `INSERT … ON CONFLICT` under the write lock, so two
handlers of the same retried delivery cannot both win it.
"""

from __future__ import annotations

import apsw

from loci.errors import NotFound
from loci.models import SlackIdentity, WebhookSecret
from loci.store.sqlite.connection import Database, Row

IDENTITY_SELECT = (
    "SELECT s.team_id, s.slack_user_id, s.user_id, u.name AS user_name, s.brain_id,"
    " b.name AS brain_name, s.created_at FROM slack_identities s"
    " JOIN users u ON u.id = s.user_id JOIN brains b ON b.id = s.brain_id"
)
SECRET_SELECT = (
    "SELECT w.id, w.brain_id, b.name AS brain_name, w.provider, w.prefix, w.created_at,"
    " w.revoked_at FROM webhook_secrets w JOIN brains b ON b.id = w.brain_id"
)


def _identity(row: Row) -> SlackIdentity:
    return SlackIdentity(**row)


def _secret(row: Row) -> WebhookSecret:
    return WebhookSecret(**row)


class SqliteIntegrations:
    def __init__(self, db: Database) -> None:
        self.db = db

    # slack identities ---------------------------------------------------------------------
    def link_slack(
        self, team_id: str, slack_user_id: str, user_id: int, brain_id: int
    ) -> SlackIdentity:
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO slack_identities(team_id, slack_user_id, user_id, brain_id)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (team_id, slack_user_id) DO UPDATE SET"
                    " user_id = excluded.user_id, brain_id = excluded.brain_id",
                    (team_id, slack_user_id, user_id, brain_id),
                )
        except apsw.ConstraintError:  # the user or brain went away meanwhile
            raise NotFound("no such user or brain") from None
        found = self.slack_identity(team_id, slack_user_id)
        assert found is not None
        return found

    def slack_identity(self, team_id: str, slack_user_id: str) -> SlackIdentity | None:
        row = self.db.row(
            IDENTITY_SELECT + " WHERE s.team_id = ? AND s.slack_user_id = ?",
            (team_id, slack_user_id),
        )
        return _identity(row) if row is not None else None

    def slack_identities(self) -> list[SlackIdentity]:
        rows = self.db.rows(IDENTITY_SELECT + " ORDER BY s.team_id, s.slack_user_id")
        return [_identity(r) for r in rows]

    def unlink_slack(self, team_id: str, slack_user_id: str) -> bool:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM slack_identities WHERE team_id = ? AND slack_user_id = ?",
                (team_id, slack_user_id),
            )
            return bool(conn.changes())

    # webhook secrets ----------------------------------------------------------------------
    def create_webhook_secret(
        self, brain_id: int, provider: str, prefix: str, sealed_secret: str
    ) -> WebhookSecret:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO webhook_secrets(brain_id, provider, prefix, sealed_secret)"
                " VALUES (?, ?, ?, ?)",
                (brain_id, provider, prefix, sealed_secret),
            )
            secret_id = conn.last_insert_rowid()
        row = self.db.row(SECRET_SELECT + " WHERE w.id = ?", (secret_id,))
        assert row is not None
        return _secret(row)

    def webhook_secrets(self, brain_id: int | None = None) -> list[WebhookSecret]:
        if brain_id is None:
            rows = self.db.rows(SECRET_SELECT + " ORDER BY w.id")
        else:
            rows = self.db.rows(SECRET_SELECT + " WHERE w.brain_id = ? ORDER BY w.id", (brain_id,))
        return [_secret(r) for r in rows]

    def sealed_webhook_secrets(self, brain_id: int, provider: str) -> list[str]:
        rows = self.db.rows(
            "SELECT sealed_secret FROM webhook_secrets"
            " WHERE brain_id = ? AND provider = ? AND revoked_at IS NULL ORDER BY id DESC",
            (brain_id, provider),
        )
        return [str(r["sealed_secret"]) for r in rows]

    def revoke_webhook_secret(self, secret_id: int, now: float) -> bool:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE webhook_secrets SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, secret_id),
            )
            return bool(conn.changes())

    # deliveries ---------------------------------------------------------------------------
    def claim_delivery(self, source: str, delivery_id: str, now: float, lease_s: float) -> bool:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO deliveries(source, delivery_id, claimed_at) VALUES (?, ?, ?)"
                " ON CONFLICT (source, delivery_id) DO UPDATE SET claimed_at = excluded.claimed_at"
                " WHERE done_at IS NULL AND claimed_at < ?",
                (source, delivery_id, now, now - lease_s),
            )
            return bool(conn.changes())

    def finish_delivery(self, source: str, delivery_id: str, now: float) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET done_at = ? WHERE source = ? AND delivery_id = ?",
                (now, source, delivery_id),
            )

    def release_delivery(self, source: str, delivery_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM deliveries WHERE source = ? AND delivery_id = ? AND done_at IS NULL",
                (source, delivery_id),
            )

    def purge_deliveries(self, before: float) -> int:
        with self.db.write() as conn:
            conn.execute("DELETE FROM deliveries WHERE claimed_at < ?", (before,))
            return int(conn.changes())
