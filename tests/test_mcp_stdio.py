"""`loci mcp`: the real command in a subprocess, spoken to over stdio by the official client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from tests.support.cli import run_cli


def test_loci_mcp_serves_the_local_brain_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    saved = run_cli(
        "save", "The boathouse key hangs behind the blue door.", "-b", "river", home=home
    )
    assert saved.returncode == 0, saved.stderr
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "loci", "mcp", "--brain", "river"],  # the brain tools use when they name none
        env={**os.environ, "LOCI_HOME": str(home), "LOCI_LOG_LEVEL": "INFO"},
    )

    async def steps() -> tuple[set[str], dict[str, Any], dict[str, Any], str]:
        async with Client(params, read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            added = await client.call_tool(
                "create_file", {"name": "tides.md", "content": "# Tides\n\nHigh tide at 06:40."}
            )
            found = await client.call_tool("search", {"query": "when is high tide"})
            prompt = await client.get_prompt("session_start", {})
            content = prompt.messages[0].content
            assert isinstance(content, TextContent)
            assert added.structured_content and found.structured_content
            return names, added.structured_content, found.structured_content, content.text

    names, added, found, recalled = anyio.run(steps)
    assert {"search", "create_file", "save", "brain_rewrite"} <= names  # the owner writes
    assert added["searchable"] is True and added["brain"] == "river"
    assert found["hits"][0]["name"] == "tides.md" and "06:40" in found["hits"][0]["text"]
    assert "boathouse key" in recalled  # what the CLI saved is the same brain's context
    listed = run_cli("list", "--json", "--brain", "river", home=home)
    assert "tides.md" in listed.stdout  # written to the data directory, as the CLI sees it
