"""CSV and TSV: rows in blocks that keep the header row, line numbers of the file as spans.

The encoding is found as for any text file (BOM, UTF-8, then charset-normalizer), the dialect by
the standard library's sniffer on the first lines, restricted to the usual delimiters, with a
plain count as the fallback. A record may span several lines (quoted newlines), so its span is
taken from the reader's own line counter. Fields are bounded twice: the csv module refuses one
past its field-size limit (128 KiB of text; the file then fails with that reason), and a long one
under it is cut short in the index with a warning.
"""

from __future__ import annotations

import csv
import io

from loci.errors import ParseError
from loci.ingest.encoding import decode_text
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.rows import RowBlocks, truncation_warning
from loci.ingest.reasons import with_detail
from loci.models import ParsedDocument

_DELIMITERS = ",;\t|"
_SAMPLE_LINES = 50
_SAMPLE_CHARS = 64 * 1024
_CHECK_EVERY = 1000
_MAX_COLUMN_NAMES = 50


def parse_delimited(data: bytes, budgets: ParseBudgets, *, tab: bool = False) -> ParsedDocument:
    text = decode_text(data)
    deadline = Deadline(budgets, "CSV")
    dialect = _dialect(text, tab)
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    rows = RowBlocks()
    header: list[str] | None = None
    previous = 0
    try:
        for count, record in enumerate(reader):
            if count % _CHECK_EVERY == 0:
                deadline.check()
            start, previous = previous + 1, reader.line_num
            if header is None and any(cell.strip() for cell in record):
                header = record
            rows.add(start, previous, record)
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise ParseError(
                f"CSV has a field longer than {csv.field_size_limit()} characters near line "
                f"{reader.line_num}; refused"
            ) from None
        raise ParseError(with_detail(f"unreadable CSV near line {reader.line_num}", exc)) from None
    blocks = rows.finish()
    warnings: list[str] = []
    if rows.truncated_cells:
        warnings.append(truncation_warning(rows.truncated_cells))
    if not blocks:
        warnings.append("no text found")
    metadata = {
        "delimiter": dialect.delimiter,
        "rows": rows.rows,
        "columns": [c.strip() for c in (header or [])][:_MAX_COLUMN_NAMES],
    }
    return ParsedDocument(
        title=None, blocks=tuple(blocks), metadata=metadata, warnings=tuple(warnings)
    )


def _dialect(text: str, tab: bool) -> type[csv.Dialect]:
    if tab:
        return csv.excel_tab
    sample = "\n".join(text[:_SAMPLE_CHARS].split("\n")[:_SAMPLE_LINES])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        pass
    first = sample.split("\n", 1)[0]
    counts = {d: first.count(d) for d in _DELIMITERS}
    best = max(counts, key=lambda d: counts[d])

    class Guessed(csv.excel):
        delimiter = best if counts[best] else ","

    return Guessed
