"""More formats: slides, spreadsheets, e-books, e-mail, OpenDocument, RTF and source code.

Each format is parsed from a fixture the tests make (tests/support/*_files.py) and checked for its
text, headings and locations; then added through the real service and found by search with the right
location. Bad packages (corrupt, bombs, a shared-strings table past its budget) fail alone.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from loci.errors import BudgetExceeded, NoParser, ParseError
from loci.ingest.parsers import ParseBudgets, parse, supported_extensions
from loci.models import Block, Hit, ParsedDocument
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support import mail_files, office_files, text_files

BUDGETS = ParseBudgets()
MB = 1024 * 1024


def kinds(doc: ParsedDocument, kind: str) -> list[Block]:
    return [b for b in doc.blocks if b.kind == kind]


def block_with(doc: ParsedDocument, text: str) -> Block:
    found = [b for b in doc.blocks if text in b.text]
    assert found, f"no block contains {text!r}"
    return found[0]


# --- registry and sniffing -----------------------------------------------------------------


def test_new_extensions_are_supported() -> None:
    assert {
        ".pptx",
        ".xlsx",
        ".csv",
        ".tsv",
        ".epub",
        ".eml",
        ".mbox",
        ".odt",
        ".rtf",
        ".py",
        ".ts",
        ".go",
        ".sql",
        ".yaml",
        ".json",
    } <= set(supported_extensions())


@pytest.mark.parametrize(
    ("maker", "expected_title"),
    [
        (office_files.pptx_deck, "Lighthouse Quarterly"),
        (office_files.xlsx_workbook, "Lighthouse Staff"),
        (office_files.epub_book, "The Keeper's Year"),
        (office_files.odt_document, "Allotment Notebook"),
        (office_files.docx_with_structure, "Team Handbook"),
    ],
)
def test_zip_formats_are_told_apart_by_their_members(maker, expected_title) -> None:  # type: ignore[no-untyped-def]
    # a misleading name does not matter: the members say what the package is
    assert parse(maker(), "download.bin", BUDGETS).title == expected_title


def test_rtf_is_sniffed_by_its_header() -> None:
    assert parse(office_files.RTF_DOCUMENT, "notes.txt", BUDGETS).title == "Kitchen Manual"


def test_a_zip_of_something_else_is_still_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("photos/cat.jpg", b"\xff\xd8 not really")
    with pytest.raises(NoParser, match="zip archive that is not"):
        parse(buf.getvalue(), "holiday.zip", BUDGETS)
    with pytest.raises(NoParser, match="zip archive that is not"):
        parse(buf.getvalue(), "slides.pptx", BUDGETS)


def test_package_extension_on_a_non_zip() -> None:
    with pytest.raises(ParseError, match="not a PPTX"):
        parse(b"just some text", "deck.pptx", BUDGETS)
    with pytest.raises(ParseError, match="not an RTF"):
        parse(b"just some text", "letter.rtf", BUDGETS)


# --- PPTX ------------------------------------------------------------------------------------


def test_pptx_slides_in_presentation_order_with_titles_tables_and_notes() -> None:
    doc = parse(office_files.pptx_deck(), "review.pptx", BUDGETS)
    assert doc.title == "Lighthouse Quarterly"
    assert doc.metadata["slides"] == 3 and doc.metadata["author"] == "Grace Darling"
    titles = [(b.text, b.location.page) for b in kinds(doc, "heading") if b.level == 1]
    # slide3.xml is listed second in the presentation, so it is slide 2
    assert titles == [("Quarterly Review", 1), ("Revenue by Region", 2), ("Next Steps", 3)]
    # the title is read first even when another shape comes before it in the slide
    first = [b.text for b in doc.blocks if b.location.page == 1]
    assert first == ["Quarterly Review", "Migration programme for the lighthouse fleet"]
    table = block_with(doc, "Region | Revenue")
    assert table.kind == "table" and table.location.page == 2
    assert table.text.splitlines() == ["Region | Revenue", "North | 120 walrus coins", "South | 95"]
    notes = block_with(doc, "otter partnership")
    assert notes.location.page == 2
    assert [b.text for b in doc.blocks if b.location.page == 2 and b.kind == "heading"] == [
        "Revenue by Region",
        "Speaker notes",
    ]
    bullets = block_with(doc, "Hire two keepers")
    assert bullets.kind == "list" and bullets.location.page == 3
    assert bullets.text.splitlines() == [
        "• Hire two keepers",
        "  • one for the night shift",
        "• Paint the tower",
    ]
    assert (bullets.location.line_start, bullets.location.line_end) == (2, 4)
    assert "1" not in [b.text for b in doc.blocks]  # the notes page's slide-number placeholder


def test_corrupt_pptx_fails_with_its_reason() -> None:
    with pytest.raises(ParseError, match=r"corrupt PPTX: part ppt/slides/slide3.xml is not well"):
        parse(office_files.pptx_deck(broken_slide=True), "broken.pptx", BUDGETS)
    data = office_files.pptx_deck()
    with pytest.raises(ParseError, match="corrupt PPTX"):
        parse(data[: len(data) // 2], "cut.pptx", BUDGETS)  # still recognised as a PPTX


@pytest.mark.attack
def test_pptx_time_budget() -> None:
    with pytest.raises(BudgetExceeded, match="took longer than"):
        parse(office_files.pptx_deck(), "slow.pptx", ParseBudgets(timeout_s=0))


# --- XLSX and CSV ----------------------------------------------------------------------------


def test_xlsx_sheets_as_headings_rows_as_lines_header_in_every_block() -> None:
    doc = parse(office_files.xlsx_workbook(), "staff.xlsx", BUDGETS)
    assert doc.title == "Lighthouse Staff"
    assert doc.metadata["sheets"] == ["Staff", "Budget"]
    assert [b.text for b in kinds(doc, "heading")] == ["Staff", "Budget"]
    staff = [b for b in kinds(doc, "table") if b.text.startswith("Name | Role")]
    assert len(staff) > 3  # 60 rows are split into several blocks ...
    for block in staff:  # ... and each one opens with the header row
        assert block.text.splitlines()[0] == "Name | Role | City | Started"
        assert block.location.line_end is not None and block.location.line_start is not None
        assert block.location.line_end - block.location.line_start + 2 == len(
            block.text.splitlines()
        )
    assert (staff[0].location.line_start, staff[-1].location.line_end) == (2, 61)
    ada = block_with(doc, "Ada Lovelace")
    assert ada.location.line_start is not None and ada.location.line_end is not None
    assert ada.location.line_start <= 38 <= ada.location.line_end  # row 38 of the sheet
    assert "Ada Lovelace | analyst of engines | London | 1953-07-01" in ada.text.splitlines()
    budget = block_with(doc, "Lamp oil")
    assert budget.text.splitlines() == [
        "Item | Cost",
        "Lamp oil | 1250",
        "Bread flour | 12.5",
        "Ropes | TRUE",
    ]
    assert (budget.location.line_start, budget.location.line_end) == (2, 4)


@pytest.mark.attack
def test_xlsx_bomb_is_stopped_before_inflating() -> None:
    with pytest.raises(BudgetExceeded, match="XLSX decompresses past the compression-ratio"):
        parse(office_files.xlsx_bomb(), "bomb.xlsx", BUDGETS)


@pytest.mark.attack
def test_xlsx_shared_strings_past_the_part_budget() -> None:
    data = office_files.xlsx_huge_shared_strings(3 * MB)
    with pytest.raises(BudgetExceeded, match=r"sharedStrings.xml is 3 MB .* per-part budget"):
        parse(data, "huge.xlsx", ParseBudgets(max_part_bytes=2 * MB))
    assert "Keeper" in parse(data, "huge.xlsx", BUDGETS).text  # fine under the default budget


@pytest.mark.attack
def test_xlsx_part_with_doctype_is_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE sst [<!ENTITY a "aaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><sst><si><t>&b;</t></si></sst>'
    )
    with pytest.raises(ParseError, match="DOCTYPE"):
        parse(office_files.xlsx_workbook(shared_strings_xml=bomb), "entities.xlsx", BUDGETS)


def test_csv_dialect_encoding_and_line_spans() -> None:
    doc = parse(text_files.csv_table(), "guests.csv", BUDGETS)
    assert doc.metadata["delimiter"] == ";"
    assert doc.metadata["columns"] == ["Name", "Café", "Notes"]
    tables = kinds(doc, "table")
    assert len(tables) > 1
    assert all(t.text.splitlines()[0] == "Name | Café | Notes" for t in tables)
    ada = block_with(doc, "Ada Lovelace")
    assert 'Ada Lovelace | thé glacé | asked about "engines" on two lines' in ada.text
    assert ada.location.line_start is not None and ada.location.line_end is not None
    assert (
        ada.location.line_start <= 26 and ada.location.line_end >= 27
    )  # a quoted field spans lines 26-27
    assert "crème brûlée" in tables[0].text  # cp1252 detected


def test_tsv_and_comma_csv() -> None:
    tsv = parse(text_files.csv_table("\t", "utf-8"), "guests.tsv", BUDGETS)
    assert tsv.metadata["delimiter"] == "\t"
    assert kinds(tsv, "table")[0].text.startswith("Name | Café | Notes\nGuest 01")
    comma = parse(b"city,keepers\nAberdeen,4\nWick,2\n", "towns.csv", BUDGETS)
    assert comma.blocks[0].text == "city | keepers\nAberdeen | 4\nWick | 2"
    assert (comma.blocks[0].location.line_start, comma.blocks[0].location.line_end) == (2, 3)


@pytest.mark.attack
def test_csv_huge_fields_are_bounded() -> None:
    long_field = b"name,story\nAda," + b"word " * 3000 + b"\n"
    doc = parse(long_field, "long.csv", BUDGETS)
    assert any("cut short" in w for w in doc.warnings)
    assert len(doc.blocks[0].text) < 2100
    huge_field = b'name,story\nAda,"' + b"x" * 200_000 + b'"\n'
    with pytest.raises(ParseError, match="field longer than"):
        parse(huge_field, "huge.csv", BUDGETS)


# --- EPUB, ODT, RTF --------------------------------------------------------------------------


def test_epub_chapters_in_spine_order_with_metadata() -> None:
    doc = parse(office_files.epub_book(), "keeper.epub", BUDGETS)
    assert doc.title == "The Keeper's Year"
    assert doc.metadata["author"] == "Grace Darling, Thomas Stevenson"
    assert doc.metadata["language"] == "en"
    chapters = [b.text for b in kinds(doc, "heading") if b.level == 1]
    assert chapters == ["I. Spring Tides", "II. Winter Storms"]  # spine order, cover skipped
    assert [b.text for b in kinds(doc, "heading") if b.level > 1] == ["Provisions"]
    assert block_with(doc, "Lamp oil").text.splitlines() == [
        "- Lamp oil",
        "- Ship’s biscuit",
        "  - two barrels",
    ]
    assert block_with(doc, "Month | Gales").kind == "table"
    text = doc.text
    assert "seals return to the skerries" in text and "&amp;" not in text
    assert "SECRET_SCRIPT" not in text and "color: red" not in text
    assert "<" not in text  # escaped markup does not come back as tags
    order = [b.text for b in doc.blocks]
    assert order.index("II. Winter Storms") < order.index(
        "Storm petrels shelter under the gallery during the January gales."
    )


def test_odt_headings_lists_and_tables() -> None:
    doc = parse(office_files.odt_document(), "garden.odt", BUDGETS)
    assert doc.title == "Allotment Notebook"
    assert doc.metadata["author"] == "Percy Thrower"
    assert [(b.text, b.level) for b in kinds(doc, "heading")] == [
        ("Garden Plan", 1),
        ("Tasks", 2),
        ("Seeds", 2),
    ]
    assert block_with(doc, "broad beans").text == "Plant the broad beans in March."
    assert "FOOTNOTE_TEXT" not in doc.text
    assert block_with(doc, "Dig the beds").text.splitlines() == [
        "1. Dig the beds",
        "  • north bed first",
        "2. Spread compost",
    ]
    table = block_with(doc, "Parsnips")
    assert table.kind == "table" and table.text == "Crop | Month\nParsnips | April"
    starts = [b.location.line_start or 0 for b in doc.blocks]
    assert starts == sorted(starts)


def test_rtf_text_and_structure() -> None:
    doc = parse(office_files.RTF_DOCUMENT, "kitchen.rtf", BUDGETS)
    assert doc.title == "Kitchen Manual" and doc.metadata["author"] == "Mrs Beeton"
    assert [(b.text, b.level) for b in kinds(doc, "heading")] == [
        ("Kitchen Rules", 1),
        ("Cleaning", 2),
    ]
    assert block_with(doc, "café").text == "The café opens at seven; coffee costs €3."
    assert block_with(doc, "copper").text.splitlines() == [
        "• Scrub the copper pans",
        "• Oil the chopping boards",
    ]
    assert block_with(doc, "Descale").text == "Day | Task\nMonday | Descale the kettle"
    assert doc.blocks[-1].text == "After the table comes a closing line."
    for junk in ("Helvetica", "Symbol", "Riched20", "89504e47", "heading 1"):
        assert junk not in doc.text


@pytest.mark.attack
def test_rtf_time_budget_and_deep_nesting() -> None:
    with pytest.raises(BudgetExceeded, match="took longer than"):
        parse(b"{\\rtf1 " + b"\\b word " * 30_000 + b"}", "slow.rtf", ParseBudgets(timeout_s=0))
    with pytest.raises(ParseError, match="nests groups deeper"):
        parse(b"{\\rtf1 " + b"{" * 20_000 + b"}", "deep.rtf", BUDGETS)


# --- source code ----------------------------------------------------------------------------


def test_code_files_keep_lines_and_note_their_language() -> None:
    source = b"import os\n\n\ndef harbour_tide(level):\n    return level * 2\n\nX = 1\n"
    doc = parse(source, "tides.py", BUDGETS)
    assert doc.metadata["language"] == "python"
    assert all(b.kind == "code" for b in doc.blocks)
    assert [(b.location.line_start, b.location.line_end) for b in doc.blocks] == [
        (1, 1),
        (4, 5),
        (7, 7),
    ]
    assert doc.blocks[1].text == "def harbour_tide(level):\n    return level * 2"
    for name, language in [
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("app.ts", "typescript"),
        ("query.sql", "sql"),
        ("config.yaml", "yaml"),
        ("pyproject.toml", "toml"),
        ("data.json", "json"),
        ("Dockerfile", "dockerfile"),
        ("build.sh", "shell"),
    ]:
        assert parse(b"x = 1\n", name, BUDGETS).metadata["language"] == language, name
    # an unknown suffix does not decide: its text is read as text, with no language
    assert "language" not in parse(b"x = 1\n", "mystery.xyz", BUDGETS).metadata
    with pytest.raises(NoParser):
        parse(b"x = 1\n\x00\x01", "mystery.xyz", BUDGETS)
    with pytest.raises(ParseError, match="binary"):
        parse(text_files.binary_junk(), "blob.js", BUDGETS)


# --- e-mail ----------------------------------------------------------------------------------


def test_eml_headers_body_and_attachments() -> None:
    attachment = ("harbour-notes.md", b"# Harbour\n\nThe pilot boat moors at berth nine.\n")
    data = mail_files.eml_message((*attachment, "text/markdown"))
    doc = parse(data, "rescue.eml", BUDGETS)
    assert doc.title == "Rescue at Big Harcar — report"  # RFC 2047 subject decoded
    assert doc.metadata["from"] == "Grace Darling <grace@example.org>"
    assert doc.metadata["date"].startswith("1838-09-07T06:30:00")
    headers = doc.blocks[0].text.splitlines()
    assert headers[0] == "From: Grace Darling <grace@example.org>"
    assert headers[-1] == "Subject: Rescue at Big Harcar — report"
    assert "Nine survivors were brought to the lighthouse." in doc.text
    [carried] = doc.attachments
    assert (carried.name, carried.data, carried.mime_type) == (*attachment, "text/markdown")
    assert "pilot boat" not in doc.text  # the attachment is a document of its own


def test_plain_eml_body_keeps_its_file_lines() -> None:
    data = mail_files.eml_message()
    doc = parse(data, "rescue.eml", BUDGETS)
    lines = data.decode().splitlines()
    body = block_with(doc, "Forfarshire")
    assert body.location.line_start is not None
    assert lines[body.location.line_start - 1] == "We rowed out to the Forfarshire wreck at dawn."
    assert doc.attachments == ()


def test_html_only_eml_is_converted() -> None:
    from email.message import EmailMessage

    message = EmailMessage()
    message["Subject"] = "Newsletter"
    message["From"] = "news@example.org"
    message.set_content(
        "<html><body><p>The <b>foghorn</b> sounds twice a minute.</p>"
        "<script>STEAL()</script></body></html>",
        subtype="html",
    )
    doc = parse(message.as_bytes(), "news.eml", BUDGETS)
    assert "The foghorn sounds twice a minute." in doc.text
    assert "STEAL" not in doc.text and "<b>" not in doc.text


def test_mbox_messages_are_sections_with_file_lines() -> None:
    data = mail_files.mbox_mailbox()
    doc = parse(data, "archive.mbox", BUDGETS)
    assert doc.metadata["messages"] == 2
    sections = kinds(doc, "heading")
    assert [b.text.split(" — ")[0] for b in sections] == [
        "Notes on the engine",
        "Rescue at Big Harcar",
    ]
    lines = data.decode().splitlines()
    for heading in sections:
        assert heading.location.line_start is not None
        assert lines[heading.location.line_start - 1].startswith("From ")
    engine = block_with(doc, "analytical engine")
    assert engine.location.line_start is not None
    assert (
        lines[engine.location.line_start - 1] == "The analytical engine weaves algebraic patterns."
    )
    assert block_with(doc, "Jacquard").text == "From the looms of Jacquard, as I said."
    assert [a.name for a in doc.attachments] == ["survivors.txt"]


# --- through the service ---------------------------------------------------------------------


def find(loci: Loci, query: str, name: str) -> Hit:
    hits = loci.searching.search(loci.brain(), SearchRequest(query, limit=10))
    for hit in hits:
        if hit.citation.name == name:
            return hit
    raise AssertionError(f"{name} not found for {query!r}: {[h.citation.name for h in hits]}")


def test_every_format_is_searchable_with_its_location(loci: Loci) -> None:
    brain = loci.brain()
    files = {
        "review.pptx": office_files.pptx_deck(),
        "staff.xlsx": office_files.xlsx_workbook(),
        "guests.csv": text_files.csv_table(),
        "keeper.epub": office_files.epub_book(),
        "garden.odt": office_files.odt_document(),
        "kitchen.rtf": office_files.RTF_DOCUMENT,
        "tides.py": b"import os\n\n\ndef harbour_tide_tables(level):\n    return level * 2\n",
        "archive.mbox": mail_files.mbox_mailbox(),
    }
    ids = [loci.library.add_bytes(brain, name, data).document.id for name, data in files.items()]
    for document in loci.library.wait_for(brain, ids):
        assert document.status == "ready", (document.name, document.status_reason)

    slide = find(loci, "otter partnership north figures", "review.pptx")
    assert slide.citation.location.page == 2
    assert slide.citation.heading_path[0] == "Revenue by Region"

    row = find(loci, "Ada Lovelace analyst of engines", "staff.xlsx")
    assert row.citation.heading_path == ("Staff",)
    assert (
        row.citation.location.line_start is not None and row.citation.location.line_end is not None
    )
    assert row.citation.location.line_start <= 38 <= row.citation.location.line_end
    assert row.text.startswith("Name | Role | City | Started")

    guest = find(loci, "thé glacé engines", "guests.csv")
    assert (
        guest.citation.location.line_start is not None and guest.citation.location.line_start <= 26
    )
    assert guest.text.startswith("Name | Café | Notes")

    chapter = find(loci, "storm petrels shelter under the gallery", "keeper.epub")
    assert chapter.citation.heading_path[0] == "II. Winter Storms"
    assert chapter.citation.title == "The Keeper's Year"

    seeds = find(loci, "when to sow parsnips", "garden.odt")
    assert seeds.citation.heading_path[-1] == "Seeds"

    kettle = find(loci, "descale the kettle on monday", "kitchen.rtf")
    assert "Descale the kettle" in kettle.text

    code = find(loci, "harbour_tide_tables", "tides.py")
    assert (
        code.citation.location.line_start is not None
        and code.citation.location.line_end is not None
    )
    assert (
        code.citation.location.line_start <= 4 and code.citation.location.line_end == 5
    )  # the def's lines
    source = loci.library.document(brain, code.citation.document_id)
    assert source.metadata["extracted"]["language"] == "python"

    mail = find(loci, "analytical engine weaves algebraic patterns", "archive.mbox")
    assert mail.citation.heading_path[0].startswith("Notes on the engine — ")
    assert (mail.citation.location.line_start, mail.citation.location.line_end) == (
        1,
        9,
    )  # the first message


def test_eml_attachments_become_linked_documents(loci: Loci) -> None:
    brain = loci.brain()
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Grace Darling <grace@example.org>"
    message["To"] = "harbour@example.org"
    message["Subject"] = "Berth allocations"
    message.set_content("Please find the berth list attached; the ferry keeps berth two.\n")
    message.add_attachment(
        b"# Berths\n\nThe pilot boat moors at berth nine, beside the lifeboat slip.\n",
        maintype="text",
        subtype="markdown",
        filename="berths.md",
    )
    message.add_attachment(
        b"%PDF-1.4 this is not really a PDF",
        maintype="application",
        subtype="pdf",
        filename="broken.pdf",
    )
    parent_id = loci.library.add_bytes(brain, "berths.eml", message.as_bytes()).document.id
    [parent] = loci.library.wait_for(brain, [parent_id])  # waits for the attachments too
    assert parent.status == "ready", parent.status_reason
    links = {link["name"]: link["id"] for link in parent.metadata["attachments"]}
    assert set(links) == {"berths.md", "broken.pdf"}

    child = loci.library.document(brain, links["berths.md"])
    assert child.status == "ready" and child.metadata["attached_to"] == parent_id
    broken = loci.library.document(brain, links["broken.pdf"])
    assert broken.status == "failed" and broken.status_reason  # fails alone
    assert broken.metadata["attached_to"] == parent_id

    assert (
        find(loci, "pilot boat moors at berth nine", "berths.md").citation.document_id
        == (links["berths.md"])
    )
    body = find(loci, "the ferry keeps berth two", "berths.eml")
    assert body.citation.title == "Berth allocations"

    # reprocessing the message links the same attachments again, no duplicates
    loci.library.reprocess(brain, parent_id)
    [again] = loci.library.wait_for(brain, [parent_id])
    assert {link["id"] for link in again.metadata["attachments"]} == set(links.values())
    assert len(loci.library.documents(brain)) == 3


def test_bad_packages_fail_alone_in_a_batch(loci: Loci) -> None:
    brain = loci.brain()
    files = {
        "notes.md": b"# Notes\n\nThe lighthouse keeper logs the weather every morning.\n",
        "corrupt.pptx": office_files.pptx_deck(broken_slide=True),
        "bomb.xlsx": office_files.xlsx_bomb(),
        # the default budget is 64 MB
        "huge-strings.xlsx": office_files.xlsx_huge_shared_strings(65 * MB),
        "deck.pptx": office_files.pptx_deck(),
        "staff.xlsx": office_files.xlsx_workbook(),
    }
    ids = {
        name: loci.library.add_bytes(brain, name, data).document.id for name, data in files.items()
    }
    documents = {d.name: d for d in loci.library.wait_for(brain, list(ids.values()))}

    def reason(name: str) -> str:
        assert documents[name].status == "failed", name
        return documents[name].status_reason or ""

    assert "corrupt PPTX" in reason("corrupt.pptx") and "slide3.xml" in reason("corrupt.pptx")
    assert "compression-ratio budget" in reason("bomb.xlsx")
    assert "sharedStrings.xml" in reason("huge-strings.xlsx")
    assert "per-part budget" in reason("huge-strings.xlsx")
    for name in ("notes.md", "deck.pptx", "staff.xlsx"):
        assert documents[name].status == "ready", documents[name].status_reason
    assert find(loci, "Ada Lovelace analyst of engines", "staff.xlsx")
