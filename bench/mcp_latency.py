"""What MCP adds to a search, and how soon a file an agent creates is searchable.

    python bench/mcp_latency.py [--notes 300] [--calls 100]

Builds a brain of `--notes` short notes plus examples/, then times `--calls` hybrid searches
(each query different) four ways: `Searching.search` directly; the `search` tool through the
official client in process; over stdio to a `loci mcp` subprocess; over streamable HTTP at /mcp on
a real server (uvicorn on 127.0.0.1, bearer token). Then, over stdio and HTTP, the time from calling
`create_file` to its reply (the file is indexed by then). Prints figures only;
docs/benchmarks-journal.md records them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.live_server import LiveServer  # noqa: E402
from tests.support.services import make_service  # noqa: E402

from loci.embed.local import LocalEmbedder  # noqa: E402
from loci.eval.metrics import percentile  # noqa: E402
from loci.mcp.stdio import local_server  # noqa: E402
from loci.search.engine import SearchRequest  # noqa: E402

TOPICS = ["boiler", "kiln", "garden", "invoice", "tide", "lease", "bicycle", "school", "roof"]


def queries(n: int) -> list[str]:
    return [f"when is the {TOPICS[i % len(TOPICS)]} checked {i}" for i in range(n)]


def summary(name: str, times: list[float]) -> None:
    ms = [t * 1000 for t in times]
    print(f"{name:28} p50 {statistics.median(ms):7.1f} ms   p95 {percentile(ms, 95):7.1f} ms")


async def timed_searches(client: Client, qs: list[str]) -> list[float]:
    await client.call_tool("search", {"query": "warm up"})
    times = []
    for q in qs:
        start = time.perf_counter()
        result = await client.call_tool("search", {"query": q})
        times.append(time.perf_counter() - start)
        assert not result.is_error
    return times


async def timed_create(client: Client, n: int, label: str) -> list[float]:
    times = []
    for i in range(n):
        text = f"# {label} {i}\n\nThe {TOPICS[i % len(TOPICS)]} log for run {i} of {label}."
        start = time.perf_counter()
        result = await client.call_tool("create_file", {"name": f"{label}-{i}.md", "content": text})
        times.append(time.perf_counter() - start)
        assert result.structured_content and result.structured_content["searchable"]
    return times


def run(client_of: Callable[[], Client], steps: Callable[[Client], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        async with client_of() as client:
            return await steps(client)

    return anyio.run(go)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp()) / "home"
    loci = make_service(home, LocalEmbedder())
    brain = loci.brain()
    ids = [
        loci.library.add_file(brain, p).document.id for p in sorted((ROOT / "examples").iterdir())
    ]
    for i in range(args.notes):
        topic = TOPICS[i % len(TOPICS)]
        ids.append(
            loci.library.add_note(
                brain, f"The {topic} was checked on day {i} by person {i % 17}."
            ).document.id
        )
    loci.library.wait_for(brain, ids)
    qs = queries(args.calls)
    print(f"brain: {len(ids)} documents; {args.calls} searches each")

    direct = []
    for q in qs:
        start = time.perf_counter()
        loci.searching.search(brain, SearchRequest(q))
        direct.append(time.perf_counter() - start)
    summary("Searching.search (direct)", direct)
    summary(
        "MCP in process", run(lambda: Client(local_server(loci)), lambda c: timed_searches(c, qs))
    )

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "loci", "mcp"],
        env={**os.environ, "LOCI_HOME": str(home)},
    )
    summary(
        "MCP stdio (loci mcp)",
        run(lambda: Client(params, read_timeout_seconds=120), lambda c: timed_searches(c, qs)),
    )
    creates_stdio = run(
        lambda: Client(params, read_timeout_seconds=120), lambda c: timed_create(c, 20, "stdio")
    )

    server = LiveServer(loci).start()
    try:

        def http_client() -> Client:
            http = httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {server.owner_token}"}, timeout=120
            )
            return Client(streamable_http_client(server.url + "/mcp", http_client=http))

        summary("MCP HTTP (/mcp, token)", run(http_client, lambda c: timed_searches(c, qs)))
        creates_http = run(http_client, lambda c: timed_create(c, 20, "http"))
    finally:
        server.stop()
    summary("create_file → searchable, stdio", creates_stdio)
    summary("create_file → searchable, HTTP", creates_http)


if __name__ == "__main__":
    main()
