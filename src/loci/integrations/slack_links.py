"""Which Loci user and brain a Slack user's messages are saved as and into.

Linking is an administrator's act (`loci slack link`, on the machine that holds the data): the
Loci user must be able to write the brain when linked, and is checked again on every message,
so removing them from the brain stops their captures.
"""

from __future__ import annotations

from loci.auth.accounts import Accounts
from loci.errors import Forbidden, InvalidInput, NotFound
from loci.integrations.records import SlackIdentity
from loci.integrations.slack_events import SLACK_ID


def _slack_id(kind: str, value: str) -> str:
    value = value.strip()
    if not SLACK_ID.match(value):
        raise InvalidInput(f"{value!r} is not a Slack {kind} id (like T0123ABCD / U0123ABCD)")
    return value


class SlackLinks:
    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts
        self.store = accounts.store.integrations

    def link(
        self, team_id: str, slack_user_id: str, user_name: str, brain_name: str
    ) -> SlackIdentity:
        team_id = _slack_id("workspace (team)", team_id)
        slack_user_id = _slack_id("user", slack_user_id)
        user = self.accounts.user(user_name)
        brain = self.accounts.store.get_brain(brain_name)
        if not self.accounts.user_may_write(user, brain):
            raise Forbidden(
                f"{user.name} may not write brain {brain.name!r}: make them an editor first"
            )
        return self.store.link_slack(team_id, slack_user_id, user.id, brain.id)

    def list(self) -> list[SlackIdentity]:
        return self.store.slack_identities()

    def unlink(self, team_id: str, slack_user_id: str) -> None:
        if not self.store.unlink_slack(team_id.strip(), slack_user_id.strip()):
            raise NotFound(f"Slack user {team_id}/{slack_user_id} is not linked")
