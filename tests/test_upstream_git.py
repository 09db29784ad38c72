"""A git repository followed as an upstream, against real repositories the tests make: a bare
origin that commits are pushed to, as a person's remote is."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Any

import pytest

from loci.errors import BlockedAddress, FetchError, InvalidInput
from loci.ingest.fetch_policy import FetchPolicy
from loci.upstream import git as git_upstream
from loci.upstream.base import Listing
from tests.support.certificates import self_signed
from tests.support.git_http import git_http_handler
from tests.support.git_repos import Origin, git
from tests.support.loopback import Loopback

LOOPBACK = FetchPolicy(allowed_networks=("127.0.0.1/32",))


@pytest.fixture
def origin(tmp_path: Path) -> Origin:
    return Origin.create(tmp_path / "repo")


def follow(origin: Origin, tmp_path: Path, **options: Any) -> git_upstream.GitRepository:
    return git_upstream.open(
        str(origin.bare), {"cache_dir": str(tmp_path / "cache"), **options}, None, LOOPBACK
    )


def versions(listing: Listing) -> dict[str, str]:
    return {entry.key: entry.version for entry in listing.entries}


def blob(origin: Origin, path: str) -> str:
    return git("rev-parse", f"HEAD:{path}", cwd=origin.work)


def test_text_and_code_at_the_head_are_listed_by_path_and_fetched(
    origin: Origin, tmp_path: Path
) -> None:
    origin.write("notes/ideas.md", "# Ideas\n\nA garden on the roof.\n")
    origin.write("src/app.py", "print('hello')\n")
    origin.write("README", "What this is.\n")
    origin.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    origin.write("data/blob.txt", b"looks like text\x00but is not")
    origin.write("generated.js", "x = 1;\n" * 200_000)  # 1.4 MB: over the 1 MB default
    commit = origin.commit_and_push("first notes")

    upstream = follow(origin, tmp_path)
    listing = upstream.list({})

    assert versions(listing) == {
        "notes/ideas.md": blob(origin, "notes/ideas.md"),
        "src/app.py": blob(origin, "src/app.py"),
        "README": blob(origin, "README"),
    }
    assert listing.state["commit"] == commit
    ideas = upstream.fetch(next(e for e in listing.entries if e.key == "notes/ideas.md"))
    assert ideas.name == "ideas.md"
    assert ideas.data == b"# Ideas\n\nA garden on the roof.\n"
    assert ideas.metadata["path"] == "notes/ideas.md"
    assert ideas.metadata["commit"] == commit


def test_every_file_fetched_in_any_order_has_its_own_content(
    origin: Origin, tmp_path: Path
) -> None:
    """A first run fetches every file in listing order (read ahead in batches); a later one
    only some, in any order; either way each file comes with its own bytes."""
    for number in range(150):
        origin.write(f"notes/{number:03}.md", f"note number {number}\n" * (number % 7 + 1))
    origin.write("notes/copy.md", "note number 5\n" * 6)  # the same blob as 005.md
    origin.commit_and_push("many notes")
    upstream = follow(origin, tmp_path)
    entries = upstream.list({}).entries

    for entry in entries:
        expected = (origin.work / entry.key).read_bytes()
        assert upstream.fetch(entry).data == expected, entry.key
    for entry in reversed(entries[::7]):
        assert upstream.fetch(entry).data == (origin.work / entry.key).read_bytes()


def test_a_second_run_with_no_new_commit_reads_as_unchanged(origin: Origin, tmp_path: Path) -> None:
    origin.write("a.md", "A")
    origin.commit_and_push("a")
    upstream = follow(origin, tmp_path)
    first = upstream.list({})
    again = upstream.list(first.state)
    assert again.unchanged and not again.entries
    assert again.state == first.state


def test_an_edit_changes_that_file_s_version_and_a_deletion_drops_it(
    origin: Origin, tmp_path: Path
) -> None:
    origin.write("kept.md", "kept")
    origin.write("edited.md", "first words")
    origin.write("gone.md", "soon deleted")
    origin.commit_and_push("three notes")
    upstream = follow(origin, tmp_path)
    before = upstream.list({})

    origin.write("edited.md", "second words")
    origin.remove("gone.md")
    origin.commit_and_push("edit one, delete one")
    after = upstream.list(before.state)

    assert set(versions(after)) == {"kept.md", "edited.md"}
    assert versions(after)["kept.md"] == versions(before)["kept.md"]
    assert versions(after)["edited.md"] != versions(before)["edited.md"]
    edited = next(e for e in after.entries if e.key == "edited.md")
    assert upstream.fetch(edited).data == b"second words"


def test_a_force_pushed_history_is_read_at_its_new_head(origin: Origin, tmp_path: Path) -> None:
    origin.write("draft.md", "a draft that was never meant to be pushed")
    origin.commit_and_push("oops")
    upstream = follow(origin, tmp_path)
    before = upstream.list({})
    assert set(versions(before)) == {"draft.md"}

    origin.remove("draft.md")
    origin.write("clean.md", "the history as it should have been")
    rewritten = origin.rewrite_history("clean start")
    after = upstream.list(before.state)

    assert after.state["commit"] == rewritten
    assert set(versions(after)) == {"clean.md"}
    clean = upstream.fetch(after.entries[0])
    assert clean.data == b"the history as it should have been"
    assert clean.metadata["commit"] == rewritten


def test_a_branch_that_vanishes_is_a_clear_error(origin: Origin, tmp_path: Path) -> None:
    origin.write("a.md", "on main")
    origin.commit_and_push("main")
    origin.write("b.md", "on the feature branch")
    origin.commit_and_push("feature", branch="feature")
    upstream = follow(origin, tmp_path, branch="feature")
    assert set(versions(upstream.list({}))) == {"a.md", "b.md"}

    origin.delete_branch("feature")
    with pytest.raises(FetchError, match=f"branch feature is not in {origin.bare}"):
        upstream.list({})


def test_an_empty_repository_is_a_clear_error(origin: Origin, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="has no commit on its default branch"):
        follow(origin, tmp_path).list({})


def test_include_and_exclude_globs_choose_the_files(origin: Origin, tmp_path: Path) -> None:
    origin.write("docs/guide.md", "guide")
    origin.write("docs/deep/inner.md", "inner")
    origin.write("docs/drafts/wip.md", "not yet")
    origin.write("docs/manual.pdf", b"%PDF-1.4 binary \x00 content")
    origin.write("src/app.py", "code")
    origin.commit_and_push("docs")
    upstream = follow(origin, tmp_path, include=["docs/**/*.md", "*.pdf"], exclude="docs/drafts/**")
    # Chosen by the person, so a binary file they asked for is taken too.
    assert set(versions(upstream.list({}))) == {
        "docs/guide.md",
        "docs/deep/inner.md",
        "docs/manual.pdf",
    }


def test_a_repository_that_is_not_there_is_a_clear_error(tmp_path: Path) -> None:
    upstream = git_upstream.open(
        str(tmp_path / "nowhere.git"), {"cache_dir": str(tmp_path / "cache")}, None, LOOPBACK
    )
    with pytest.raises(FetchError, match="git could not fetch the default branch of"):
        upstream.list({})


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("ext::sh -c touch% /tmp/pwned", "transport helpers"),
        ("file::/srv/repo.git", "transport helpers"),
        ("ssh://git@example.org/repo.git", "local path or an https:// URL"),
        ("git@example.org:team/repo.git", "ssh remotes"),
        ("http://example.org/repo.git", "local path or an https:// URL"),
        ("https://alice:hunter2@example.org/repo.git", "not in its URL"),
        ("relative/path", "absolute path"),
        ("fd::17", "transport helpers"),
    ],
)
def test_locations_git_could_be_tricked_with_are_refused(
    location: str, reason: str, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput, match=reason):
        git_upstream.open(location, {"cache_dir": str(tmp_path)}, None, LOOPBACK)


def test_a_bad_branch_name_or_missing_cache_dir_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a valid branch name"):
        git_upstream.open(
            str(tmp_path), {"cache_dir": str(tmp_path), "branch": "a..b"}, None, LOOPBACK
        )
    with pytest.raises(InvalidInput, match="cache_dir"):
        git_upstream.open(str(tmp_path), {}, None, LOOPBACK)


@pytest.mark.parametrize(
    "url", ["https://127.0.0.1/team/notes.git", "https://[::1]/team/notes.git"]
)
def test_an_https_remote_at_a_forbidden_address_is_refused(url: str, tmp_path: Path) -> None:
    upstream = git_upstream.open(url, {"cache_dir": str(tmp_path)}, None, FetchPolicy())
    with pytest.raises(BlockedAddress, match="refusing"):
        upstream.list({})


def test_an_https_remote_is_fetched_with_the_token_from_the_secret(
    origin: Origin, tmp_path: Path
) -> None:
    origin.write("notes/remote.md", "fetched over https")
    origin.commit_and_push("remote")
    cert, key = self_signed(tmp_path / "tls")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    handler = git_http_handler(origin.bare.parent, "tess", "t0ken")
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(cert))
    with Loopback(handler, tls=context) as site:
        url = site.url("/origin.git")
        options = {"cache_dir": str(tmp_path / "cache"), "user": "tess"}
        upstream = git_upstream.open(url, options, "t0ken", policy)
        listing = upstream.list({})
        assert set(versions(listing)) == {"notes/remote.md"}
        assert upstream.fetch(listing.entries[0]).data == b"fetched over https"

        wrong = git_upstream.open(url, {**options, "cache_dir": str(tmp_path / "c2")}, "x", policy)
        with pytest.raises(FetchError, match="git could not fetch"):
            wrong.list({})


def test_an_https_remote_is_reached_only_at_the_address_the_policy_vetted(
    origin: Origin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repo.test resolves (for Loci's check, here) to 127.0.0.1 and nowhere else: git can only
    reach it because curl is pinned to the vetted address rather than asking DNS again."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "repo.test":
            return [
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    origin.write("pinned.md", "reached through the pin")
    origin.commit_and_push("pinned")
    cert, key = self_signed(tmp_path / "tls", name="repo.test")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(cert))
    with Loopback(git_http_handler(origin.bare.parent, "git", "pw"), tls=context) as site:
        url = f"https://repo.test:{site.port}/origin.git"
        upstream = git_upstream.open(url, {"cache_dir": str(tmp_path / "cache")}, "pw", policy)
        listing = upstream.list({})
        assert set(versions(listing)) == {"pinned.md"}
        reached = len(site.connections)
        # The same name where the policy refuses its address is not fetched at all.
        refused = git_upstream.open(url, {"cache_dir": str(tmp_path / "c2")}, "pw", FetchPolicy())
        with pytest.raises(BlockedAddress, match="repo.test"):
            refused.list({})
        assert len(site.connections) == reached
