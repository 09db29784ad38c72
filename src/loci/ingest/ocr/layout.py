"""OCR words → paragraph blocks that keep where they sit on the page and how sure the engine was.

Tesseract already groups words into blocks, paragraphs and lines in reading order; a paragraph
becomes one `Block` whose lines are its lines, numbered down the page as PDF text lines are, with
its region (the union of its words' boxes, as fractions of the page) and its confidence (the mean
of its words', weighted by their length, so one smudged comma does not sink a sentence).

Low-confidence text is kept, because a half-read word still finds the page, but it is marked:
its block's confidence travels into the chunk and the citation, and the document gets a warning.
Paragraphs with no letter or digit at all are dropped: that is noise read as text (speckles,
rules, the edge of a photo), not something a reader could cite.
"""

from __future__ import annotations

from itertools import groupby

from loci.ingest.ocr.engine import Recognized, Word
from loci.models import LOW_OCR_CONFIDENCE, Block, Location, Region

LOW_CONFIDENCE = LOW_OCR_CONFIDENCE  # below this mean confidence a block is marked as uncertain


def ocr_blocks(recognized: Recognized, page: int | None = None, first_line: int = 1) -> list[Block]:
    """Paragraph blocks of one image or page, lines numbered from `first_line`."""
    blocks: list[Block] = []
    line_number = first_line
    for _, paragraph_words in groupby(recognized.words, key=lambda w: (w.block, w.paragraph)):
        words = list(paragraph_words)
        lines = [
            " ".join(w.text for w in line_words)
            for _, line_words in groupby(words, key=lambda w: w.line)
        ]
        text = "\n".join(lines)
        if not any(ch.isalnum() for ch in text):
            continue
        blocks.append(
            Block(
                "paragraph",
                text,
                location=Location(
                    page=page,
                    line_start=line_number,
                    line_end=line_number + len(lines) - 1,
                    region=_region(words, recognized.width, recognized.height),
                    ocr_confidence=round(_confidence(words), 3),
                ),
            )
        )
        line_number += len(lines)
    return blocks


def low_confidence(blocks: list[Block]) -> int:
    return sum(1 for b in blocks if b.location.ocr_uncertain)


def text_chars(blocks: list[Block]) -> int:
    return sum(len(b.text) for b in blocks)


def _region(words: list[Word], width: int, height: int) -> Region:
    w, h = max(width, 1), max(height, 1)
    return (
        round(min(x.left for x in words) / w, 3),
        round(min(x.top for x in words) / h, 3),
        round(min(1.0, max(x.left + x.width for x in words) / w), 3),
        round(min(1.0, max(x.top + x.height for x in words) / h), 3),
    )


def _confidence(words: list[Word]) -> float:
    weight = sum(len(w.text) for w in words)
    return sum(w.confidence * len(w.text) for w in words) / max(weight, 1)
