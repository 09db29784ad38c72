"""Reading order of one PDF page, rebuilt from where its text sits (a PDF's drawing order is
not its reading order), and its lines and paragraphs.

1. Columns: an x-range no narrow segment crosses, with column-like text on both sides, is a
   gutter. Segments are read top to bottom; a segment that spans the gutter (a title, a
   full-width figure caption) closes the column run above it: left column, then right column.
2. Segments on the same baseline are joined into lines, lines into paragraphs at vertical gaps
   and at font-size changes. Line numbers count the page's lines in this reading order.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from loci.ingest.parsers.pdf_text import Segment

_COLUMN_MIN_SEGMENTS = 3
_COLUMN_MIN_MEDIAN_CHARS = 15  # text columns have long lines; table cells do not


@dataclass
class _Line:
    segments: list[Segment]
    left: float
    bottom: float
    right: float
    top: float

    @property
    def text(self) -> str:
        return " ".join(s.text for s in sorted(self.segments, key=lambda s: s.left))

    @property
    def size(self) -> float:
        return max(s.size for s in self.segments)

    def overlaps(self, segment: Segment) -> bool:
        overlap = min(self.top, segment.top) - max(self.bottom, segment.bottom)
        return overlap >= 0.5 * min(self.top - self.bottom, segment.height)

    def add(self, segment: Segment) -> None:
        self.segments.append(segment)
        self.left = min(self.left, segment.left)
        self.right = max(self.right, segment.right)
        self.bottom = min(self.bottom, segment.bottom)
        self.top = max(self.top, segment.top)


@dataclass
class Paragraph:
    page: int
    lines: list[str] = field(default_factory=list)
    line_start: int = 0
    sizes: Counter[float] = field(default_factory=Counter)  # font size → characters


def reading_order(segments: list[Segment]) -> list[list[Segment]]:
    """Streams of segments to read one after the other: columns in order, top to bottom."""
    by_position = sorted(segments, key=lambda s: (-(s.top + s.bottom) / 2, s.left))
    gutters = _gutters(segments)
    if not gutters:
        return [by_position]
    streams: list[list[Segment]] = []
    columns: list[list[Segment]] = [[] for _ in range(len(gutters) + 1)]

    def flush() -> None:
        for column in columns:
            if column:
                streams.append(list(column))
                column.clear()

    spanning: list[Segment] | None = None  # the full-width run being read, if any
    for segment in by_position:
        column = _column_of(segment, gutters)
        if column is None:
            if spanning is None:
                flush()
                spanning = []
                streams.append(spanning)
            spanning.append(segment)
        else:
            spanning = None
            columns[column].append(segment)
    flush()
    return streams


def _column_of(segment: Segment, gutters: list[tuple[float, float]]) -> int | None:
    """Index of the column holding the segment; None when it reaches into a gutter."""
    column = 0
    for lo, hi in gutters:
        if segment.left >= hi - 0.5:
            column += 1
        elif segment.right > lo + 0.5:
            return None
    return column


def _gutters(segments: list[Segment]) -> list[tuple[float, float]]:
    """Vertical strips no column-width segment crosses, with real text columns either side."""
    lo = min(s.left for s in segments)
    hi = max(s.right for s in segments)
    width = hi - lo
    if width <= 0:
        return []
    # Full-width lines (titles, spanning captions) cross gutters by design: leave them out.
    narrow = sorted((s for s in segments if s.right - s.left < 0.6 * width), key=lambda s: s.left)
    if len(narrow) < 2 * _COLUMN_MIN_SEGMENTS:
        return []
    min_gap = max(6.0, 0.6 * statistics.median(s.height for s in narrow))
    gaps: list[tuple[float, float]] = []
    reach = narrow[0].right
    for segment in narrow[1:]:
        if segment.left - reach >= min_gap and lo + 0.15 * width < segment.left < hi - 0.1 * width:
            gaps.append((reach, segment.left))
        reach = max(reach, segment.right)
    if not gaps:
        return []
    bounds = [lo, *[x for gap in gaps for x in gap], hi]
    for column in range(len(gaps) + 1):
        start, end = bounds[2 * column], bounds[2 * column + 1]
        inside = [s for s in narrow if s.left >= start - 0.5 and s.right <= end + 0.5]
        if len(inside) < _COLUMN_MIN_SEGMENTS:
            return []
        if statistics.median(len(s.text) for s in inside) < _COLUMN_MIN_MEDIAN_CHARS:
            return []
        if statistics.median(s.right - s.left for s in inside) < 0.5 * (end - start):
            return []
    return gaps


def page_paragraphs(streams: list[list[Segment]], page_number: int) -> list[Paragraph]:
    stream_lines = [_lines(stream) for stream in streams]
    all_lines = [line for lines in stream_lines for line in lines]
    heights = [line.top - line.bottom for line in all_lines]
    gaps = [
        above.bottom - below.top
        for lines in stream_lines
        for above, below in zip(lines, lines[1:], strict=False)
        if above.bottom - below.top > -0.5 * (below.top - below.bottom)
    ]
    typical_gap = statistics.median(gaps) if gaps else 0.0
    break_at = typical_gap + 0.6 * (statistics.median(heights) if heights else 10.0)

    paragraphs: list[Paragraph] = []
    number = 0
    for lines in stream_lines:
        current: Paragraph | None = None
        previous: _Line | None = None
        previous_size = 0.0
        for line in lines:
            number += 1
            text = line.text
            size = line.size
            new = (
                current is None
                or previous is None
                or previous.bottom - line.top > break_at
                or abs(size - previous_size) > 0.15 * max(size, previous_size)
            )
            if new or current is None:
                current = Paragraph(page=page_number, line_start=number)
                paragraphs.append(current)
            current.lines.append(text)
            current.sizes[size] += len(text)
            previous, previous_size = line, size
    return paragraphs


def _lines(stream: list[Segment]) -> list[_Line]:
    lines: list[_Line] = []
    for segment in stream:  # already sorted top to bottom
        if lines and lines[-1].overlaps(segment):
            lines[-1].add(segment)
        else:
            lines.append(_Line([segment], segment.left, segment.bottom, segment.right, segment.top))
    return lines
