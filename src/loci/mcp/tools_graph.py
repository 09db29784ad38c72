"""Tools over the brain graph: pages about people, projects, decisions and ideas,
with typed links and a dated timeline. Thin over `loci.graph.service.BrainGraph`, as the
`loci brain` CLI and the HTTP API are; every write records the caller as its actor and keeps
the version it replaced.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from loci.graph.doctor import health
from loci.mcp.common import (
    NOT_BLANK,
    BrainArg,
    ExpectedHash,
    PageRef,
    SourceRef,
    Toolkit,
    reading,
    tool_errors,
    writing,
)
from loci.mcp.graph_outputs import (
    GraphHit,
    GraphPage,
    GraphQueryResult,
    GraphSummary,
    GraphWritten,
    Timeline,
    TimelineEntry,
)
from loci.wire.graph_health import GraphDoctorOut

Day = Annotated[
    dt.date | None, Field(description="A date, YYYY-MM-DD.", json_schema_extra={"format": "date"})
]


def _day(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


class GraphTools:
    """The brain graph's tools, as methods over the server's toolkit; `register` offers them."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.graph = kit.loci.graph

    @tool_errors
    def brain_query(
        self,
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                pattern=NOT_BLANK,
                description="What to find: a person, project, decision, topic…",
            ),
        ],
        ctx: Context,
        brain: BrainArg = None,
        limit: Annotated[int, Field(ge=1, le=30)] = 10,
    ) -> GraphQueryResult:
        """Find the brain's pages (people, companies, projects, meetings, concepts, decisions)
        for a query: one hit per page, best first, including pages reached through links from
        the best hits. Use `brain_get` to read one. For passages of files, use `search`."""
        target = self.kit.caller(ctx).brain(brain, "read")
        hits = self.graph.query(target, query, limit=limit)
        return GraphQueryResult(brain=target.name, query=query, hits=[GraphHit.of(h) for h in hits])

    @tool_errors
    def brain_get(
        self,
        page: PageRef,
        ctx: Context,
        brain: BrainArg = None,
        max_chars: Annotated[int, Field(ge=100, le=100_000)] = 20_000,
    ) -> GraphPage:
        """Read one brain page: its compiled truth (what is known now), its dated timeline,
        its sources and its links both ways. Its `content_hash` lets an edit refuse to
        overwrite a change made since you read it."""
        target = self.kit.caller(ctx).brain(brain, "read")
        return GraphPage.of(self.graph.get(target, page), target, max_chars)

    @tool_errors
    def brain_timeline(
        self,
        ctx: Context,
        brain: BrainArg = None,
        page: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=300,
                pattern=NOT_BLANK,
                description="Only this page's timeline (id, title or alias).",
            ),
        ] = None,
        since: Day = None,
        until: Day = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> Timeline:
        """What happened when: dated timeline entries of the brain's pages, newest first — of
        one page, or of all of them (e.g. "what happened this week": pass `since`)."""
        target = self.kit.caller(ctx).brain(brain, "read")
        entries = self.graph.timeline(
            target, page, since=_day(since), until=_day(until), limit=limit
        )
        return Timeline(brain=target.name, entries=[TimelineEntry.of(e) for e in entries])

    @tool_errors
    def brain_append_timeline(
        self,
        page: PageRef,
        text: Annotated[
            str,
            Field(
                min_length=1,
                max_length=10_000,
                pattern=NOT_BLANK,
                description="What happened, one entry (Markdown).",
            ),
        ],
        ctx: Context,
        brain: BrainArg = None,
        at: Day = None,
        source: SourceRef = None,
        expected_hash: ExpectedHash = None,
    ) -> GraphWritten:
        """Add a dated entry to a page's timeline (default date: today), e.g. a decision, a
        meeting outcome or a status change. The same entry twice is kept once."""
        caller = self.kit.caller(ctx)
        target = caller.brain(brain, "write")
        written = self.graph.append_timeline(
            target, page, text, actor=caller.actor, at=_day(at), source=source,
            expected_hash=expected_hash,
        )  # fmt: skip
        return GraphWritten.of(written, target)

    @tool_errors
    def brain_link(
        self,
        page: PageRef,
        relation: Annotated[
            str,
            Field(
                pattern=r"^[a-z][a-z0-9_]{0,63}$",
                description="The relation, snake_case: works_at, part_of, decided_in…",
            ),
        ],
        target: Annotated[
            str,
            Field(
                min_length=1,
                max_length=300,
                pattern=NOT_BLANK,
                description="The page it points to (id, title or alias); it must exist.",
            ),
        ],
        ctx: Context,
        brain: BrainArg = None,
    ) -> GraphWritten:
        """Add a typed link from one page to another (e.g. alice works_at acme). Adding a link
        that is already there changes nothing."""
        caller = self.kit.caller(ctx)
        where = caller.brain(brain, "write")
        written = self.graph.link(where, page, relation, target, actor=caller.actor)
        return GraphWritten.of(written, where)

    @tool_errors
    def brain_rewrite(
        self,
        page: PageRef,
        truth: Annotated[
            str,
            Field(
                max_length=1_000_000,
                description="The new compiled truth (Markdown), without frontmatter or timeline.",
            ),
        ],
        ctx: Context,
        brain: BrainArg = None,
        expected_hash: ExpectedHash = None,
    ) -> GraphSummary:
        """Replace a page's compiled truth (its current summary of what is known) with a new
        version; the timeline, links and fields stay, and the old version is kept in its
        history. Read the page first and pass its `content_hash` as `expected_hash`, so a
        change made since is not overwritten."""
        caller = self.kit.caller(ctx)
        target = caller.brain(brain, "write")
        summary = self.graph.rewrite(
            target, page, truth, actor=caller.actor, expected_hash=expected_hash
        )
        return GraphSummary.of(summary)

    @tool_errors
    def brain_doctor(
        self,
        ctx: Context,
        brain: BrainArg = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Findings to list.")] = 20,
    ) -> GraphDoctorOut:
        """Check the brain graph's health, changing nothing: broken links, relations and
        citations, alias collisions, invalid or unindexed documents (errors); orphans, weak
        provenance, nonstandard sources (warnings). Counts of each, then the first findings
        with what to fix."""
        target = self.kit.caller(ctx).brain(brain, "read")
        return GraphDoctorOut.of(health(self.graph, target, limit))


def register(server: MCPServer, kit: Toolkit) -> None:
    tools = GraphTools(kit)
    server.add_tool(tools.brain_query, annotations=reading("Find brain pages"))
    server.add_tool(tools.brain_doctor, annotations=reading("Check the brain graph"))
    server.add_tool(tools.brain_get, annotations=reading("Read a brain page"))
    server.add_tool(tools.brain_timeline, annotations=reading("Brain timeline"))
    server.add_tool(
        tools.brain_append_timeline, annotations=writing("Add a timeline entry", idempotent=True)
    )
    server.add_tool(tools.brain_link, annotations=writing("Link two pages", idempotent=True))
    server.add_tool(tools.brain_rewrite, annotations=writing("Rewrite a page", destructive=True))
