"""A mailbox folder, a git repository and a WebDAV folder followed on a schedule, end to end
through the scheduled sync against real servers on 127.0.0.1 (pymap, a bare repository,
WsgiDAV): what is there becomes searchable documents, each known by its key upstream, and what
is deleted upstream is removed here; the password is kept sealed, never in the source's row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.sync_report import SourceSync
from tests.support.cli import run_cli
from tests.support.git_repos import Origin
from tests.support.imap_server import ImapServer, append, message
from tests.support.webdav_server import WebDavServer

HOUR = 3600.0
OWNER = "test-worker"
PASSWORD = "s3cret-app-password"


pytestmark = pytest.mark.fetches_loopback


def run(loci: Loci, brain: Brain, source_id: int) -> SourceSync:
    result = loci.scheduled.run_now(brain, source_id, OWNER)
    if result.queued:
        loci.library.wait_for(brain, result.queued)
    return result


def titles(loci: Loci, brain: Brain, words: str) -> set[str]:
    hits = loci.searching.search(brain, SearchRequest(words, mode="text"))
    return {h.citation.title or h.citation.name for h in hits}


def test_a_mailbox_folder_is_followed_and_a_deleted_message_removed(
    loci: Loci, brain: Brain
) -> None:
    with ImapServer("alice", PASSWORD) as server:
        with server.mailbox() as box:
            append(box, "INBOX", message("Boiler service", "The boiler is serviced on 4 May."))
            doomed = append(box, "INBOX", message("Old offer", "Gutter cleaning at half price."))
        source = loci.scheduled.add(brain, server.url("INBOX"), HOUR, kind="imap", secret=PASSWORD)
        assert PASSWORD not in str(loci.store.get_source(brain.id, source.id))
        first = run(loci, brain, source.id)
        assert (first.added, first.failed) == (2, [])
        assert titles(loci, brain, "boiler serviced") == {"Boiler service"}
        with server.mailbox() as box:
            box.select("INBOX")
            box.uid("STORE", str(doomed), "+FLAGS", "(\\Deleted)")
            box.expunge()
        second = run(loci, brain, source.id)
    assert (second.removed, second.unchanged) == (1, 1)
    assert titles(loci, brain, "gutter cleaning") == set()


def test_a_git_repository_is_followed_through_edits_deletes_and_a_force_push(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    origin = Origin.create(tmp_path / "repo")
    origin.write("docs/install.md", "# Install\n\nRun make setup, then make demo.\n")
    origin.write("notes/ideas.md", "# Ideas\n\nA garden planner for the balcony.\n")
    origin.commit_and_push("first")
    source = loci.scheduled.add(brain, str(origin.bare), HOUR, kind="git")
    assert run(loci, brain, source.id).added == 2
    assert titles(loci, brain, "balcony planner")
    origin.write("docs/install.md", "# Install\n\nRun make bootstrap first.\n")
    origin.remove("notes/ideas.md")
    origin.commit_and_push("edit and delete")
    second = run(loci, brain, source.id)
    assert (second.updated, second.removed) == (1, 1)
    assert titles(loci, brain, "balcony planner") == set()
    assert titles(loci, brain, "bootstrap")
    origin.write("CHANGES.md", "# Changes\n\nHistory rewritten.\n")
    origin.rewrite_history("squashed")
    third = run(loci, brain, source.id)
    assert third.added == 1 and not third.unreachable
    docs = loci.library.documents(brain)
    assert len(docs) == 2  # install.md (unchanged) and CHANGES.md


def test_a_webdav_folder_is_followed_and_a_deleted_file_removed(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    root = tmp_path / "share"
    (root / "Recipes").mkdir(parents=True)
    (root / "Recipes" / "soup.md").write_text("# Soup\n\nLeek and potato, forty minutes.\n")
    (root / "todo.txt").write_text("Renew the parking permit before March.\n")
    with WebDavServer(root, "bob", PASSWORD) as dav:
        source = loci.scheduled.add(
            brain, dav.url(""), HOUR, kind="webdav", options={"user": "bob"}, secret=PASSWORD
        )
        assert run(loci, brain, source.id).added == 2
        assert titles(loci, brain, "parking permit")
        (root / "todo.txt").unlink()
        second = run(loci, brain, source.id)
        assert (second.removed, second.unchanged) == (1, 1)
        wrong = loci.scheduled.add(
            brain, dav.url("Recipes/"), HOUR, kind="webdav", options={"user": "bob"},
            secret="wrong",
        )  # fmt: skip
        failed = loci.scheduled.run_now(brain, wrong.id, OWNER)
    assert failed.unreachable and "bob" in failed.unreachable
    assert titles(loci, brain, "parking permit") == set()
    assert titles(loci, brain, "leek potato")


def test_the_cli_follows_a_mailbox_with_a_password_from_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32", "MAIL_PASSWORD": PASSWORD}
    with ImapServer("alice", PASSWORD) as server:
        with server.mailbox() as box:
            append(box, "INBOX", message("Dentist", "Check-up on 12 June at 9."))
        missing = run_cli(
            "sources", "add", server.url("INBOX"), "--every", "1h", "--password-env", "NOPE",
            home=home, env=env,
        )  # fmt: skip
        assert missing.returncode != 0 and "NOPE is not set" in missing.stderr
        added = run_cli(
            "sources", "add", server.url("INBOX"), "--every", "1h",
            "--password-env", "MAIL_PASSWORD", "--json", home=home, env=env,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        source = json.loads(added.stdout)
        assert source["kind"] == "imap"  # told by its scheme
        synced = run_cli("sources", "sync", str(source["id"]), home=home, env=env)
        assert synced.returncode == 0, synced.stderr
    found = run_cli("search", "dentist check-up", home=home)
    assert "Dentist" in found.stdout
    listed = run_cli("sources", "list", home=home)
    assert PASSWORD not in listed.stdout
