"""A PDF's paragraphs, from all its pages, as blocks: page numbers and running headers dropped,
and paragraphs set in a clearly larger font than the body text made headings, ranked by size, so
chunks of a PDF get heading paths like any markdown file.
"""

from __future__ import annotations

import re
from collections import Counter

from loci.ingest.parsers.pdf_layout import Paragraph
from loci.models import Block, Location

_HEADING_RATIO = 1.15  # font size over body size from which a short paragraph is a heading
_HEADING_MAX_CHARS = 200
_HEADING_MAX_LINES = 3
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}")
_PAGE_NUMBER = re.compile(
    r"^\W{0,2}(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,7})(?:\s*(?:/|of)\s*\d{1,5})?\W{0,2}$", re.I
)
_DIGITS = re.compile(r"\d+")


def document_blocks(paragraphs: list[Paragraph]) -> list[Block]:
    body = _body_size(paragraphs)
    paragraphs = _without_page_furniture(paragraphs, body)
    heading_sizes = sorted({_size(p) for p in paragraphs if _is_heading(p, body)}, reverse=True)
    levels = {size: min(rank + 1, 6) for rank, size in enumerate(heading_sizes)}
    blocks = []
    for paragraph in paragraphs:
        text = "\n".join(paragraph.lines)
        line_end = paragraph.line_start + len(paragraph.lines) - 1
        where = Location(page=paragraph.page, line_start=paragraph.line_start, line_end=line_end)
        if _is_heading(paragraph, body):
            blocks.append(
                Block(
                    "heading",
                    " ".join(paragraph.lines),
                    level=levels[_size(paragraph)],
                    location=where,
                )
            )
        else:
            blocks.append(
                Block(
                    "paragraph",
                    text,
                    location=where,
                )
            )
    return blocks


def _without_page_furniture(paragraphs: list[Paragraph], body: float) -> list[Paragraph]:
    """Drop page numbers and running headers/footers: the first or last paragraph of a page
    that is only a number, or whose text (digits aside) tops or tails many pages. Left in, they
    would be glued into chunks mid-sentence and match every query about the document title.
    Heading-sized text is kept: the title page's title often doubles as the running header."""
    by_page: dict[int, list[Paragraph]] = {}
    for paragraph in paragraphs:
        by_page.setdefault(paragraph.page, []).append(paragraph)
    edges = [p for ps in by_page.values() for p in (ps[:1] + ps[1:][-1:])]
    edge_ids = {id(p) for p in edges}
    repeats = Counter(_furniture_key(p) for p in edges)
    threshold = max(3, len(by_page) // 3)
    kept = []
    for paragraph in paragraphs:
        if id(paragraph) in edge_ids and len(paragraph.lines) <= 2:
            key = _furniture_key(paragraph)
            if _PAGE_NUMBER.match(" ".join(paragraph.lines)):
                continue
            if repeats[key] >= threshold and _size(paragraph) < body * _HEADING_RATIO:
                continue
        kept.append(paragraph)
    return kept


def _furniture_key(paragraph: Paragraph) -> str:
    return _DIGITS.sub("#", " ".join(paragraph.lines).lower())


def _size(paragraph: Paragraph) -> float:
    return round(paragraph.sizes.most_common(1)[0][0])


def _body_size(paragraphs: list[Paragraph]) -> float:
    """The font size most characters of the document are set in."""
    total: Counter[float] = Counter()
    for paragraph in paragraphs:
        for size, chars in paragraph.sizes.items():
            total[round(size)] += chars
    return total.most_common(1)[0][0] if total else 0.0


def _is_heading(paragraph: Paragraph, body: float) -> bool:
    if body <= 0 or _size(paragraph) < body * _HEADING_RATIO:
        return False
    text = " ".join(paragraph.lines)
    return (
        len(paragraph.lines) <= _HEADING_MAX_LINES
        and len(text) <= _HEADING_MAX_CHARS
        and any(c.isalpha() for c in text)
        and not text.endswith((".", ",", ";"))
        and not _DOT_LEADER.search(text)  # a table-of-contents entry
    )
