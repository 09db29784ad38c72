"""Slack identities, webhook signing secrets and handled delivery ids in PostgreSQL (see the
SQLite twin).

Webhook secrets arrive here already sealed; this layer never sees one in the clear. Row-level
security (migration 8): identities and secrets belong to a brain and carry its policy, so the
one tenant path — a brain's webhook reading its own secrets to verify a signature — runs scoped
to that brain; linking, listing across brains and revoking by id are administration, as are
Slack lookups that happen before the brain is known, and run across brains. Deliveries belong
to no brain: only such system transactions see them. A claim is one `INSERT … ON CONFLICT`, so
two handlers of the same retried delivery cannot both win it.
"""

from __future__ import annotations

from psycopg import errors

from loci.errors import NotFound
from loci.models import SlackIdentity, WebhookSecret
from loci.store.postgres.connection import Database, Row

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


class PostgresIntegrations:
    def __init__(self, db: Database) -> None:
        self.db = db

    # slack identities ---------------------------------------------------------------------
    def link_slack(
        self, team_id: str, slack_user_id: str, user_id: int, brain_id: int
    ) -> SlackIdentity:
        # Across brains: a re-link moves the identity out of the brain it was in.
        try:
            self.db.rows(
                "INSERT INTO slack_identities(team_id, slack_user_id, user_id, brain_id)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (team_id, slack_user_id) DO UPDATE SET"
                " user_id = excluded.user_id, brain_id = excluded.brain_id",
                (team_id, slack_user_id, user_id, brain_id),
            )
        except errors.ForeignKeyViolation:  # the user or brain went away meanwhile
            raise NotFound("no such user or brain") from None
        found = self.slack_identity(team_id, slack_user_id)
        assert found is not None
        return found

    def slack_identity(self, team_id: str, slack_user_id: str) -> SlackIdentity | None:
        row = self.db.row(
            IDENTITY_SELECT + " WHERE s.team_id = %s AND s.slack_user_id = %s",
            (team_id, slack_user_id),
        )
        return _identity(row) if row is not None else None

    def slack_identities(self) -> list[SlackIdentity]:
        rows = self.db.rows(IDENTITY_SELECT + " ORDER BY s.team_id, s.slack_user_id")
        return [_identity(r) for r in rows]

    def unlink_slack(self, team_id: str, slack_user_id: str) -> bool:
        with self.db.tx() as cur:
            cur.execute(
                "DELETE FROM slack_identities WHERE team_id = %s AND slack_user_id = %s",
                (team_id, slack_user_id),
            )
            return cur.rowcount > 0

    # webhook secrets ----------------------------------------------------------------------
    def create_webhook_secret(
        self, brain_id: int, provider: str, prefix: str, sealed_secret: str
    ) -> WebhookSecret:
        try:
            with self.db.tx(brain_id) as cur:
                cur.execute(
                    "INSERT INTO webhook_secrets(brain_id, provider, prefix, sealed_secret)"
                    " VALUES (%s, %s, %s, %s) RETURNING id",
                    (brain_id, provider, prefix, sealed_secret),
                )
                created = cur.fetchone()
                assert created is not None
                cur.execute(SECRET_SELECT + " WHERE w.id = %s", (created["id"],))
                row = cur.fetchone()
        except errors.ForeignKeyViolation:
            raise NotFound(f"no brain with id {brain_id}") from None
        assert row is not None
        return _secret(row)

    def webhook_secrets(self, brain_id: int | None = None) -> list[WebhookSecret]:
        if brain_id is None:
            rows = self.db.rows(SECRET_SELECT + " ORDER BY w.id")
        else:
            rows = self.db.rows(
                SECRET_SELECT + " WHERE w.brain_id = %s ORDER BY w.id", (brain_id,), brain_id
            )
        return [_secret(r) for r in rows]

    def sealed_webhook_secrets(self, brain_id: int, provider: str) -> list[str]:
        rows = self.db.rows(
            "SELECT sealed_secret FROM webhook_secrets"
            " WHERE brain_id = %s AND provider = %s AND revoked_at IS NULL ORDER BY id DESC",
            (brain_id, provider),
            brain_id,
        )
        return [str(r["sealed_secret"]) for r in rows]

    def revoke_webhook_secret(self, secret_id: int, now: float) -> bool:
        with self.db.tx() as cur:
            cur.execute(
                "UPDATE webhook_secrets SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                (now, secret_id),
            )
            return cur.rowcount > 0

    # deliveries ---------------------------------------------------------------------------
    def claim_delivery(self, source: str, delivery_id: str, now: float, lease_s: float) -> bool:
        with self.db.tx() as cur:
            cur.execute(
                "INSERT INTO deliveries(source, delivery_id, claimed_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (source, delivery_id) DO UPDATE SET claimed_at = excluded.claimed_at"
                " WHERE deliveries.done_at IS NULL AND deliveries.claimed_at < %s",
                (source, delivery_id, now, now - lease_s),
            )
            return cur.rowcount > 0

    def finish_delivery(self, source: str, delivery_id: str, now: float) -> None:
        self.db.rows(
            "UPDATE deliveries SET done_at = %s WHERE source = %s AND delivery_id = %s",
            (now, source, delivery_id),
        )

    def release_delivery(self, source: str, delivery_id: str) -> None:
        self.db.rows(
            "DELETE FROM deliveries WHERE source = %s AND delivery_id = %s AND done_at IS NULL",
            (source, delivery_id),
        )

    def purge_deliveries(self, before: float) -> int:
        with self.db.tx() as cur:
            cur.execute("DELETE FROM deliveries WHERE claimed_at < %s", (before,))
            return cur.rowcount
