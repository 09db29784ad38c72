"""Slack identities and their threads, webhook signing secrets and handled delivery ids, the same
on every backend.

Webhook secrets arrive here already sealed (`loci.auth.secret_box`); this layer never sees one
in the clear. A delivery claim is one `INSERT … ON CONFLICT`, so two handlers of the same
retried delivery cannot both win it. The SQL is portable (`loci.store.portable`); a backend's
subclass names the error its foreign keys raise, and the PostgreSQL one says which calls run
in a brain's row-level security scope (here: the ones given a `brain`).
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from loci.errors import NotFound
from loci.integrations.records import SlackIdentity, WebhookSecret
from loci.store.portable import PortableDatabase

IDENTITY_SELECT = (
    "SELECT s.team_id, s.slack_user_id, s.user_id, u.name AS user_name, s.brain_id,"
    " b.name AS brain_name, s.created_at FROM slack_identities s"
    " JOIN users u ON u.id = s.user_id JOIN brains b ON b.id = s.brain_id"
)
SECRET_SELECT = (
    "SELECT w.id, w.brain_id, b.name AS brain_name, w.provider, w.prefix, w.created_at,"
    " w.revoked_at FROM webhook_secrets w JOIN brains b ON b.id = w.brain_id"
)


class IntegrationStore(Protocol):
    """What pushes from outside need: Slack identities, webhook signing secrets (sealed by the
    caller; never in the clear here) and the delivery ids already handled, so a retried
    delivery is done once."""

    def link_slack(
        self, team_id: str, slack_user_id: str, user_id: int, brain_id: int
    ) -> SlackIdentity:
        """Link (or re-link) a Slack user to a Loci user and brain."""
        ...

    def slack_identity(self, team_id: str, slack_user_id: str) -> SlackIdentity | None: ...
    def slack_identities(self) -> list[SlackIdentity]: ...
    def unlink_slack(self, team_id: str, slack_user_id: str) -> bool: ...

    def slack_thread(
        self, team_id: str, channel: str, thread_ts: str, user_id: int, brain_id: int
    ) -> int | None:
        """The conversation a user keeps in a Slack thread over a brain (asking Loci there)."""
        ...

    def keep_slack_thread(
        self,
        team_id: str,
        channel: str,
        thread_ts: str,
        user_id: int,
        brain_id: int,
        conversation_id: int,
    ) -> None: ...

    def create_webhook_secret(
        self, brain_id: int, provider: str, prefix: str, sealed_secret: str
    ) -> WebhookSecret: ...
    def webhook_secrets(self, brain_id: int | None = None) -> list[WebhookSecret]: ...
    def sealed_webhook_secrets(self, brain_id: int, provider: str) -> list[str]:
        """The sealed secrets of a brain and provider that are not revoked."""
        ...

    def revoke_webhook_secret(self, secret_id: int, now: float) -> bool: ...

    def claim_delivery(self, source: str, delivery_id: str, now: float, lease_s: float) -> bool:
        """True if the caller should handle this delivery: never seen, or claimed by a handler
        that neither finished nor released it within `lease_s` (it crashed). Atomic."""
        ...

    def finish_delivery(self, source: str, delivery_id: str, now: float) -> None: ...
    def release_delivery(self, source: str, delivery_id: str) -> None:
        """Forget a claim whose handling failed, so the sender's retry is handled again."""
        ...

    def purge_deliveries(self, before: float) -> int: ...


class IntegrationTables:
    # What the backend raises when a row names a user or brain that is not there.
    foreign_key_error: ClassVar[type[Exception]]

    def __init__(self, db: PortableDatabase) -> None:
        self.db = db

    # slack identities ---------------------------------------------------------------------
    def link_slack(
        self, team_id: str, slack_user_id: str, user_id: int, brain_id: int
    ) -> SlackIdentity:
        # Across brains: a re-link moves the identity out of the brain it was in.
        try:
            self.db.change(
                "INSERT INTO slack_identities(team_id, slack_user_id, user_id, brain_id)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (team_id, slack_user_id) DO UPDATE SET"
                " user_id = excluded.user_id, brain_id = excluded.brain_id",
                (team_id, slack_user_id, user_id, brain_id),
            )
        except self.foreign_key_error:  # the user or brain went away meanwhile
            raise NotFound("no such user or brain") from None
        found = self.slack_identity(team_id, slack_user_id)
        assert found is not None
        return found

    def slack_identity(self, team_id: str, slack_user_id: str) -> SlackIdentity | None:
        rows = self.db.query(
            IDENTITY_SELECT + " WHERE s.team_id = ? AND s.slack_user_id = ?",
            (team_id, slack_user_id),
        )
        return SlackIdentity(**rows[0]) if rows else None

    def slack_identities(self) -> list[SlackIdentity]:
        rows = self.db.query(IDENTITY_SELECT + " ORDER BY s.team_id, s.slack_user_id")
        return [SlackIdentity(**r) for r in rows]

    def unlink_slack(self, team_id: str, slack_user_id: str) -> bool:
        return (
            self.db.change(
                "DELETE FROM slack_identities WHERE team_id = ? AND slack_user_id = ?",
                (team_id, slack_user_id),
            )
            > 0
        )

    # slack threads ------------------------------------------------------------------------
    def slack_thread(
        self, team_id: str, channel: str, thread_ts: str, user_id: int, brain_id: int
    ) -> int | None:
        """The conversation this user keeps in this Slack thread over this brain, if any."""
        rows = self.db.query(
            "SELECT conversation_id FROM slack_threads WHERE team_id = ? AND channel = ?"
            " AND thread_ts = ? AND user_id = ? AND brain_id = ?",
            (team_id, channel, thread_ts, user_id, brain_id),
            brain_id,
        )
        return int(rows[0]["conversation_id"]) if rows else None

    def keep_slack_thread(
        self,
        team_id: str,
        channel: str,
        thread_ts: str,
        user_id: int,
        brain_id: int,
        conversation_id: int,
    ) -> None:
        # A re-link to another brain starts a new conversation: the thread then points at it.
        self.db.change(
            "INSERT INTO slack_threads(team_id, channel, thread_ts, user_id, brain_id,"
            " conversation_id) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (team_id, channel, thread_ts, user_id) DO UPDATE SET"
            " brain_id = excluded.brain_id, conversation_id = excluded.conversation_id",
            (team_id, channel, thread_ts, user_id, brain_id, conversation_id),
            brain_id,
        )

    # webhook secrets ----------------------------------------------------------------------
    def create_webhook_secret(
        self, brain_id: int, provider: str, prefix: str, sealed_secret: str
    ) -> WebhookSecret:
        try:
            with self.db.transaction(brain_id) as conn:
                created = self.db.run(
                    conn,
                    "INSERT INTO webhook_secrets(brain_id, provider, prefix, sealed_secret)"
                    " VALUES (?, ?, ?, ?) RETURNING id",
                    (brain_id, provider, prefix, sealed_secret),
                )
                rows = self.db.run(conn, SECRET_SELECT + " WHERE w.id = ?", (created[0]["id"],))
        except self.foreign_key_error:
            raise NotFound(f"no brain with id {brain_id}") from None
        return WebhookSecret(**rows[0])

    def webhook_secrets(self, brain_id: int | None = None) -> list[WebhookSecret]:
        if brain_id is None:
            rows = self.db.query(SECRET_SELECT + " ORDER BY w.id")
        else:
            rows = self.db.query(
                SECRET_SELECT + " WHERE w.brain_id = ? ORDER BY w.id", (brain_id,), brain_id
            )
        return [WebhookSecret(**r) for r in rows]

    def sealed_webhook_secrets(self, brain_id: int, provider: str) -> list[str]:
        rows = self.db.query(
            "SELECT sealed_secret FROM webhook_secrets"
            " WHERE brain_id = ? AND provider = ? AND revoked_at IS NULL ORDER BY id DESC",
            (brain_id, provider),
            brain_id,
        )
        return [str(r["sealed_secret"]) for r in rows]

    def revoke_webhook_secret(self, secret_id: int, now: float) -> bool:
        return (
            self.db.change(
                "UPDATE webhook_secrets SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, secret_id),
            )
            > 0
        )

    # deliveries ---------------------------------------------------------------------------
    def claim_delivery(self, source: str, delivery_id: str, now: float, lease_s: float) -> bool:
        return (
            self.db.change(
                "INSERT INTO deliveries(source, delivery_id, claimed_at) VALUES (?, ?, ?)"
                " ON CONFLICT (source, delivery_id) DO UPDATE SET claimed_at = excluded.claimed_at"
                " WHERE deliveries.done_at IS NULL AND deliveries.claimed_at < ?",
                (source, delivery_id, now, now - lease_s),
            )
            > 0
        )

    def finish_delivery(self, source: str, delivery_id: str, now: float) -> None:
        self.db.change(
            "UPDATE deliveries SET done_at = ? WHERE source = ? AND delivery_id = ?",
            (now, source, delivery_id),
        )

    def release_delivery(self, source: str, delivery_id: str) -> None:
        self.db.change(
            "DELETE FROM deliveries WHERE source = ? AND delivery_id = ? AND done_at IS NULL",
            (source, delivery_id),
        )

    def purge_deliveries(self, before: float) -> int:
        return self.db.change("DELETE FROM deliveries WHERE claimed_at < ?", (before,))
