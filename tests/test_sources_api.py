"""Registered folders over the HTTP API and MCP, over a real server: an admin registers a folder
inside the server's allowed roots and syncs it; a path outside them — directly, through `..` or
through a symlink — is refused with 403 and nothing is stored; with no roots configured the
refusal names the setting; a member who is not an admin cannot register; another brain's source
id is a 404; and MCP's `list_sources` shows the folder with its file count and last sync."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from loci.embed.base import Embedder
from loci.service import Loci
from loci.service.watching import FolderWatcher, WatchSettings
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok
from tests.support.services import make_service
from tests.support.waiting import eventually

pytestmark = pytest.mark.both_backends

LESSON = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """(an allowed root with a folder of notes in it, a folder outside it)."""
    allowed = tmp_path / "shared"
    (allowed / "notes").mkdir(parents=True)
    (allowed / "notes" / "piano.md").write_text(LESSON)
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "diary.md").write_text("# Diary\n\nThe safe code is 4512.\n")
    return allowed, outside


@pytest.fixture
def confined(loci: Loci, roots: tuple[Path, Path]) -> Iterator[LiveServer]:
    live = LiveServer(loci, sources_allowed_roots=(roots[0],)).start()
    yield live
    live.stop()


def _create_brain(live: LiveServer, name: str) -> None:
    with live.client() as api:
        assert api.post("/brains", json={"name": name}).status_code == 201


def test_an_admin_registers_a_folder_in_an_allowed_root_and_syncs_it(
    confined: LiveServer, roots: tuple[Path, Path], tmp_path: Path, database_url: str | None
) -> None:
    _create_brain(confined, "home")
    folder = roots[0] / "notes"
    with confined.client() as api:  # the owner: an admin
        added = api.post("/brains/home/folders", json={"path": str(folder), "include": ["*.md"]})
        assert added.status_code == 201, added.text
        source = added.json()
        assert source["path"] == str(folder.resolve()) and source["brain"] == "home"
        assert source["last_sync_at"] is None and source["files"] is None

        synced = api.post("/brains/home/sync")
        assert synced.status_code == 200, synced.text
        report = synced.json()
        assert report["ok"] is True
        assert [(s["source_id"], s["files"], s["added"]) for s in report["sources"]] == [
            (source["id"], 1, 1)
        ]

        (listed,) = api.get("/brains/home/folders").json()
        assert listed["files"] == 1 and listed["last_sync_at"] and listed["errors"] == []
        docs = api.get("/brains/home/files").json()
        assert [d["name"] for d in docs] == ["piano.md"]
        confined.wait_ready(api, "home", docs[0]["id"])
        hits = api.post("/brains/home/search", json={"query": "piano lesson", "mode": "text"})
        assert "Mrs Okafor" in hits.json()["hits"][0]["text"]

    # `loci sources list --json` shows the same object the API does
    env = {"LOCI_DATABASE_URL": database_url} if database_url else None
    done = run_cli("sources", "list", "--json", home=tmp_path / "home", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [listed]

    with confined.client() as api:
        removed = api.delete(f"/brains/home/folders/{source['id']}")
        assert removed.status_code == 200, removed.text
        assert removed.json()["documents_removed"] == 1
        assert api.get("/brains/home/folders").json() == []
        assert api.get("/brains/home/files").json() == []


def _escapes(roots: tuple[Path, Path]) -> list[str]:
    allowed, outside = roots
    link = allowed / "elsewhere"
    link.symlink_to(outside, target_is_directory=True)
    return [
        str(outside),  # plainly outside
        f"{allowed}/notes/../../private",  # `..` out of the root
        str(link),  # a symlink inside the root that leads out of it
        f"{allowed}-evil",  # a sibling whose name starts like the root
    ]


def test_a_path_outside_the_allowed_roots_is_refused_and_nothing_is_stored(
    confined: LiveServer, roots: tuple[Path, Path]
) -> None:
    _create_brain(confined, "home")
    (Path(f"{roots[0]}-evil")).mkdir()
    with confined.client() as api:
        for path in _escapes(roots):
            refused = api.post("/brains/home/folders", json={"path": path})
            assert refused.status_code == 403, (path, refused.text)
            assert "LOCI_SOURCES_ALLOWED_ROOTS" in refused.json()["message"], path
        relative = api.post("/brains/home/folders", json={"path": "shared/notes"})
        assert relative.status_code == 400 and "absolute" in relative.json()["message"]
        assert api.get("/brains/home/folders").json() == []
        assert api.post("/brains/home/sync").json() == {"ok": True, "sources": []}
    assert confined.loci.sources.list() == []


def test_with_no_roots_configured_registering_is_refused_naming_the_setting(
    server: LiveServer, roots: tuple[Path, Path]
) -> None:
    _create_brain(server, "home")
    with server.client() as api:
        refused = api.post("/brains/home/folders", json={"path": str(roots[0] / "notes")})
        assert refused.status_code == 403
        assert "LOCI_SOURCES_ALLOWED_ROOTS" in refused.json()["message"]
        assert api.get("/brains/home/folders").json() == []
    assert server.loci.sources.list() == []


def test_a_member_who_is_not_an_admin_cannot_register_a_folder(
    confined: LiveServer, roots: tuple[Path, Path]
) -> None:
    _, dana = confined.accounts.add_user("dana")
    with confined.client(dana.secret) as api:
        assert api.post("/brains", json={"name": "danas"}).status_code == 201  # she owns it
        refused = api.post("/brains/danas/folders", json={"path": str(roots[0] / "notes")})
        assert refused.status_code == 403
        assert "admin" in refused.json()["message"]
        assert api.get("/brains/danas/folders").json() == []
    assert confined.loci.sources.list() == []


def test_another_brains_source_id_is_a_404(confined: LiveServer, roots: tuple[Path, Path]) -> None:
    _create_brain(confined, "home")
    _create_brain(confined, "work")
    with confined.client() as api:
        source = api.post("/brains/home/folders", json={"path": str(roots[0] / "notes")}).json()
        gone = api.delete(f"/brains/work/folders/{source['id']}")
        assert gone.status_code == 404, gone.text
        assert [s["id"] for s in api.get("/brains/home/folders").json()] == [source["id"]]


@pytest.fixture
def capped(
    tmp_path: Path, embedder: Embedder, database_url: str | None, roots: tuple[Path, Path]
) -> Iterator[LiveServer]:
    """A confined server whose file cap is 10 KB, so a sync has a file to fail."""
    service = make_service(tmp_path / "capped", embedder, database_url, max_file_mb=0.01)
    live = LiveServer(service, sources_allowed_roots=(roots[0],)).start()
    yield live
    live.stop()
    service.store.close()


def test_mcp_list_sources_shows_the_folder_its_last_sync_and_its_failures(
    capped: LiveServer, roots: tuple[Path, Path]
) -> None:
    _create_brain(capped, "home")
    (roots[0] / "notes" / "scan.txt").write_text("x" * 20_000)  # over the cap
    with capped.client() as api:
        source = api.post("/brains/home/folders", json={"path": str(roots[0] / "notes")}).json()
        synced = api.post("/brains/home/sync").json()
        assert synced["ok"] is False and synced["sources"][0]["added"] == 1
    read = capped.accounts.issue_token(
        capped.accounts.user("owner"), name="agent", scope="read"
    ).secret

    async def steps(c: Client) -> dict[str, Any]:
        return ok(await c.call_tool("list_sources", {"brain": "home"}))

    listed = over_http(capped, read, steps)  # a read-only connection has the tool
    (shown,) = listed["sources"]
    assert listed["brain"] == "home"
    assert shown["id"] == source["id"] and shown["path"] == source["path"]
    assert shown["files"] == 2 and shown["last_sync_at"] and shown["unreachable"] is None
    (failure,) = shown["errors"]
    assert failure["path"].endswith("scan.txt") and "limit is" in failure["reason"]


def test_a_vault_followed_as_pages_takes_edits_from_the_web_and_settles_a_conflict(
    confined: LiveServer, roots: tuple[Path, Path]
) -> None:
    _create_brain(confined, "home")
    vault = roots[0] / "vault"
    (vault / "people").mkdir(parents=True)
    ben = vault / "people" / "ben.md"
    ben.write_text("---\nid: ben\nkind: page\ntype: person\ntitle: Ben\n---\n\nBen bakes.\n")
    with confined.client() as api:
        added = api.post("/brains/home/folders", json={"path": str(vault), "mode": "pages"})
        assert added.status_code == 201 and added.json()["mode"] == "pages", added.text
        synced = api.post("/brains/home/sync").json()
        assert synced["ok"] and synced["sources"][0]["added"] == 1
        page = api.get("/brains/home/graph/documents/ben").json()
        assert page["document"]["folder"] == "people"  # where the file sits

        # The web editor's save is written to the file at once.
        edit = {"truth": "Ben bakes rye.", "expected_hash": page["document"]["content_hash"]}
        assert api.put("/brains/home/graph/documents/ben/truth", json=edit).status_code == 200
        assert "Ben bakes rye." in ben.read_text()

        # The file and the page both change: a conflict in the folder's list, nothing written.
        ben.write_text(ben.read_text().replace("rye", "spelt"))
        page = api.get("/brains/home/graph/documents/ben").json()
        edit = {"truth": "Ben bakes bagels.", "expected_hash": page["document"]["content_hash"]}
        assert api.put("/brains/home/graph/documents/ben/truth", json=edit).status_code == 200
        assert "spelt" in ben.read_text()
        assert not api.post("/brains/home/sync").json()["ok"]
        (listed,) = api.get("/brains/home/folders").json()
        assert [c["path"] for c in listed["conflicts"]] == ["people/ben.md"]

        source = f"/brains/home/folders/{listed['id']}/resolve"
        unknown = api.post(source, json={"path": "people/nobody.md", "keep": "file"})
        assert unknown.status_code == 404
        kept = api.post(source, json={"path": "people/ben.md", "keep": "file"})
        assert kept.status_code == 200, kept.text
        assert kept.json()["conflicts"] == [] and kept.json()["updated"] == 1
        page = api.get("/brains/home/graph/documents/ben").json()
        assert "spelt" in page["content"] and ben.read_text() == page["content"]
        assert api.get("/brains/home/folders").json()[0]["conflicts"] == []


def test_a_server_that_watches_takes_a_file_put_in_a_registered_folder_without_a_sync(
    loci: Loci, roots: tuple[Path, Path], tmp_path: Path, database_url: str | None
) -> None:
    settings = WatchSettings(mode="events", step_ms=50, refresh_s=0.2, settle_s=0.2)
    live = LiveServer(
        loci,
        sources_allowed_roots=(roots[0],),
        watcher=FolderWatcher(loci.sources, loci.store, settings),
    ).start()
    try:
        _create_brain(live, "home")
        folder = roots[0] / "notes"
        with live.client() as api:
            added = api.post("/brains/home/folders", json={"path": str(folder)}).json()
            assert added["watching"] == "off"  # registered; the watcher looks next
            (folder / "boiler.md").write_text("The boiler is serviced every October.\n")

            def found() -> list[dict[str, Any]]:
                files: list[dict[str, Any]] = api.get("/brains/home/files").json()
                return files if len(files) == 2 else []

            names = {d["name"]: d for d in eventually(found)}
            live.wait_ready(api, "home", names["boiler.md"]["id"])
            hits = api.post("/brains/home/search", json={"query": "boiler", "mode": "text"})
            assert "October" in hits.json()["hits"][0]["text"]
            (listed,) = api.get("/brains/home/folders").json()
            assert listed["watching"] == "events" and listed["files"] == 2

        env = {"LOCI_DATABASE_URL": database_url} if database_url else None
        done = run_cli("sources", "list", home=tmp_path / "home", env=env)
        assert done.returncode == 0 and "events" in done.stdout, done.stdout
    finally:
        live.stop()
    # a server that stops gives its folders up
    assert loci.sources.watching() == {}
