"""`loci import`: an export of another tool read whole, each item a document known by its
origin, so a second run adds nothing and an edited item updates its document in place; a
hostile or malformed export imports nothing. Format-specific tests live in test_import_*.py;
these use Kindle's clippings, the simplest export, for what every kind shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.errors import InvalidInput
from loci.imports.archive import read_zip
from loci.imports.items import ExportRefused, Limits
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.importing import ImportReport
from tests.support.cli import run_cli
from tests.support.exports import KINDLE_CLIPPINGS, kindle_clippings, zip_bytes, zip_of
from tests.support.services import texts

pytestmark = pytest.mark.both_backends


def _import(loci: Loci, brain: Brain, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, "kindle", path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


def test_a_book_is_a_document_its_highlights_cited_at_their_location(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, kindle_clippings(tmp_path))
    assert report.counts["add"] == 2 and report.counts["fail"] == 0
    books = {d.title: d for d in loci.library.documents(brain)}
    assert set(books) == {"The Pragmatic Programmer", "Der Process"}
    book = books["The Pragmatic Programmer"]
    assert book.origin == "kindle:The Pragmatic Programmer (Hunt, Andrew;Thomas, David)"
    assert book.metadata["import"]["author"] == "Hunt, Andrew;Thomas, David"
    hits = loci.searching.search(brain, _text_query("unless you care about doing it well"))
    assert hits[0].citation.document_id == book.id
    assert hits[0].citation.heading_path[-1] == "Highlight at Location 170-174 · page 12"
    # The narrower highlight the device saved first is the same passage: kept once.
    text = loci.library.document_text(brain, book.id) or ""
    assert text.count("Care about your craft.") == 1
    assert "The core of the book for me." in text
    # A German device's words for page and position are read too; a bookmark has no text.
    kafka = loci.searching.search(brain, _text_query("verleumdet"))[0]
    assert kafka.citation.heading_path[-1] == "Highlight at Location 88-90 · page 7"


def test_a_second_run_adds_nothing_and_an_edited_item_updates_its_document(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = kindle_clippings(tmp_path)
    first = _import(loci, brain, path)
    ids = {o.name: o.document_id for o in first.outcomes}
    again = _import(loci, brain, path)
    assert again.counts == {"add": 0, "update": 0, "unchanged": 2, "fail": 0, "skip": 0}
    assert len(loci.library.documents(brain)) == 2
    more = KINDLE_CLIPPINGS + (
        "Der Process (Kafka, Franz)\n"
        "- Ihre Markierung auf Seite 30 | Position 400-401 | Hinzugefügt am Dienstag\n\n"
        "Das Gericht will nichts von dir.\n==========\n"
    )
    edited = _import(loci, brain, kindle_clippings(tmp_path, more))
    assert edited.counts["update"] == 1 and edited.counts["unchanged"] == 1
    assert {o.name: o.document_id for o in edited.outcomes} == ids  # same documents
    assert any("Gericht" in t for t in texts(loci, brain, "Gericht"))
    assert len(loci.library.documents(brain)) == 2


def test_a_dry_run_says_what_it_would_do_and_writes_nothing(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = kindle_clippings(tmp_path)
    report = loci.importing.run(brain, "kindle", path, dry_run=True)
    assert report.dry_run and report.counts["add"] == 2
    assert loci.library.documents(brain) == []
    _import(loci, brain, path)
    assert loci.importing.run(brain, "kindle", path, dry_run=True).counts["unchanged"] == 2


def test_an_export_of_another_format_is_refused_whole(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just some text\nnot clippings\n")
    with pytest.raises(ExportRefused, match="no clippings"):
        loci.importing.run(brain, "kindle", notes)
    latin = tmp_path / "latin.txt"
    clean = KINDLE_CLIPPINGS.replace("\ufeff", "")
    latin.write_bytes(clean.encode("utf-8") + "é".encode("latin-1"))
    with pytest.raises(ExportRefused, match="not UTF-8"):
        loci.importing.run(brain, "kindle", latin)
    with pytest.raises(InvalidInput, match="no importer for 'onenote'"):
        loci.importing.run(brain, "onenote", notes)
    assert loci.library.documents(brain) == []


def test_too_many_items_refuses_the_export_before_anything_is_written(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    entries = "".join(
        f"Book {i} (Someone)\n- Your Highlight at location {i} | Added on Monday\n\nLine {i}.\n"
        "==========\n"
        for i in range(30)
    )
    path = kindle_clippings(tmp_path, entries)
    small = loci.importing.__class__(loci.library, Limits(max_items=20))
    with pytest.raises(ExportRefused, match="more than 20 items"):
        small.run(brain, "kindle", path)
    assert loci.library.documents(brain) == []


def test_the_cli_imports_reports_and_exits_cleanly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = kindle_clippings(tmp_path)
    dry = run_cli("import", "kindle", str(path), "--dry-run", home=home)
    assert dry.returncode == 0, dry.stderr
    assert "kindle: 2 would be added" in dry.stdout
    done = run_cli("import", "kindle", str(path), "--json", home=home)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert (body["added"], body["unchanged"]) == (2, 0)
    again = run_cli("import", "kindle", str(path), home=home)
    assert "0 added, 2 unchanged" in again.stdout
    found = run_cli("search", "verleumdet", home=home)
    assert "Der Process" in found.stdout
    wrong = run_cli("import", "evernote-2", str(path), home=home)
    assert wrong.returncode != 0 and "no importer for 'evernote-2'" in wrong.stderr


# the zip reader every zipped export goes through -------------------------------------------


def test_a_zip_is_read_with_its_nested_zips(tmp_path: Path) -> None:
    inner = zip_bytes({"Page a1b2.md": b"# Page\n"})
    path = zip_of(tmp_path / "export.zip", {"Export-1.zip": inner, "top.csv": b"a,b\n"})
    members = {m.path: m.data for m in read_zip(path, Limits())}
    assert members == {"Export-1/Page a1b2.md": b"# Page\n", "top.csv": b"a,b\n"}


def test_a_zip_bomb_is_refused_at_the_first_limit_it_passes(tmp_path: Path) -> None:
    bomb = zip_of(tmp_path / "bomb.zip", {"zeros.md": b"\0" * (50 * 1024 * 1024)})
    assert bomb.stat().st_size < 100_000
    with pytest.raises(ExportRefused, match="zip bomb"):
        read_zip(bomb, Limits())
    with pytest.raises(ExportRefused, match="more than 1,048,576 bytes"):
        read_zip(bomb, Limits(max_bytes=1024 * 1024, max_ratio=10**6))


def test_a_zip_member_outside_the_export_is_refused(tmp_path: Path) -> None:
    path = zip_of(tmp_path / "evil.zip", {"../../etc/cron.d/x": b"* * * * * rm -rf /\n"})
    with pytest.raises(ExportRefused, match="outside itself"):
        read_zip(path, Limits())
    nested = zip_of(
        tmp_path / "deep.zip",
        {"a.zip": zip_bytes({"b.zip": zip_bytes({"c.zip": zip_bytes({"x.md": b"x"})})})},
    )
    with pytest.raises(ExportRefused, match="nested deeper"):
        read_zip(nested, Limits())
    not_zip = tmp_path / "not.zip"
    not_zip.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(ExportRefused, match="not a readable zip"):
        read_zip(not_zip, Limits())


def _text_query(words: str) -> SearchRequest:
    return SearchRequest(words, mode="text", limit=5)
