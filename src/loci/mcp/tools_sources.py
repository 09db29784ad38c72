"""`list_sources`: the folders a brain follows and how their last sync went, for a model that
wonders why a file is missing or stale. Reading only: registering a folder names a path on the
server, which is an administrator's act over the HTTP API or the CLI, never an agent's. Each
source is the HTTP API's `SourceOut` (`loci sources list --json` prints it too)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from loci.mcp.common import BrainArg, Toolkit, reading, tool_errors
from loci.wire.sources import SourceOut


class SourceList(BaseModel):
    brain: str
    sources: list[SourceOut]


class SourceTools:
    """The followed places' tool, as a method over the server's toolkit; `register` offers it."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.loci = kit.loci

    @tool_errors
    def list_sources(self, ctx: Context, brain: BrainArg = None) -> SourceList:
        """List the folders this brain follows (kept in step with their files by a sync), and
        the feeds and web pages it follows on a schedule: each one's path or address, kind,
        how many files or entries it had, when it was last synced and runs next, the last
        error, what the last run added, updated and removed, the files that failed with the
        reason, and whether a folder is watched now. Use it to explain why a file or a feed's
        entry is missing from the brain or out of date."""
        target = self.kit.caller(ctx).brain(brain, "read")
        watching = self.loci.sources.watching(target)
        return SourceList(
            brain=target.name,
            sources=[
                SourceOut.of(s, target.name, watching) for s in self.loci.sources.list(target)
            ],
        )


def register(server: MCPServer, kit: Toolkit) -> None:
    tools = SourceTools(kit)
    server.add_tool(tools.list_sources, annotations=reading("List followed folders and feeds"))
