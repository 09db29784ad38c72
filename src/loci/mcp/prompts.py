"""The session-start prompt: a client runs it when a session opens (or the user picks it) to
start warm with the brain's recent context (see `loci.recall`; `loci recall` prints the same)."""

from __future__ import annotations

import logging
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from loci.errors import LociError
from loci.mcp.common import Toolkit
from loci.recall import recall

log = logging.getLogger(__name__)


class Prompts:
    """The prompts, as methods over the server's toolkit; `register` offers them."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit

    def session_start(
        self,
        ctx: Context,
        brain: Annotated[str | None, Field(description="default: the default brain")] = None,
        topic: Annotated[str | None, Field(description="e.g. the project at hand")] = None,
    ) -> str:
        try:
            target = self.kit.caller(ctx).brain(brain or None, "read")
            return recall(self.kit.loci, target, (topic or "")[:500] or None)
        except LociError as error:
            # The caller's mistake (a brain they cannot read, a bad name), not a fault of the
            # server: one line in the log, and an MCPError, which the SDK answers without logging
            # a traceback (it logs one for any other exception).
            log.info("prompt session_start refused: %s: %s", error.code, error.message)
            raise MCPError(INVALID_PARAMS, f"{error.code}: {error.message}") from None


def register(server: MCPServer, kit: Toolkit) -> None:
    prompts = Prompts(kit)
    server.prompt(
        name="session_start",
        title="Recall recent project context",
        description="Recent timeline entries, changed pages, notes and captures of a brain "
        "(and passages on a topic, if given), to start a session with the user's context.",
    )(prompts.session_start)
