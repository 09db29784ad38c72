"""Chunking: sections never mix, no chunk passes the token limit, every chunk knows its place."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from loci.errors import InvalidInput
from loci.ingest.chunking import ChunkingResult, chunk_document
from loci.ingest.parsers import ParseBudgets, parse
from loci.models import Block, Location, ParsedDocument
from tests.support import pdf_files, text_files
from tests.support.reference_tokenizer import plain_count, shipped_tokenizer

if TYPE_CHECKING:
    from loci.embed.local import LocalEmbedder


def words(text: str) -> int:
    return len(text.split())


def check_invariants(
    doc: ParsedDocument, result: ChunkingResult, count: Callable[[str], int], max_tokens: int
) -> None:
    text = doc.text
    for index, chunk in enumerate(result.chunks):
        assert chunk.index == index
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text == chunk.text.strip() and chunk.text
        assert count(chunk.text) <= max_tokens, (count(chunk.text), chunk.text[:80])
        assert chunk.token_count == count(chunk.text)
        assert chunk.content_hash == hashlib.sha256(chunk.text.encode()).hexdigest()
        if chunk.location.line_start is not None:
            assert (
                chunk.location.line_end is not None
                and chunk.location.line_start <= chunk.location.line_end
            )


def md(source: str) -> ParsedDocument:
    return parse(source.encode(), "doc.md", ParseBudgets())


def covered_words(doc: ParsedDocument, result: ChunkingResult) -> None:
    """Every word of the document is in some chunk (overlap may repeat, nothing is lost)."""
    covered = [False] * len(doc.text)
    for chunk in result.chunks:
        covered[chunk.char_start : chunk.char_end] = [True] * (chunk.char_end - chunk.char_start)
    for match in re.finditer(r"\S+", doc.text):
        assert covered[match.start()], f"lost {match.group()!r}"


GUIDE = """\
# Guide

Welcome to the guide. It explains everything.

## Install

Download the installer. Run it twice.

Reboot when asked.

## Configure

Open the settings file.

# Other

Unrelated closing words.
"""


def test_sections_never_mix_and_carry_their_heading_path() -> None:
    doc = md(GUIDE)
    result = chunk_document(doc, words, max_tokens=50, overlap_tokens=0)
    check_invariants(doc, result, words, 50)
    assert [(c.heading_path, c.text.splitlines()[0]) for c in result.chunks] == [
        (("Guide",), "Guide"),
        (("Guide", "Install"), "Install"),
        (("Guide", "Configure"), "Configure"),
        (("Other",), "Other"),
    ]
    install = result.chunks[1]
    assert "Run it twice." in install.text and "Reboot when asked." in install.text  # packed
    assert "settings" not in install.text
    assert (install.location.line_start, install.location.line_end) == (5, 9)
    assert not result.truncated


def test_a_heading_followed_by_a_subheading_rides_along() -> None:
    doc = md("# Guide\n\n## Install\n\nRun the installer.\n\n## Remove\n\nDelete it.\n")
    result = chunk_document(doc, words, max_tokens=50)
    assert [c.heading_path for c in result.chunks] == [("Guide", "Install"), ("Guide", "Remove")]
    assert result.chunks[0].text.startswith("Guide\n\nInstall\n\nRun the installer.")


def test_blocks_pack_up_to_the_limit_then_overlap_by_whole_sentences() -> None:
    paragraphs = [f"Sentence {i} alpha beta gamma delta." for i in range(12)]
    doc = md("# Notes\n\n" + "\n\n".join(paragraphs) + "\n")
    result = chunk_document(doc, words, max_tokens=20, overlap_tokens=6)
    check_invariants(doc, result, words, 20)
    covered_words(doc, result)
    assert len(result.chunks) > 3
    for previous, chunk in zip(result.chunks, result.chunks[1:], strict=False):
        assert chunk.heading_path == ("Notes",)
        # the next chunk starts with the last whole sentence of the previous one
        last_sentence = previous.text.rsplit("\n\n", 1)[-1]
        assert chunk.text.startswith(last_sentence)
        assert words(last_sentence) <= 6
        assert chunk.char_start < previous.char_end


def test_no_overlap_across_sections() -> None:
    body = " ".join(f"Fact {i} is here." for i in range(30))
    doc = md(f"# One\n\n{body}\n\n# Two\n\n{body}\n")
    result = chunk_document(doc, words, max_tokens=25, overlap_tokens=8)
    check_invariants(doc, result, words, 25)
    second = next(c for c in result.chunks if c.heading_path == ("Two",))
    assert second.text.startswith("Two\n\nFact 0 is here.")


def test_oversized_paragraph_splits_at_sentences() -> None:
    sentences = [f"Sentence number {i} has exactly seven words." for i in range(40)]
    doc = ParsedDocument(title=None, blocks=(Block("paragraph", " ".join(sentences)),))
    result = chunk_document(doc, words, max_tokens=30, overlap_tokens=0)
    check_invariants(doc, result, words, 30)
    covered_words(doc, result)
    for chunk in result.chunks:
        assert chunk.text.startswith("Sentence") and chunk.text.endswith("words.")
        assert chunk.token_count == 28  # four whole sentences per chunk


def test_paragraph_without_sentences_splits_at_words_then_characters() -> None:
    no_stops = " ".join(["word"] * 500)
    blob = "x" * 5000  # one "word" far over any limit
    doc = ParsedDocument(
        title=None, blocks=(Block("paragraph", no_stops), Block("paragraph", blob))
    )

    def chars(text: str) -> int:  # a counter for which a long word is many tokens
        return (len(text) + 3) // 4

    result = chunk_document(doc, chars, max_tokens=64, overlap_tokens=0)
    check_invariants(doc, result, chars, 64)
    covered_words(doc, result)
    assert all(c.text.split()[0] == "word" for c in result.chunks if "word" in c.text)
    assert sum(len(c.text) for c in result.chunks if c.text.startswith("x")) == 5000


def test_lists_and_tables_split_at_lines() -> None:
    rows = "\n".join(f"| item {i} | value {i} |" for i in range(60))
    doc = ParsedDocument(
        title=None, blocks=(Block("table", rows, location=Location(line_start=10, line_end=69)),)
    )
    result = chunk_document(doc, words, max_tokens=40, overlap_tokens=0)
    check_invariants(doc, result, words, 40)
    for chunk in result.chunks:
        lines = chunk.text.splitlines()
        assert all(line.startswith("| item") and line.endswith("|") for line in lines)
        first = int(lines[0].split()[2])
        assert chunk.location.line_start == 10 + first
        assert chunk.location.line_end == chunk.location.line_start + len(lines) - 1


def test_line_numbers_of_a_split_text_file() -> None:
    lines = [f"Line {n} says something short." for n in range(1, 201)]
    doc = parse(("\n".join(lines) + "\n").encode(), "long.txt", ParseBudgets())
    assert len(doc.blocks) == 1
    result = chunk_document(doc, words, max_tokens=50, overlap_tokens=10)
    check_invariants(doc, result, words, 50)
    for chunk in result.chunks:
        numbers = [int(n) for n in re.findall(r"Line (\d+)", chunk.text)]
        assert chunk.location.line_start == numbers[0] and chunk.location.line_end == numbers[-1]


def test_pdf_chunks_know_their_page() -> None:
    doc = parse(pdf_files.two_page_pdf(), "report.pdf", ParseBudgets())
    result = chunk_document(doc, words, max_tokens=20, overlap_tokens=0)
    check_invariants(doc, result, words, 20)
    zebra = next(c for c in result.chunks if "Zebras" in c.text)
    assert zebra.location.page == 2
    apple = next(c for c in result.chunks if "apples" in c.text)
    assert apple.location.page == 1 and apple.location.line_start == 1


def test_chunks_never_span_pages() -> None:
    doc = parse(pdf_files.two_page_pdf(), "report.pdf", ParseBudgets())
    result = chunk_document(doc, words, max_tokens=200)
    assert [
        (c.location.page, c.location.line_start, c.location.line_end) for c in result.chunks
    ] == [(1, 1, 3), (2, 1, 2)]
    assert "Zebras" in result.chunks[1].text and "apples" not in result.chunks[1].text
    long_pages = parse(pdf_files.text_pdf(3), "report.pdf", ParseBudgets())
    result = chunk_document(long_pages, words, max_tokens=150, overlap_tokens=20)
    check_invariants(long_pages, result, words, 150)
    assert len({c.location.page for c in result.chunks}) == 3
    for chunk in result.chunks:
        assert all(
            line in page_text(long_pages, chunk.location.page) for line in chunk.text.splitlines()
        )


def page_text(doc: ParsedDocument, page: int | None) -> str:
    return "\n".join(b.text for b in doc.blocks if b.location.page == page)


def test_pdf_headings_become_heading_paths() -> None:
    doc = parse(pdf_files.headings_pdf(), "manual.pdf", ParseBudgets())
    result = chunk_document(doc, words, max_tokens=200)
    assert [c.heading_path for c in result.chunks] == [
        ("Installation Guide", "Requirements"),
        ("Installation Guide", "Running the installer"),
    ]


def test_max_chunks_truncates() -> None:
    doc = ParsedDocument(
        title=None, blocks=tuple(Block("paragraph", f"Paragraph {i}.") for i in range(50))
    )
    result = chunk_document(doc, words, max_tokens=2, overlap_tokens=0, max_chunks=10)
    assert len(result.chunks) == 10 and result.truncated
    exact = chunk_document(doc, words, max_tokens=2, overlap_tokens=0, max_chunks=50)
    assert len(exact.chunks) == 50 and not exact.truncated


def test_a_counter_that_is_not_additive_still_never_overflows() -> None:
    """A counter where joining texts costs extra: the estimate from sums is short, the real
    count of each chunk catches it."""

    def lumpy(text: str) -> int:
        return len(text.split()) + text.count("\n") * 2 + text.count(". ")

    sentences = " ".join(f"Point {i} matters." for i in range(50))
    paragraphs = "\n\n".join(f"Line {i} is short." for i in range(40))
    doc = md(f"# Mixed\n\n{sentences}\n\n{paragraphs}\n")
    for max_tokens in (7, 15, 40):
        result = chunk_document(doc, lumpy, max_tokens=max_tokens, overlap_tokens=5)
        check_invariants(doc, result, lumpy, max_tokens)
        covered_words(doc, result)


def test_counter_with_special_tokens() -> None:
    def with_specials(text: str) -> int:  # [CLS] ... [SEP]
        return len(text.split()) + 2

    doc = md(GUIDE)
    result = chunk_document(doc, with_specials, max_tokens=8, overlap_tokens=2)
    check_invariants(doc, result, with_specials, 8)
    covered_words(doc, result)


def test_twenty_megabytes_chunk_fast_and_stop_at_the_cap() -> None:
    doc = parse(text_files.big_single_line(), "one-line.txt", ParseBudgets())
    tokenized = 0

    def counting(text: str) -> int:
        nonlocal tokenized
        tokenized += len(text)
        return len(text.split())

    started = time.perf_counter()
    result = chunk_document(doc, counting, max_tokens=200, overlap_tokens=32, max_chunks=1024)
    elapsed = time.perf_counter() - started
    assert result.truncated and len(result.chunks) == 1024
    check_invariants(doc, result, words, 200)
    # the tokenizer saw about as much text as the chunks hold, not the 20 MB
    consumed = result.chunks[-1].char_end
    assert tokenized < 3 * consumed < len(doc.text) // 5
    assert elapsed < 20


def test_bad_arguments() -> None:
    doc = md(GUIDE)
    with pytest.raises(InvalidInput):
        chunk_document(doc, words, max_tokens=0)
    with pytest.raises(InvalidInput):
        chunk_document(doc, lambda t: len(t.split()) + 5, max_tokens=5)


def test_empty_document_has_no_chunks() -> None:
    result = chunk_document(ParsedDocument(title=None, blocks=()), words, max_tokens=10)
    assert result.chunks == () and not result.truncated


def local_embedder() -> LocalEmbedder:
    """The local embedder, for its real token counts (skipped where the bundled model files
    are not built in this checkout)."""
    local = pytest.importorskip("loci.embed.local")
    embedder: LocalEmbedder = local.LocalEmbedder()
    try:
        embedder.count_tokens("probe")
    except Exception as exc:
        pytest.skip(f"local tokenizer unavailable: {exc}")
    return embedder


def test_real_tokenizer_limit_holds() -> None:
    embedder = local_embedder()
    max_tokens = embedder.max_tokens - 48
    docs = [
        parse(pdf_files.text_pdf(12), "report.pdf", ParseBudgets()),
        md(GUIDE + "\n\n" + text_files.prose(3000, seed=5) + "\n"),
        parse_html_doc(),
    ]
    for doc in docs:
        result = chunk_document(doc, embedder.count_tokens, max_tokens=max_tokens)
        assert result.chunks
        check_invariants(doc, result, embedder.count_tokens, max_tokens)
        covered_words(doc, result)


def parse_html_doc() -> ParsedDocument:
    return parse(text_files.html_page().encode(), "page.html", ParseBudgets())


def test_indented_text_chunks_start_at_the_words() -> None:
    doc = parse(
        b"    indented first paragraph\n\n\tTabbed second one   \n", "t.txt", ParseBudgets()
    )
    result = chunk_document(doc, words, max_tokens=3, overlap_tokens=0)
    check_invariants(doc, result, words, 3)
    assert [c.text for c in result.chunks] == ["indented first paragraph", "Tabbed second one"]


def test_chunks_fit_the_model_by_a_plain_tokenization() -> None:
    """The embedder counts tokens from memoised word counts; every chunk is checked here by the
    shipped tokenizer run plainly on the chunk's whole text, on a report, multilingual notes
    with logs, lists and tables, and a page of HTML, at the indexer's limit and at tight ones
    that force sentence, word and character cuts with overlaps."""
    embedder = local_embedder()
    plain = shipped_tokenizer()

    def count(text: str) -> int:
        return plain_count(plain, text)

    docs = [
        parse(pdf_files.text_pdf(6), "report.pdf", ParseBudgets()),
        md(text_files.MIXED_NOTES * 3),
        parse_html_doc(),
    ]
    for max_tokens in (embedder.max_tokens - 48, 40, 12):
        for doc in docs:
            result = chunk_document(doc, embedder.count_tokens, max_tokens=max_tokens)
            assert result.chunks
            check_invariants(doc, result, count, max_tokens)
            covered_words(doc, result)


def test_pieces_cut_out_of_one_word_are_counted_together() -> None:
    """Once sums of piece counts have earned trust, a chunk made of character cuts of one long
    word must still be counted whole: a word's tokens are not the sum of its parts'."""

    def superadditive(text: str) -> int:  # a long word costs more than its parts together
        return sum(1 if len(word) <= 12 else 40 for word in text.split())

    prose = "\n\n".join(text_files.prose(12, seed=seed) for seed in range(40))
    doc = md(f"# Notes\n\n{prose}\n\n{'9f86d081884c7d65' * 40}\n")
    result = chunk_document(doc, superadditive, max_tokens=30, overlap_tokens=4)
    check_invariants(doc, result, superadditive, 30)
    covered_words(doc, result)
