"""Conversations started anywhere show in the web app's list, to whom they belong: one from the
command line (the server machine's owner: the workspace's admins), one an agent had over MCP with
a person's token (that person), one from the web app; each says where it was started. A member
who is not an admin sees none of the command line's, and cannot open one by its id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok

BRAIN = "kitchen"
RECIPE = "# Lemon cake\n\nBake the lemon cake at 180 degrees for forty minutes.\n"


def titles(conversations: list[dict[str, Any]]) -> list[tuple[str, str | None, bool]]:
    return [(c["title"], c["origin"], c["local"]) for c in conversations]


def test_conversations_from_the_cli_and_mcp_show_to_their_owners(
    server: LiveServer, tmp_path: Path
) -> None:
    _, ana_token = server.accounts.add_user("ana")
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
        assert api.put(f"/brains/{BRAIN}/members/ana", json={"role": "editor"}).status_code == 200
        done = api.post(f"/brains/{BRAIN}/files", files={"files": ("cake.md", RECIPE.encode())})
        server.wait_ready(api, BRAIN, done.json()["results"][0]["document"]["id"])

    # The command line, on the server's data directory: the local owner's conversation.
    home = tmp_path / "home"  # the `loci` fixture's data directory, which the server serves
    asked = run_cli("ask", "How long does the lemon cake bake?", "--brain", BRAIN, home=home)
    assert asked.returncode == 0, asked.stderr
    assert "forty minutes" in asked.stdout

    # An agent over MCP with Ana's token: Ana's conversation.
    async def ask(client: Client) -> dict[str, Any]:
        return ok(
            await client.call_tool(
                "ask", {"question": "At what temperature is the cake baked?", "brain": BRAIN}
            )
        )

    answered = over_http(server, ana_token.secret, ask)
    assert "180" in answered["answer"] and answered["conversation_id"]

    # The owner (an admin) in the web API: the command line's conversation, marked local.
    with server.client() as api:
        mine = api.get(f"/brains/{BRAIN}/conversations").json()
        assert titles(mine) == [("How long does the lemon cake bake?", "cli", True)]
        cli_id = mine[0]["id"]
        detail = api.get(f"/brains/{BRAIN}/conversations/{cli_id}").json()
        assert [m["role"] for m in detail["messages"]] == ["user", "assistant"]
        # Continued, renamed and rated from the web: it stays one conversation.
        streamed = api.post(
            f"/brains/{BRAIN}/answer",
            json={"question": "And at what temperature?", "conversation_id": cli_id},
        )
        assert streamed.status_code == 200, streamed.text
        assert streamed.json()["conversation_id"] == cli_id
        renamed = api.patch(f"/brains/{BRAIN}/conversations/{cli_id}", json={"title": "Cake"})
        assert renamed.json()["title"] == "Cake" and renamed.json()["local"] is True
        assert len(api.get(f"/brains/{BRAIN}/conversations").json()) == 1

    # Ana, a member but no admin: her agent's conversation, not the command line's.
    with server.client(ana_token.secret) as api:
        hers = api.get(f"/brains/{BRAIN}/conversations").json()
        assert titles(hers) == [("At what temperature is the cake baked?", "mcp", False)]
        assert hers[0]["id"] == answered["conversation_id"]
        assert api.get(f"/brains/{BRAIN}/conversations/{cli_id}").status_code == 404
        assert api.delete(f"/brains/{BRAIN}/conversations/{cli_id}").status_code == 404
        # Her own from the API (a token, not the web app's session) says so.
        api.post(f"/brains/{BRAIN}/answer", json={"question": "What kind of cake is it?"})
        origins = [c["origin"] for c in api.get(f"/brains/{BRAIN}/conversations").json()]
        assert origins == ["api", "mcp"]
