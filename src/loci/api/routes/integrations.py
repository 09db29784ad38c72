"""Pushes from outside that carry no Loci token: Slack's Events API.

The request is authenticated by Slack's signature over the raw body (`loci.integrations`), so
the handler takes the bytes, not a parsed model. Anything signed gets a 200 unless it is
malformed — a refused or ignored message too — because Slack retries every other answer.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, BackgroundTasks, Header
from pydantic import BaseModel, Field

from loci.api.deps import IntegrationsDep, RawBody
from loci.api.schemas.common import errors
from loci.errors import NotFound

router = APIRouter(prefix="/integrations", tags=["integrations"])

SLACK_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "description": "a Slack Events API delivery (url_verification or event_callback)",
                "properties": {
                    "type": {"type": "string", "enum": ["url_verification", "event_callback"]},
                    "challenge": {"type": "string"},
                    "team_id": {"type": "string"},
                    "event_id": {"type": "string"},
                    "event": {"type": "object"},
                },
                "required": ["type"],
            }
        }
    },
}


class SlackEventOut(BaseModel):
    ok: bool = True
    outcome: Literal["challenge", "saved", "asked", "duplicate", "ignored", "refused", "failed"]
    challenge: str | None = Field(
        default=None, description="url_verification: the challenge, echoed"
    )


SlackHeader = Annotated[str | None, Header(max_length=200)]


@router.post(
    "/slack/events",
    response_model=SlackEventOut,
    response_model_exclude_none=True,
    responses=errors(400, 401, 404, 413, 422),
    openapi_extra={"requestBody": SLACK_BODY},
)
def slack_events(
    body: RawBody,
    integrations: IntegrationsDep,
    background: BackgroundTasks,
    x_slack_request_timestamp: SlackHeader = None,
    x_slack_signature: SlackHeader = None,
) -> SlackEventOut:
    """Slack's Events API request URL: verifies Slack's signature first (401 otherwise), echoes
    `url_verification` challenges, and saves each message a linked person writes into their
    brain, then confirms in the message's thread. A message that asks Loci (an @-mention of the
    app, or a DM starting with "?" or "ask ") is `asked`: answered from the linked brain in its
    thread once Slack has this reply. 404 until Slack capture is configured."""
    slack = integrations.slack
    if slack is None:
        raise NotFound("Slack capture is not configured on this server")
    result = slack.handle(body, x_slack_request_timestamp, x_slack_signature)
    if result.follows_up:  # posting (and asking) waits: Slack wants this reply within 3 s
        background.add_task(slack.confirm, result)
    return SlackEventOut(outcome=result.outcome, challenge=result.challenge)
