"""Parsers: the right text in the right place, and a named, clear error for every bad input."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from loci.errors import BudgetExceeded, EncryptedDocument, NoParser, ParseError
from loci.ingest.encoding import decode_text
from loci.ingest.parsers import ParseBudgets, parse, supported_extensions
from loci.ingest.parsers.html import parse_html
from loci.models import Block, Brain, ParsedDocument
from loci.service import Loci
from tests.support import office_files, pdf_files, text_files

BUDGETS = ParseBudgets()


def kinds(doc: ParsedDocument, kind: str) -> list[Block]:
    return [b for b in doc.blocks if b.kind == kind]


def page_text(doc: ParsedDocument, page: int) -> str:
    return "\n".join(b.text for b in doc.blocks if b.location.page == page)


# --- registry ----------------------------------------------------------------------------------


def test_supported_extensions_cover_the_formats() -> None:
    assert {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx"} <= set(
        supported_extensions()
    )


def test_unknown_type_has_no_parser() -> None:
    with pytest.raises(NoParser, match="no parser for this type"):
        parse(b"8BPS\x00\x01 a Photoshop file", "drawing.psd", BUDGETS)


@pytest.mark.parametrize("name", ["Apache-2.0", "MPL-2.0", "CC0-1.0", "minutes 3.4", "plan-2.0"])
def test_a_name_ending_in_a_dot_and_digits_is_read_by_its_content(name: str) -> None:
    text = "Licensed under the Apache License, Version 2.0 — see § 4 “Redistribution”.\n"
    parsed = parse(text.encode(), name, BUDGETS)
    assert "Redistribution" in "\n".join(b.text for b in parsed.blocks)


def test_bytes_that_are_not_utf8_text_under_an_unknown_suffix_have_no_parser() -> None:
    with pytest.raises(NoParser, match="no parser for this type"):
        parse(b"\x89PNG not really an image", "picture.xyz", BUDGETS)
    with pytest.raises(NoParser, match="no parser for this type"):
        parse(b"plain words, then \x1b[31m a terminal's colours", "log.0", BUDGETS)


def test_empty_file_is_refused() -> None:
    with pytest.raises(ParseError, match="empty"):
        parse(b"", "empty.txt", BUDGETS)
    with pytest.raises(ParseError, match="empty"):
        parse(b"  \n\n ", "blank.md", BUDGETS)


def test_magic_bytes_win_over_a_lying_extension() -> None:
    doc = parse(pdf_files.two_page_pdf(), "report.txt", BUDGETS)
    assert "Zebras" in page_text(doc, 2)
    docx = parse(office_files.docx_with_structure(), "handbook.bin", BUDGETS)
    assert docx.title == "Team Handbook"
    page = parse(text_files.html_page().encode(), "saved.pdf", BUDGETS)
    assert page.title == "Lighthouse Keeping Explained"


def test_a_pdf_name_on_junk_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="not a PDF"):
        parse(b"this is plain text, not a pdf", "fake.pdf", BUDGETS)


def test_legacy_office_file_has_no_parser() -> None:
    ole2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600)
    with pytest.raises(NoParser, match=r"\.docx"):
        parse(ole2, "old.doc", BUDGETS)


def test_password_protected_office_file() -> None:
    ole2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600) + "EncryptedPackage".encode("utf-16-le")
    with pytest.raises(EncryptedDocument, match="password-protected"):
        parse(ole2, "secret.docx", BUDGETS)


# --- text and encodings ---------------------------------------------------------------------


def test_text_paragraphs_with_line_spans() -> None:
    data = b"First line\nstill first paragraph\n\n\n  Second paragraph  \n\nThird\n"
    doc = parse(data, "notes.txt", BUDGETS)
    assert [(b.text, b.location.line_start, b.location.line_end) for b in doc.blocks] == [
        ("First line\nstill first paragraph", 1, 2),
        ("  Second paragraph", 5, 5),
        ("Third", 7, 7),
    ]
    assert all(b.kind == "paragraph" and b.location.page is None for b in doc.blocks)


def test_windows_line_endings_keep_line_numbers() -> None:
    doc = parse(b"one\r\ntwo\r\n\r\nthree\r\n", "crlf.txt", BUDGETS)
    assert [(b.text, b.location.line_start, b.location.line_end) for b in doc.blocks] == [
        ("one\ntwo", 1, 2),
        ("three", 4, 4),
    ]


def test_cp1252_text_is_decoded() -> None:
    text = parse(text_files.cp1252_text(), "menu.txt", BUDGETS).text
    assert "Café résumé" in text and "naïve déjà vu" in text
    assert "“quoted”" in text and "€12" in text and "crème brûlée" in text


def test_latin1_text_is_decoded() -> None:
    text = parse(text_files.latin1_text(), "gruss.txt", BUDGETS).text
    assert "Grüße aus Köln" in text and "Straße ist schön" in text and "Ärger" in text


def test_utf16_with_bom_is_decoded() -> None:
    doc = parse(text_files.utf16_text(), "notes.txt", BUDGETS)
    assert doc.blocks[0].text == "UTF-16 notes: 日本語 and été."
    assert doc.blocks[1].text == "Second paragraph." and doc.blocks[1].location.line_start == 3


def test_utf8_bom_is_dropped() -> None:
    assert decode_text(b"\xef\xbb\xbfhello") == "hello"


def test_binary_junk_is_refused_as_binary() -> None:
    with pytest.raises(ParseError, match="looks like binary data, not text"):
        parse(text_files.binary_junk(), "junk.txt", BUDGETS)


def test_control_characters_without_nul_are_binary_too() -> None:
    junk = bytes(range(1, 9)) * 200 + b"some text"
    with pytest.raises(ParseError, match="binary"):
        decode_text(junk)


def test_twenty_megabyte_single_line() -> None:
    data = text_files.big_single_line()
    started = time.perf_counter()
    doc = parse(data, "one-line.txt", BUDGETS)
    assert time.perf_counter() - started < 5
    assert len(doc.blocks) == 1
    assert doc.blocks[0].location.line_start == doc.blocks[0].location.line_end == 1
    assert len(doc.blocks[0].text) == len(data.rstrip())


# --- markdown --------------------------------------------------------------------------------


def test_markdown_structure_and_frontmatter() -> None:
    doc = parse(text_files.MARKDOWN_WITH_FRONTMATTER.encode(), "garden.md", BUDGETS)
    assert doc.title == "Garden Notes"  # frontmatter wins over the first H1
    assert doc.metadata["tags"] == ["plants", "soil"]
    assert doc.metadata["date"] == "2024-05-01"  # dates stored as ISO strings
    headings = [(b.text, b.level, b.location.line_start) for b in kinds(doc, "heading")]
    assert headings == [
        ("Ignored H1 Because Frontmatter Wins", 1, 6),
        ("Setext Section", 2, 11),
        ("Deep ATX heading", 3, 27),
    ]
    (paragraph, *_rest) = kinds(doc, "paragraph")
    assert paragraph.text == "Intro paragraph about the garden.\nIt spans two lines."
    assert (paragraph.location.line_start, paragraph.location.line_end) == (
        8,
        9,
    )  # counted in the file
    (code,) = kinds(doc, "code")
    assert "def grow(seed):\n\n    return seed * 2" in code.text  # fenced code kept whole
    assert (code.location.line_start, code.location.line_end) == (17, 21)
    (listing,) = kinds(doc, "list")
    assert listing.text == "- compost weekly\n- water at dawn"
    (table,) = kinds(doc, "table")
    assert "basil" in table.text and "May" in table.text
    assert doc.blocks[-1].text == "Final words." and doc.blocks[-1].location.line_start == 29


def test_markdown_title_falls_back_to_first_h1() -> None:
    doc = parse(b"Intro line.\n\n# The Real Title\n\nBody.\n", "n.md", BUDGETS)
    assert doc.title == "The Real Title"
    assert doc.metadata == {}


def test_a_title_is_what_a_reader_sees_of_its_heading(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    logo = tmp_path / "README.md"
    logo.write_text("# ![libsodium](https://example.org/logo.png)\n\nA crypto library.\n")
    bare = tmp_path / "badge.md"
    bare.write_text("# ![](https://example.org/logo.png)\n\nA note under a bare logo.\n")
    marked = tmp_path / "guide.md"
    marked.write_text("# The **quick** [start](https://example.org) for `loci`\n\nSteps.\n")
    ids = [loci.library.add_file(brain, path).document.id for path in (logo, bare, marked)]
    loci.library.wait_for(brain, ids)
    titles = [loci.store.get_document(brain.id, i).title for i in ids]
    # no title at all under a bare logo: the Files list and `loci show` print the file name
    assert titles == ["libsodium", None, "The quick start for loci"]


def test_bad_frontmatter_is_a_warning_not_a_failure() -> None:
    data = b"---\ntitle: [unclosed\n  - : :\n---\n# Heading\n\nBody text.\n"
    doc = parse(data, "broken.md", BUDGETS)
    assert doc.title == "Heading"
    assert any("frontmatter" in w for w in doc.warnings)
    assert doc.blocks[-1].text == "Body text." and doc.blocks[-1].location.line_start == 7


@pytest.mark.attack
def test_frontmatter_alias_bomb_is_refused() -> None:
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = "a" if i == 1 else f"a{i - 1}"
        lines.append(f"a{i}: &a{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    lines += ["---", "Body."]
    doc = parse("\n".join(lines).encode(), "bomb.md", BUDGETS)
    assert doc.metadata == {}
    assert any("too many" in w for w in doc.warnings)
    assert doc.blocks[0].text == "Body."


def test_markdown_html_block_loses_its_markup() -> None:
    doc = parse(b"<div class='x'>Kept <b>words</b><script>evil()</script></div>\n", "h.md", BUDGETS)
    assert doc.blocks[0].text.split() == ["Kept", "words"]


# --- HTML ------------------------------------------------------------------------------------


def test_html_main_content_without_boilerplate() -> None:
    doc = parse_html(text_files.html_page(), url="https://blog.example/lighthouse")
    text = doc.text
    assert doc.title == "Lighthouse Keeping Explained"  # og:title
    assert "Lighthouse keepers log paragraph 0." in text
    assert "Keepers retire after twenty winters." in text
    for boilerplate in (
        "navigation",
        "footer",
        "Copyright",
        "SECRET_TRACKER_TOKEN",
        "INJECTED_SCRIPT_TEXT",
        "color: red",
    ):
        assert boilerplate not in text, boilerplate
    assert [(b.text, b.level) for b in kinds(doc, "heading")] == [
        ("Lighthouse Keeping Explained", 1),
        ("Daily duties", 2),
        ("Supply schedule", 2),
    ]
    (listing,) = kinds(doc, "list")
    assert "Polish the Fresnel lens daily." in listing.text
    (table,) = kinds(doc, "table")
    assert "Lamp oil | Monthly" in table.text and "Bread flour | Weekly" in table.text


def test_no_markup_survives_into_blocks() -> None:
    page = (
        "<html><head><title>Tags &amp; Things</title></head><body><nav>Menu</nav><article>"
        "<h1>Escaped &lt;b&gt;bold&lt;/b&gt; heading</h1>"
        "<p>Text with &lt;img src=x onerror=alert(1)&gt; and <i>real</i> markup, "
        "<!-- a comment --> plus a line<br>break.</p></article></body></html>"
    )
    doc = parse_html(page)
    assert doc.title == "Tags & Things"
    assert doc.blocks, "page text should not be lost"
    for block in doc.blocks:
        assert "<" not in block.text and ">" not in block.text, block.text
        assert "comment" not in block.text
    assert "line break." in doc.text and "real markup" in doc.text
    assert "Menu" not in doc.text


@pytest.mark.attack
def test_hostile_markup_is_stripped_in_linear_time() -> None:
    page = "<html><body><p>" + "<!--" * 20_000 + "&lt;!--" * 20_000 + "</p></body></html>"
    started = time.perf_counter()
    doc = parse(page.encode(), "hostile.html", BUDGETS)
    assert time.perf_counter() - started < 10
    assert "<" not in doc.text


def test_html_file_with_declared_charset() -> None:
    page = '<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head>'
    page += "<body><p>Cr\xe8me br\xfbl\xe9e for \u20ac5 at the caf\xe9.</p></body></html>"
    doc = parse(page.encode("cp1252"), "menu.html", BUDGETS)
    assert doc.title == "Café"
    assert "Crème brûlée for €5" in doc.text


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_text_lands_on_its_page() -> None:
    doc = parse(pdf_files.two_page_pdf(), "report.pdf", BUDGETS)
    assert doc.title == "Quarterly Fruit Report"
    assert doc.metadata["pages"] == 2
    one, two = page_text(doc, 1), page_text(doc, 2)
    assert "Alpha report opens on page one." in one and "apples and orchards" in one
    assert "Zebras graze near the river" in two
    assert "Zebras" not in one and "apples" not in two
    # paragraphs split at the blank line, with line spans inside the page
    first = doc.blocks[0]
    assert first.text.splitlines() == [
        "Alpha report opens on page one.",
        "The first paragraph talks about apples and orchards.",
    ]
    assert (first.location.page, first.location.line_start, first.location.line_end) == (1, 1, 2)
    assert (doc.blocks[1].location.page, doc.blocks[1].location.line_start) == (1, 3)
    assert (doc.blocks[2].location.page, doc.blocks[2].location.line_start) == (2, 1)


def test_pdf_two_columns_read_left_then_right() -> None:
    doc = parse(pdf_files.two_column_pdf(), "study.pdf", BUDGETS)
    text = doc.text
    order = [text.index(f"Left column line {i:02d}") for i in range(1, 13)]
    order += [text.index(f"Right column line {i:02d}") for i in range(1, 13)]
    assert order == sorted(order), "columns are interleaved"
    assert text.index("Two Column Study of Rivers") < order[0]
    assert text.index("Footer note spans") > order[-1]
    # no line mixes the two columns
    assert not any("otters" in line and "herons" in line for line in text.splitlines())


def test_pdf_paper_layout_reads_abstract_then_each_column() -> None:
    data, left, right = pdf_files.two_column_paper_pdf()
    doc = parse(data, "paper.pdf", BUDGETS)
    assert doc.title == "A Study of Things"  # the big line on page one; no metadata title
    abstract = doc.blocks[1]
    assert abstract.text.startswith("Abstract.") and abstract.location.line_start == 2
    assert doc.blocks[2].text.splitlines() == left
    assert doc.blocks[3].text.splitlines() == right


def test_pdf_table_of_short_cells_stays_row_by_row() -> None:
    rows = [("Name", "Phone"), ("Ada", "555-0101"), ("Alan", "555-0102"), ("Grace", "555-0103")]
    items = []
    for i, (name, phone) in enumerate(rows):
        items += [
            pdf_files.PdfText(72, 700 - i * 14, name),
            pdf_files.PdfText(300, 700 - i * 14, phone),
        ]
    doc = parse(pdf_files.make_pdf([items]), "phones.pdf", BUDGETS)
    assert doc.blocks[0].text.splitlines() == [f"{a} {b}" for a, b in rows]


def test_pdf_headings_from_font_size() -> None:
    doc = parse(pdf_files.headings_pdf(), "manual.pdf", BUDGETS)
    assert doc.title == "Install Manual"
    assert [(b.text, b.level) for b in kinds(doc, "heading")] == [
        ("Installation Guide", 1),
        ("Requirements", 2),
        ("Running the installer", 2),
    ]
    assert all(b.location.page == 1 for b in doc.blocks)


def test_pdf_running_headers_and_page_numbers_are_dropped() -> None:
    doc = parse(pdf_files.pdf_with_running_headers(), "memo.pdf", BUDGETS)
    assert "ACME Corp" not in doc.text and "Page 2 of 4" not in doc.text
    assert {b.location.page for b in doc.blocks} == {1, 2, 3, 4}
    assert doc.blocks[0].text.startswith(text_files.prose(80, seed=50)[:40])
    assert doc.blocks[0].location.line_start == 2  # the dropped header was still line 1 of the page


def test_encrypted_pdf() -> None:
    with pytest.raises(EncryptedDocument, match="password-protected PDF"):
        parse(pdf_files.encrypted_pdf(), "locked.pdf", BUDGETS)


def test_truncated_pdf() -> None:
    with pytest.raises(ParseError, match="truncated PDF"):
        parse(pdf_files.truncated_pdf(), "cut.pdf", BUDGETS)


def test_corrupt_pdf() -> None:
    junk = b"%PDF-1.7\n" + bytes(range(256)) * 8 + b"\n%%EOF\n"
    with pytest.raises(ParseError, match="corrupt PDF"):
        parse(junk, "broken.pdf", BUDGETS)


@pytest.mark.attack
def test_pdf_page_budget() -> None:
    with pytest.raises(BudgetExceeded, match="3 pages, over the 2-page budget"):
        parse(pdf_files.text_pdf(3), "long.pdf", ParseBudgets(max_pdf_pages=2))


@pytest.mark.attack
def test_pdf_time_budget() -> None:
    with pytest.raises(BudgetExceeded, match="took longer than"):
        parse(pdf_files.text_pdf(3), "slow.pdf", ParseBudgets(timeout_s=0))


# --- DOCX ------------------------------------------------------------------------------------


def test_docx_headings_lists_and_tables() -> None:
    doc = parse(office_files.docx_with_structure(), "handbook.docx", BUDGETS)
    assert doc.title == "Team Handbook"
    assert [(b.text, b.level) for b in kinds(doc, "heading")] == [
        ("Handbook", 1),
        ("Onboarding", 2),
        ("Contacts", 2),
    ]
    (listing,) = kinds(doc, "list")
    assert listing.text.splitlines() == [
        "• Get a laptop from the front desk.",
        "• Install the password manager.",
        "1. Book a lunch with your buddy.",
    ]
    (table,) = kinds(doc, "table")
    assert table.text.splitlines() == [
        "Role | Person",
        "Payroll | Ada Lovelace",
        "IT desk | Alan Turing",
    ]
    # body order is kept: the table sits under "Contacts", before the closing paragraph
    order = [b.text.splitlines()[0] for b in doc.blocks]
    assert (
        order.index("Contacts")
        < order.index("Role | Person")
        < order.index("Questions go to the shared inbox.")
    )
    line_starts = [b.location.line_start or 0 for b in doc.blocks]
    assert line_starts == sorted(line_starts)


@pytest.mark.attack
def test_docx_zip_bomb_is_stopped_before_opening() -> None:
    bomb = office_files.zip_bomb_docx()
    with pytest.raises(BudgetExceeded, match="decompresses past the compression-ratio budget"):
        parse(bomb, "bomb.docx", BUDGETS)
    with pytest.raises(BudgetExceeded, match="decompresses past the 10 MB budget"):
        parse(bomb, "bomb.docx", ParseBudgets(max_decompressed_bytes=10 * 1024 * 1024))


@pytest.mark.attack
def test_docx_with_doctype_is_refused() -> None:
    with pytest.raises(ParseError, match="DOCTYPE"):
        parse(office_files.docx_with_doctype(), "entities.docx", BUDGETS)


def test_truncated_docx() -> None:
    data = office_files.docx_with_structure()
    with pytest.raises(ParseError, match="corrupt DOCX"):
        parse(data[: len(data) // 2], "cut.docx", BUDGETS)


def test_zip_that_is_not_a_word_document() -> None:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/readme.txt", "hello")
    with pytest.raises(ParseError, match="corrupt DOCX"):
        parse(buf.getvalue(), "odd.docx", BUDGETS)
