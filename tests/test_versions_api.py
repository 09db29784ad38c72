"""A document's versions over a real server: listed with dates, sizes and hashes, a version's
bytes downloaded as an attachment, two versions diffed, one restored (202, re-indexed by the
server's worker); a read-only token lists but cannot restore, and MCP lists them read-only.
Strangers' attempts are in the isolation matrix (tests/test_api_isolation.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from loci.service import Loci
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok

FIRST = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"
SECOND = "# Piano\n\nThe piano lesson is on Friday at 4pm with Mrs Okafor.\n"


def test_versions_are_listed_downloaded_diffed_and_restored_over_http(
    server: LiveServer, loci: Loci, tmp_path: Path
) -> None:
    brain = loci.brain()
    lesson = tmp_path / "lesson.md"
    lesson.write_text(FIRST)
    doc_id = loci.library.add_file(brain, lesson).document.id
    lesson.write_text(SECOND)
    loci.library.add_file(brain, lesson)
    reader = server.accounts.issue_token(
        server.accounts.user("owner"), name="reader", scope="read"
    ).secret
    base = f"/brains/{brain.name}/files/{doc_id}/versions"
    with server.client() as api:
        listed = api.get(base)
        assert listed.status_code == 200, listed.text
        body = listed.json()
        assert body["current"]["number"] == 2 and body["document"]["id"] == doc_id
        (old,) = body["versions"]
        assert old["number"] == 1 and old["size_bytes"] == len(FIRST.encode())
        assert old["saved_at"] <= old["replaced_at"] and len(old["content_hash"]) == 64

        got = api.get(f"{base}/1/download")
        assert got.status_code == 200 and got.content == FIRST.encode()
        assert got.headers["content-disposition"].startswith('attachment; filename="lesson.md"')
        assert api.get(f"{base}/2/download").content == SECOND.encode()  # the current one
        assert api.get(f"{base}/5/download").status_code == 404

        diff = api.get(f"{base}/diff", params={"old": 1}).json()
        assert diff["new"] == 2 and "-The piano lesson is on Tuesday" in diff["diff"]

        with server.client(reader) as read_only:
            assert read_only.get(base).status_code == 200
            assert read_only.post(f"{base}/1/restore").status_code == 403
        assert loci.library.document(brain, doc_id).content_hash == body["current"]["content_hash"]

        restored = api.post(f"{base}/1/restore")
        assert restored.status_code == 202, restored.text
        assert restored.json()["changed"] and restored.json()["restored"] == 1
        assert server.wait_ready(api, brain.name, doc_id)["content_hash"] == old["content_hash"]
        text = api.get(f"/brains/{brain.name}/files/{doc_id}/text").json()["text"]
        assert "Tuesday" in text and "Friday" not in text
        assert [v["number"] for v in api.get(base).json()["versions"]] == [2, 1]

    async def steps(c: Client) -> dict[str, Any]:
        return ok(await c.call_tool("list_versions", {"document_id": doc_id}))

    listed_by_mcp = over_http(server, reader, steps)
    assert listed_by_mcp["current"]["number"] == 3
    assert [v["number"] for v in listed_by_mcp["versions"]] == [2, 1]
