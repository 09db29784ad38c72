"""`loci import bookmarks`: each link of a browser's (or Pocket's) export fetched through the
safe fetcher from a real HTTP server on loopback, its folders as tags, dead and blocked links
failed alone with their reason, links that are not web pages skipped, a second run unchanged,
and a dry run that fetches nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.cli.output import PARTIAL
from loci.imports.bookmarks import normal_url
from loci.imports.items import ExportRefused, Limits
from loci.models import Brain
from loci.service import Loci
from loci.service.importing import ImportReport
from tests.support.bookmark_files import chrome_bookmarks, pocket_export, site, write
from tests.support.cli import run_cli
from tests.support.loopback import Loopback
from tests.support.services import texts


@pytest.fixture
def pages() -> Iterator[Loopback]:
    with site() as served:
        yield served


# The service's fetcher may reach the loopback site (and nothing else private).
pytestmark = pytest.mark.fetches_loopback


def _import(loci: Loci, brain: Brain, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, "bookmarks", path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


def _by_name(report: ImportReport) -> dict[str, tuple[str, str | None]]:
    return {o.name: (o.action, o.reason) for o in report.outcomes}


@pytest.mark.both_backends
def test_each_link_is_fetched_and_kept_with_its_folders_and_dead_links_fail_alone(
    loci: Loci, pages: Loopback, tmp_path: Path
) -> None:
    brain = loci.brain("default")
    report = _import(loci, brain, write(tmp_path, chrome_bookmarks(pages.url())))

    outcomes = _by_name(report)
    assert outcomes["Sourdough & starters"][0] == "add"
    assert outcomes["Ciabatta"][0] == "add"
    assert outcomes["Tide notes"][0] == "add"
    assert outcomes["A page that is gone"] == (
        "fail",
        f"{pages.url('/gone')} answered HTTP 404 Not Found",
    )
    action, reason = outcomes["Router admin"]
    assert action == "fail" and reason is not None and "10.11.12.13" in reason
    action, reason = outcomes["Old tide blog"]
    assert action == "fail" and reason is not None and "old-blog.invalid" in reason
    assert outcomes["Show title"][0] == "skip" and "javascript:" in (
        outcomes["Show title"][1] or ""
    )
    assert outcomes["Recent tags"][0] == "skip" and "place:" in (outcomes["Recent tags"][1] or "")
    assert report.counts == {"add": 3, "update": 0, "unchanged": 0, "fail": 3, "skip": 2}

    documents = {d.source_url: d for d in loci.library.documents(brain)}
    assert set(documents) == {pages.url(p) for p in ("/sourdough", "/ciabatta", "/tides.txt")}
    sourdough = documents[pages.url("/sourdough")]
    assert sourdough.title == "Sourdough starter guide"  # the page's own title
    # Its folder and its own tags, and those of the folder it is bookmarked in again (the same
    # page, with a #fragment); the browser's toolbar folder is where it was, not a tag.
    assert set(sourdough.tags) == {"Baking", "bread", "fermentation", "Sea"}
    facts = sourdough.metadata["import"]
    assert facts["where"] == ["Bookmarks bar", "Baking"]
    assert facts["created"] == "2023-04-01T00:00:00Z"
    assert facts["description"] == "The starter schedule that finally worked"
    assert sourdough.origin == f"bookmarks:{pages.url('/sourdough')}"
    assert set(documents[pages.url("/ciabatta")].tags) == {"Baking", "Italian"}
    # A page that names no title of its own is known by the bookmark's name.
    assert documents[pages.url("/tides.txt")].title == "Tide notes"
    assert any("rye flour" in t for t in texts(loci, brain, "starter rye flour"))

    connections = len(pages.connections)
    planned = loci.importing.run(brain, "bookmarks", tmp_path / "bookmarks.html", dry_run=True)
    # (the dead links are not known dead until fetched)
    assert planned.counts == {"add": 3, "update": 0, "unchanged": 3, "fail": 0, "skip": 2}
    assert "fetched again" in (_by_name(planned)["Ciabatta"][1] or "")
    assert len(pages.connections) == connections  # the dry run fetched nothing
    again = _import(loci, brain, write(tmp_path, chrome_bookmarks(pages.url())))
    assert again.counts == {"add": 0, "update": 0, "unchanged": 3, "fail": 3, "skip": 2}
    assert len(loci.library.documents(brain)) == 3
    assert len(pages.connections) > connections  # the pages were fetched again, and unchanged


def test_a_dry_run_fetches_nothing_and_says_what_would_be_added(
    loci: Loci, pages: Loopback, tmp_path: Path
) -> None:
    brain = loci.brain("default")
    report = loci.importing.run(
        brain, "bookmarks", write(tmp_path, chrome_bookmarks(pages.url())), dry_run=True
    )
    assert report.dry_run
    assert report.counts == {"add": 6, "update": 0, "unchanged": 0, "fail": 0, "skip": 2}
    assert pages.connections == []
    assert loci.library.documents(brain) == []


def test_pocket_sections_become_tags(loci: Loci, pages: Loopback, tmp_path: Path) -> None:
    brain = loci.brain("default")
    report = _import(loci, brain, write(tmp_path, pocket_export(pages.url())))
    assert report.counts["add"] == 2 and report.counts["fail"] == 0
    tags = {d.source_url: set(d.tags) for d in loci.library.documents(brain)}
    assert tags == {
        pages.url("/ciabatta"): {"Unread", "baking"},
        pages.url("/tides.txt"): {"Read Archive"},
    }


def test_the_cli_imports_bookmarks_and_lists_the_dead_ones(pages: Loopback, tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = write(tmp_path, chrome_bookmarks(pages.url()))
    env = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32"}
    done = run_cli("import", "bookmarks", str(path), "--json", home=home, env=env)
    assert done.returncode == PARTIAL, done.stderr  # some failed
    report = json.loads(done.stdout)
    assert (report["added"], report["failed"], report["skipped"]) == (3, 3, 2)
    failed = {i["name"]: i["reason"] for i in report["items"] if i["action"] == "fail"}
    assert "404" in failed["A page that is gone"]


def test_a_sloppy_file_loses_no_link_and_a_folder_description_stays_the_folders(
    tmp_path: Path,
) -> None:
    """Safari writes FOLDED folders and a description under a folder too; a hand-edited file
    may leave an <A> open."""
    from loci.imports.bookmarks import read

    text = (
        "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n"
        "<DT><H3 FOLDED>Reading List</H3>\n<DD>Pages saved to read later\n<DL><p>\n"
        '<DT><A HREF="https://example.org/one">One, never closed\n'
        '<DT><A HREF="https://example.org/two">Two</A>\n<DD>About two\n'
        "</DL><p>\n</DL><p>\n"
    )
    export = read(write(tmp_path, text), Limits())
    items = {i.title: i for i in export.items}
    assert set(items) == {"One, never closed", "Two"}
    assert items["One, never closed"].extra["description"] is None
    assert items["Two"].extra["description"] == "About two"
    assert items["Two"].where == ("Reading List",) and items["Two"].tags == ("Reading List",)


def test_what_is_not_a_bookmarks_file_is_refused_whole(tmp_path: Path) -> None:
    from loci.imports.bookmarks import read

    notes = write(tmp_path, "<html><body><a href='https://example.org/'>a link</a></body></html>")
    with pytest.raises(ExportRefused, match="not a bookmarks export"):
        read(notes, Limits())
    latin = tmp_path / "latin.html"
    latin.write_bytes("<!DOCTYPE NETSCAPE-Bookmark-file-1><DL><DT><A HREF='https://x.org/'>Café</A>"
                      .encode("latin-1"))  # fmt: skip
    with pytest.raises(ExportRefused, match="not UTF-8"):
        read(latin, Limits())
    deep = write(tmp_path, "<!DOCTYPE NETSCAPE-Bookmark-file-1>" + "<DL><DT><H3>f</H3>" * 500)
    with pytest.raises(ExportRefused, match="deeper than 100"):
        read(deep, Limits())
    many = "".join(f'<DT><A HREF="https://example.org/{n}">{n}</A>\n' for n in range(11))
    with pytest.raises(ExportRefused, match="more than 10 items"):
        read(
            write(tmp_path, "<!DOCTYPE NETSCAPE-Bookmark-file-1><DL>" + many), Limits(max_items=10)
        )


def test_an_address_is_its_key_written_one_way() -> None:
    assert normal_url("HTTPS://Example.ORG:443/a?b=1#top") == "https://example.org/a?b=1"
    assert normal_url("http://example.org") == "http://example.org/"
    assert normal_url("http://example.org:8080/x") == "http://example.org:8080/x"
    assert normal_url("http://[::1]:80/") == "http://[::1]/"
    assert normal_url("https://user:secret@example.org/") is None
    assert normal_url("file:///etc/passwd") is None
    assert normal_url("http://example.org:99999/") is None
