"""Rows of a sheet or CSV file → table blocks that each repeat the header row.

A passage cut from the middle of a spreadsheet ("Ada | 1815 | London") means nothing without
its column names, so every block opens with the header row and carries a few rows after it; the
blocks are small enough that the chunker never has to split one (which would leave the second
half without its header). A block's line span is its rows' numbers: row numbers for a sheet,
line numbers of the file for CSV.
"""

from __future__ import annotations

from loci.models import Block, Location

MAX_CELL_CHARS = 2000
_BLOCK_CHARS = 400
_BLOCK_ROWS = 20


class RowBlocks:
    """Collects the rows of one table, first non-empty row as its header."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.truncated_cells = 0
        self.rows = 0
        self._header: str | None = None
        self._header_lines: tuple[int, int] = (0, 0)
        self._pending: list[str] = []
        self._start = 0
        self._end = 0
        self._size = 0

    def add(self, line_start: int, line_end: int, cells: list[str]) -> None:
        values = [self._cell(c) for c in cells]
        while values and not values[-1]:
            values.pop()
        if not any(values):
            return
        text = " | ".join(values)
        self.rows += 1
        if self._header is None:
            self._header = text
            self._header_lines = (line_start, line_end)
            return
        if self._pending and (
            self._size + len(text) > _BLOCK_CHARS or len(self._pending) >= _BLOCK_ROWS
        ):
            self._flush()
        if not self._pending:
            self._start = line_start
            self._size = len(self._header)
        self._pending.append(text)
        self._end = line_end
        self._size += len(text) + 1

    def finish(self) -> list[Block]:
        if self._pending:
            self._flush()
        elif self._header is not None and not self.blocks:
            start, end = self._header_lines
            self.blocks.append(
                Block("table", self._header, location=Location(line_start=start, line_end=end))
            )
        return self.blocks

    def _flush(self) -> None:
        text = "\n".join([self._header or "", *self._pending])
        self.blocks.append(
            Block("table", text, location=Location(line_start=self._start, line_end=self._end))
        )
        self._pending = []

    def _cell(self, value: str) -> str:
        clipped = len(value) > 2 * MAX_CELL_CHARS
        value = " ".join(value[: 2 * MAX_CELL_CHARS].split())
        if clipped or len(value) > MAX_CELL_CHARS:
            self.truncated_cells += 1
            return value[:MAX_CELL_CHARS] + " …"
        return value


def truncation_warning(count: int) -> str:
    return f"{count} cell(s) longer than {MAX_CELL_CHARS} characters were cut short"
