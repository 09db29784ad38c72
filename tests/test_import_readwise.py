"""`loci import readwise`: Readwise's CSV export, a book or article a document whose
highlights are each a section headed by its location, so a search cites the book and the
place in it; its Markdown zip, a page a document. A CSV of another tool is refused whole, a
bad row fails alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.imports.items import ExportRefused
from loci.models import Brain, Document
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.importing import ImportReport
from tests.support.readwise_exports import COLUMNS, SAMPLE, readwise_csv, readwise_markdown

ARTICLE = "How I review pull requests"


def _import(loci: Loci, brain: Brain, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, "readwise", path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


def _books(loci: Loci, brain: Brain) -> dict[str, Document]:
    return {d.title or d.name: d for d in loci.library.documents(brain)}


def _cited(loci: Loci, brain: Brain, words: str) -> tuple[int, str]:
    hits = loci.searching.search(brain, SearchRequest(words, mode="text", limit=3))
    assert hits, f"nothing found for {words!r}"
    return hits[0].citation.document_id, hits[0].citation.heading_path[-1]


@pytest.mark.both_backends
def test_a_book_is_a_document_each_highlight_cited_at_its_location(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, readwise_csv(tmp_path / "readwise-data.csv"))
    assert (report.counts["add"], report.counts["fail"]) == (2, 0)
    books = _books(loci, brain)
    assert set(books) == {"Atomic Habits", ARTICLE}
    habits = books["Atomic Habits"]
    assert habits.origin == "readwise:asin:B07D23CFGR"
    assert set(habits.tags) == {"self-help", "habits"}
    facts = habits.metadata["import"]
    assert (facts["author"], facts["highlights"]) == ("James Clear", 3)
    assert facts["created"] == "2023-01-04T21:13:00+00:00"
    assert facts["updated"] == "2023-01-09T19:02:55+00:00"

    # The quoted two-line highlight, its note and its tags are one section at its location.
    assert _cited(loci, brain, "fall to the level of your systems") == (
        habits.id,
        "Highlight at Location 373",
    )
    assert _cited(loci, brain, "team retro chart") == (habits.id, "Highlight at Location 373")
    assert _cited(loci, brain, "obvious attractive satisfying") == (
        habits.id,
        "Highlight at page 54",
    )
    article = books[ARTICLE]
    assert article.origin == f"readwise:{ARTICLE} — Jane Doe"
    assert _cited(loci, brain, "delete half of both") == (article.id, "Highlight #2")
    text = loci.library.document_text(brain, habits.id) or ""
    assert "*tags: favorite, work · highlighted 2023-01-05*" in text


@pytest.mark.both_backends
def test_a_second_run_adds_nothing_and_a_new_highlight_updates_its_book(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    first = _import(loci, brain, readwise_csv(tmp_path / "a.csv"))
    ids = {o.name: o.document_id for o in first.outcomes}
    again = _import(loci, brain, readwise_csv(tmp_path / "a.csv"))
    assert again.counts == {"add": 0, "update": 0, "unchanged": 2, "fail": 0, "skip": 0}
    more = SAMPLE + [
        [
            "Every action you take is a vote for the type of person you wish to become.",
            "Atomic Habits",
            "James Clear",
            "B07D23CFGR",
            "",
            "yellow",
            "",
            "location",
            "512",
            "2023-02-01 08:00:00+00:00",
            "self-help, habits",
        ]
    ]
    report = _import(loci, brain, readwise_csv(tmp_path / "b.csv", more))
    assert (report.counts["update"], report.counts["unchanged"]) == (1, 1)
    assert [o.document_id for o in report.outcomes if o.action == "update"] == [
        ids["Atomic Habits"]
    ]
    assert _cited(loci, brain, "vote for the type of person") == (
        ids["Atomic Habits"],
        "Highlight at Location 512",
    )
    assert len(loci.library.documents(brain)) == 2


def test_a_dry_run_says_what_it_would_do_and_writes_nothing(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = loci.importing.run(brain, "readwise", readwise_csv(tmp_path / "r.csv"), dry_run=True)
    assert report.dry_run and report.counts["add"] == 2
    assert loci.library.documents(brain) == []


def test_a_csv_that_is_not_readwises_is_refused_whole(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    pocket = readwise_csv(
        tmp_path / "pocket.csv",
        [["https://example.org", "An article", "1700000000"]],
        columns=["url", "title", "time_added"],
    )
    with pytest.raises(ExportRefused, match="not Readwise's CSV export.*url, title"):
        loci.importing.run(brain, "readwise", pocket)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(",".join(COLUMNS).encode() + "\nCafé,Un livre\n".encode("latin-1"))
    with pytest.raises(ExportRefused, match="not UTF-8"):
        loci.importing.run(brain, "readwise", latin)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(ExportRefused, match="not Readwise's CSV export"):
        loci.importing.run(brain, "readwise", empty)
    assert loci.library.documents(brain) == []


def test_a_bad_row_fails_alone(loci: Loci, brain: Brain, tmp_path: Path) -> None:
    rows = [SAMPLE[0], ["Cut short", "Atomic Habits"], ["", "Atomic Habits"] + SAMPLE[0][2:]]
    report = _import(loci, brain, readwise_csv(tmp_path / "r.csv", rows))
    assert report.counts["add"] == 1
    assert {o.name: o.reason for o in report.outcomes if o.action == "fail"} == {
        "row 2": "2 of the 11 columns; left out",
        "row 3": "no highlight; left out",
    }


def test_a_url_column_is_the_articles_address(loci: Loci, brain: Brain, tmp_path: Path) -> None:
    url = "https://example.org/reviews"
    rows = [row + [url if row[1] == ARTICLE else ""] for row in SAMPLE]
    _import(loci, brain, readwise_csv(tmp_path / "u.csv", rows, columns=COLUMNS + ["URL"]))
    article = _books(loci, brain)[ARTICLE]
    assert article.source_url == url and article.metadata["import"]["url"] == url
    assert _books(loci, brain)["Atomic Habits"].source_url is None


def test_the_markdown_export_keeps_a_page_per_book(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, readwise_markdown(tmp_path / "readwise.zip"))
    assert report.counts["add"] == 2
    books = _books(loci, brain)
    assert books["Atomic Habits"].metadata["import"]["where"] == ["Readwise", "Books"]
    assert books["Atomic Habits"].origin == "readwise:Readwise/Books/Atomic Habits.md"
    document_id, section = _cited(loci, brain, "compound interest of self-improvement")
    assert (document_id, section) == (books["Atomic Habits"].id, "Highlights")
