"""`loci import notion`: Notion's Markdown & CSV export (a zip of part zips, or its folder), each
page a document known by its Notion id, links between pages recorded and readable, files as
attachments, a database's rows each a passage a search cites by the row's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.imports import notion
from loci.imports.items import ExportRefused, Limits
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.importing import ImportReport
from tests.support.exports import zip_bytes, zip_of
from tests.support.notion_export import (
    DUNE,
    LONG,
    LONG_TITLE,
    MEETING_1,
    MEETING_2,
    PACKING,
    READING,
    TRIP,
    WRAPPER,
    notion_export,
    notion_folder,
    notion_pages,
    notion_parts,
)
from tests.support.services import texts

PAGES = 7  # six pages and one database; the database's two CSVs are one


def _import(loci: Loci, brain: Brain, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, "notion", path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


# the reader --------------------------------------------------------------------------------


def test_pages_are_keyed_by_their_notion_id_titled_by_their_heading(tmp_path: Path) -> None:
    export = notion.read(notion_export(tmp_path), Limits())
    items = {i.key: i for i in export.items}
    assert set(items) == {TRIP, PACKING, READING, DUNE, MEETING_1, MEETING_2, LONG}
    assert export.failed == []
    # Two pages of one title stay two; a title cut short in the file name is whole.
    assert items[MEETING_1].title == items[MEETING_2].title == "Meeting notes"
    assert items[LONG].title == LONG_TITLE
    # Its place: the pages above it, not Notion's "Export-<uuid>" wrapper folder.
    assert items[TRIP].where == ()
    assert items[PACKING].where == ("Trip to Lisbon",)
    assert items[DUNE].where == ("Reading list",)
    trip = items[TRIP]
    assert (trip.created, trip.updated) == ("2023-01-05T10:15:00", "2023-03-02T18:40:00")
    assert trip.extra["properties"]["Tags"] == "travel, portugal"
    body = trip.body.decode()
    assert "Tags: travel, portugal" in body  # the properties stay as text
    assert set(trip.links) == {PACKING, READING}
    assert f"[Packing list](https://www.notion.so/{PACKING})" in body
    assert "%20" not in body and ".md)" not in body
    assert "\n![tram.png](tram.png)\n" in body  # the image, named as its attachment
    assert {(a.name, a.mime_type) for a in trip.attachments} == {
        ("tram.png", "image/png"),
        ("itinerary.txt", "text/plain"),
    }
    # A link up the tree ("../Trip%20to%20Lisbon%20<id>.md") is resolved too.
    assert items[PACKING].links == (TRIP,)
    # A file name's parentheses are left in its link unencoded, as Notion writes them.
    assert items[MEETING_1].links == (LONG,)
    assert f"[{LONG_TITLE}](https://www.notion.so/{LONG})" in items[MEETING_1].body.decode()


def test_a_database_is_a_section_a_row_its_own_page_kept_and_linked(tmp_path: Path) -> None:
    items = {i.key: i for i in notion.read(notion_export(tmp_path), Limits()).items}
    database = items[READING]
    assert database.title == "Reading list"
    text = database.body.decode()
    # "_all.csv" has both rows, the view's CSV only one: the whole database is read.
    assert "## The Name of the Rose" in text and "## Dune" in text
    assert "- Author: Umberto Eco" in text
    # A relation cell reads as the page's title and is a link.
    assert "- Related: Trip to Lisbon\n" in text
    assert f"- Page: [Dune](https://www.notion.so/{DUNE})" in text
    assert set(database.links) == {DUNE, TRIP}


def test_an_unpacked_export_reads_as_its_zip_does(tmp_path: Path) -> None:
    zipped = notion.read(notion_export(tmp_path), Limits())
    unpacked = notion.read(notion_folder(tmp_path), Limits())
    assert sorted((i.key, i.body) for i in unpacked.items) == sorted(
        (i.key, i.body) for i in zipped.items
    )


def test_an_export_split_in_parts_reads_as_one(tmp_path: Path) -> None:
    # Sub-pages, files and rows' pages in Part-2, the pages above them in Part-1.
    parts = notion.read(notion_parts(tmp_path, "/Trip to Lisbon "), Limits())
    whole = notion.read(notion_export(tmp_path), Limits())
    assert sorted((i.key, i.body, i.links, i.attachments) for i in parts.items) == sorted(
        (i.key, i.body, i.links, i.attachments) for i in whole.items
    )
    split = notion.read(notion_parts(tmp_path, "/Reading list "), Limits())
    assert {i.key: i.where for i in split.items}[DUNE] == ("Reading list",)


def test_sub_page_folders_named_without_their_id_are_read_alike(tmp_path: Path) -> None:
    renamed = {
        name.replace(f"Trip to Lisbon {TRIP}/", "Trip to Lisbon/").replace(
            f"Reading list {READING}/", f"{READING}/"
        ): data
        for name, data in notion_pages().items()
    }
    items = {i.key: i for i in notion.read(notion_export(tmp_path, renamed), Limits()).items}
    assert items[PACKING].where == ("Trip to Lisbon",)
    assert items[DUNE].where == ("Reading list",)
    assert DUNE in items[READING].links  # still the page of its row


def test_a_symlink_in_an_unpacked_export_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"Secret {'9' * 32}.md").write_text("# Secret\n\nthe machine's secret\n")
    folder = notion_folder(tmp_path)
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / f"Alias {'8' * 32}.md").symlink_to(outside / f"Secret {'9' * 32}.md")
    titles = {i.title for i in notion.read(folder, Limits()).items}
    assert "Secret" not in titles and len(titles) == PAGES - 1  # two "Meeting notes"


def test_an_export_of_another_kind_or_a_hostile_zip_is_refused(tmp_path: Path) -> None:
    html = zip_of(tmp_path / "html.zip", {"Page.html": b"<html></html>", "a.txt": b"x"})
    with pytest.raises(ExportRefused, match="'Markdown & CSV' export"):
        notion.read(html, Limits())
    escape = notion_export(
        tmp_path, {**notion_pages(), "../../outside.md": b"# x\n"}, name="escape.zip"
    )
    with pytest.raises(ExportRefused, match="outside itself"):
        notion.read(escape, Limits())
    bomb = notion_export(
        tmp_path, {f"Big {TRIP}.md": b"# Big\n" + b" " * (30 * 1024 * 1024)}, name="bomb.zip"
    )
    with pytest.raises(ExportRefused, match="zip bomb"):
        notion.read(bomb, Limits())
    loose = tmp_path / "page.md"
    loose.write_text("# A page\n")
    with pytest.raises(ExportRefused, match="neither a zip nor a folder"):
        notion.read(loose, Limits())


def test_a_page_that_is_not_utf8_fails_alone(tmp_path: Path) -> None:
    pages = notion_pages()
    pages[f"{WRAPPER}/Café {'9' * 32}.md"] = "# Café\n\nCrème\n".encode("latin-1")
    export = notion.read(notion_export(tmp_path, pages), Limits())
    assert [(f.name.rsplit("/", 1)[-1], f.reason) for f in export.failed] == [
        (f"Café {'9' * 32}.md", "not UTF-8 text")
    ]
    assert len(export.items) == PAGES


# end to end --------------------------------------------------------------------------------


@pytest.mark.both_backends
def test_pages_become_documents_linked_cited_with_their_attachments(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, notion_export(tmp_path))
    assert report.counts["add"] == PAGES and report.counts["fail"] == 0
    documents = loci.library.documents(brain)
    by_origin = {d.origin: d for d in documents}
    trip, packing = by_origin[f"notion:{TRIP}"], by_origin[f"notion:{PACKING}"]
    reading, dune = by_origin[f"notion:{READING}"], by_origin[f"notion:{DUNE}"]
    pages = [by_origin[f"notion:{k}"] for k in (TRIP, PACKING, READING, DUNE, LONG)]
    pages += [by_origin[f"notion:{k}"] for k in (MEETING_1, MEETING_2)]
    assert [d.title for d in pages] == [
        "Trip to Lisbon", "Packing list", "Reading list", "Dune", LONG_TITLE,
        "Meeting notes", "Meeting notes",
    ]  # fmt: skip
    assert len(documents) == PAGES + 2  # and the two files the trip page shows
    assert packing.metadata["import"]["where"] == ["Trip to Lisbon"]
    assert trip.metadata["import"]["created"] == "2023-01-05T10:15:00"
    # Links by document id, on both ends.
    assert set(trip.metadata["links"]) == {packing.id, reading.id}
    assert trip.id in packing.metadata["linked_from"]
    assert set(reading.metadata["links"]) == {dune.id, trip.id}
    assert reading.id in dune.metadata["linked_from"]
    # A row is found by its words and cited by its name, in its database.
    hit = loci.searching.search(brain, _text("labyrinthine library monastery"))[0]
    assert hit.citation.document_id == reading.id
    assert hit.citation.heading_path[-1] == "The Name of the Rose"
    assert "Author: Umberto Eco" in hit.text
    # A row's own page is a document of its own.
    hit = loci.searching.search(brain, _text("stillsuits"))[0]
    assert hit.citation.document_id == dune.id
    # The files a page shows are documents attached to it.
    attached = {a["name"]: a["id"] for a in trip.metadata["attachments"]}
    assert set(attached) == {"tram.png", "itinerary.txt"}
    itinerary = loci.library.document(brain, attached["itinerary.txt"])
    assert itinerary.metadata["attached_to"] == trip.id
    assert loci.searching.search(brain, _text("pasteis Belem"))[0].citation.document_id == (
        itinerary.id
    )
    text = loci.library.document_text(brain, trip.id) or ""
    assert "[Reading list](https://www.notion.so/" in text


def test_a_second_run_adds_nothing_an_edited_page_updates_its_document(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = notion_export(tmp_path)
    first = _import(loci, brain, path)
    count = len(loci.library.documents(brain))
    again = _import(loci, brain, path)
    assert again.counts == {"add": 0, "update": 0, "unchanged": PAGES, "fail": 0, "skip": 0}
    assert len(loci.library.documents(brain)) == count
    # Edited in Notion and exported again: the same page (by id) is updated, whatever its name.
    pages = notion_pages("We moved to a flat in Graça with a view of the castle.")
    edited = _import(loci, brain, notion_export(tmp_path, pages, name="again.zip"))
    assert edited.counts["update"] == 1 and edited.counts["unchanged"] == PAGES - 1
    ids = {o.name: o.document_id for o in first.outcomes}
    updated = next(o for o in edited.outcomes if o.action == "update")
    assert updated.document_id == ids["Trip to Lisbon"]
    assert any("castle" in t for t in texts(loci, brain, "castle"))
    assert len(loci.library.documents(brain)) == count


def test_a_dry_run_says_what_it_would_add_and_writes_nothing(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = notion_export(tmp_path)
    report = loci.importing.run(brain, "notion", path, dry_run=True)
    assert report.dry_run and report.counts["add"] == PAGES
    assert sum(o.attachments for o in report.outcomes) == 2
    assert loci.library.documents(brain) == []


def test_a_hostile_export_imports_nothing(loci: Loci, brain: Brain, tmp_path: Path) -> None:
    inner = zip_bytes({**notion_pages(), "../evil.md": b"# Evil\n"})
    path = zip_of(tmp_path / "evil.zip", {f"{WRAPPER}-Part-1.zip": inner})
    with pytest.raises(ExportRefused, match="outside itself"):
        loci.importing.run(brain, "notion", path)
    assert loci.library.documents(brain) == []


def _text(words: str) -> SearchRequest:
    return SearchRequest(words, mode="text", limit=5)


def _many_pages(count: int, edited: int | None = None) -> dict[str, bytes]:
    """`count` pages at the top, each linking to the page 250 after it (so across the
    import's batches; none to page 3, which a link would make a file); page 3 not UTF-8, page
    5 the same text as page 4; `edited` with new text."""
    names = [f"Page {i} {i:032x}.md" for i in range(count)]
    pages = {}
    for i, name in enumerate(names):
        text = f"# Page {i}\n\nNote number {i} of the big export.\n\n"
        target = (i + 250) % count if (i + 250) % count != 3 else 4
        text += f"See [Page {target}]({names[target].replace(' ', '%20')}).\n"
        if i == 3:
            pages[f"{WRAPPER}/{name}"] = b"# Page 3\n\n\xff\xfe caf\xe9\n"
            continue
        if i == 5:
            text = pages[f"{WRAPPER}/{names[4]}"].decode()
        elif i == edited:
            text = text.replace("Note number", "Rewritten note number")
        pages[f"{WRAPPER}/{name}"] = text.encode()
    return pages


@pytest.mark.both_backends
def test_an_export_bigger_than_a_batch_is_written_as_one_item_at_a_time_would_be(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = notion_export(tmp_path, _many_pages(450))
    first = loci.importing.run(brain, "notion", path)
    # The page in another encoding fails alone with its reason; the copy of page 4 is page
    # 4's document.
    assert first.counts == {"add": 448, "update": 0, "unchanged": 1, "fail": 1, "skip": 0}
    outcomes = {o.name: o for o in first.outcomes if o.action == "add"}
    (failed,) = [o for o in first.outcomes if o.action == "fail"]
    assert failed.reason == "not UTF-8 text"
    (copy,) = [o for o in first.outcomes if o.action == "unchanged"]
    assert copy.document_id == outcomes["Page 4"].document_id
    assert len(loci.library.documents(brain)) == 448
    # Links are recorded on both ends, across batches too.
    page_10 = loci.library.document(brain, outcomes["Page 10"].document_id or 0)
    page_260 = outcomes["Page 260"].document_id
    assert page_10.metadata["links"] == [page_260]
    assert page_10.id in loci.library.document(brain, page_260 or 0).metadata["linked_from"]
    again = loci.importing.run(brain, "notion", path)
    assert again.counts == {"add": 0, "update": 0, "unchanged": 449, "fail": 1, "skip": 0}
    # An edited page, in the second batch, updates its document in place.
    edited = loci.importing.run(
        brain, "notion", notion_export(tmp_path, _many_pages(450, edited=300), name="b.zip")
    )
    assert edited.counts["update"] == 1 and edited.counts["add"] == 0
    (updated,) = [o for o in edited.outcomes if o.action == "update"]
    assert (updated.name, updated.document_id) == ("Page 300", outcomes["Page 300"].document_id)
    assert len(loci.store.document_versions(brain.id, updated.document_id or 0)) == 1
    assert len(loci.library.documents(brain)) == 448
