"""What the integrations keep: a Slack user linked to a Loci user and brain, and the signing
secrets of webhooks (sealed; only a prefix is shown)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlackIdentity:
    """A Slack user (workspace + user id) linked to the Loci user and brain their messages
    are saved as and into."""

    team_id: str
    slack_user_id: str
    user_id: int
    user_name: str
    brain_id: int
    brain_name: str
    created_at: str


@dataclass(frozen=True)
class WebhookSecret:
    """A per-integration signing secret of a brain and provider: only its prefix is shown;
    the secret itself stays sealed in the store (see auth/secret_box.py)."""

    id: int
    brain_id: int
    brain_name: str
    provider: str
    prefix: str
    created_at: str
    revoked_at: float | None
