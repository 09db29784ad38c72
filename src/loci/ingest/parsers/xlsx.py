"""XLSX: each worksheet as a heading (its name) over blocks of rows that keep the header row.

Read with lxml straight from the package (no spreadsheet library): the shared-strings table and
every sheet are streamed element by element, after the package and each part passed the budgets
(`Package`), so a sheet of a million rows costs memory for one row at a time and a shared-strings
table past the per-part budget fails with that reason before it is inflated. A block's
`line_start`/`line_end` are spreadsheet row numbers, as Excel shows them.

Values are shown as a reader sees them, roughly: shared and inline strings, booleans as
TRUE/FALSE, the cached result of a formula, numbers without a spurious ".0", and serial numbers
in a date format as ISO dates.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from loci.errors import ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.package import Package, local_name
from loci.ingest.parsers.rows import RowBlocks, truncation_warning
from loci.models import Block, ParsedDocument

_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_STRICT_REL_ID = "{http://purl.oclc.org/ooxml/officeDocument/relationships}id"
_CHECK_EVERY = 500
_MAX_COLUMNS = 16_384  # Excel's own limit (XFD)
_CELL_REF = re.compile(r"([A-Za-z]{1,3})(\d+)")
_DATE_FORMAT_IDS = frozenset({14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47, *range(27, 37)})
_FORMAT_NOISE = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')
_EPOCH_1900 = datetime.datetime(1899, 12, 30)
_EPOCH_1904 = datetime.datetime(1904, 1, 1)


def parse_xlsx(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    package = Package(data, budgets, "XLSX")
    deadline = Deadline(budgets, "XLSX")
    workbook_name = package.main_part("officeDocument", "xl/workbook.xml")
    workbook = package.xml(workbook_name)
    relations = package.relationships(workbook_name)
    by_type = {rel_type.rsplit("/", 1)[-1]: target for rel_type, target in relations.values()}
    shared = _shared_strings(package, by_type.get("sharedStrings"), deadline)
    dates = _date_styles(package, by_type.get("styles"))
    epoch = _EPOCH_1904 if _uses_1904(workbook) else _EPOCH_1900

    blocks: list[Block] = []
    names: list[str] = []
    truncated = 0
    for sheet in workbook.iter("{*}sheet"):
        name = " ".join((sheet.get("name") or "").split()) or f"Sheet {len(names) + 1}"
        rel_type, target = relations.get(
            sheet.get(_REL_ID) or sheet.get(_STRICT_REL_ID) or "", ("", "")
        )
        if not rel_type.endswith("/worksheet") or target not in package:
            continue  # chart sheets and dialog sheets carry no cells
        names.append(name)
        rows = RowBlocks()
        for number, cells in _rows(package, target, shared, dates, epoch, deadline):
            rows.add(number, number, cells)
        sheet_blocks = rows.finish()
        truncated += rows.truncated_cells
        if sheet_blocks:
            blocks.append(Block("heading", name, level=1))
            blocks.extend(sheet_blocks)

    properties = package.core_properties()
    metadata: dict[str, Any] = {k: v for k, v in properties.items() if k != "title"}
    metadata["sheets"] = names
    warnings: list[str] = []
    if truncated:
        warnings.append(truncation_warning(truncated))
    if not blocks:
        warnings.append("no text found")
    return ParsedDocument(
        title=properties.get("title"),
        blocks=tuple(blocks),
        metadata=metadata,
        warnings=tuple(warnings),
    )


def _shared_strings(package: Package, part: str | None, deadline: Deadline) -> list[str]:
    if part is None or part not in package:
        return []
    strings: list[str] = []
    for count, item in enumerate(package.iter_elements(part, "{*}si")):
        if count % (_CHECK_EVERY * 20) == 0:
            deadline.check()
            package.spend_nodes(_CHECK_EVERY * 20)  # the table is kept: it counts as parsed
        strings.append(_string_item(item))
    return strings


def _string_item(item: Any) -> str:
    """Text of a shared or inline string, without its phonetic (ruby) runs."""
    parts = []
    for t in item.iter("{*}t"):
        if any(local_name(a) == "rPh" for a in t.iterancestors()):
            continue
        parts.append(t.text or "")
    return "".join(parts)


def _rows(
    package: Package,
    part: str,
    shared: list[str],
    dates: set[int],
    epoch: datetime.datetime,
    deadline: Deadline,
) -> Any:
    """(row number, cell texts) for every row of a sheet, streamed."""
    previous = 0
    for count, row in enumerate(package.iter_elements(part, "{*}row")):
        if count % _CHECK_EVERY == 0:
            deadline.check()
        declared = row.get("r")
        number = int(declared) if declared and declared.isdigit() else previous + 1
        previous = number
        cells: list[str] = []
        for cell in row.iterchildren("{*}c"):
            column = _column(cell.get("r"), len(cells))
            if column >= _MAX_COLUMNS:
                continue
            value = _value(cell, shared, dates, epoch)
            if not value:
                continue
            if column >= len(cells):
                cells.extend([""] * (column + 1 - len(cells)))
            cells[column] = value
        yield number, cells


def _column(reference: str | None, fallback: int) -> int:
    if not reference:
        return fallback
    match = _CELL_REF.fullmatch(reference)
    if match is None:
        return fallback
    index = 0
    for letter in match.group(1).upper():
        index = index * 26 + ord(letter) - ord("A") + 1
    return index - 1


def _value(cell: Any, shared: list[str], dates: set[int], epoch: datetime.datetime) -> str:
    kind = cell.get("t") or "n"
    if kind == "inlineStr":
        inline = cell.find("{*}is")
        return _string_item(inline) if inline is not None else ""
    raw = cell.findtext("{*}v") or ""
    if kind == "s":
        try:
            return shared[int(raw)]
        except (ValueError, IndexError):
            raise ParseError(
                f"corrupt XLSX: cell {cell.get('r') or '?'} points at a shared string that "
                "does not exist"
            ) from None
    if kind == "b":
        return "TRUE" if raw.strip() == "1" else "FALSE"
    if kind != "n" or not raw:
        return raw  # str (formula result), e (error such as #DIV/0!), d (ISO date)
    try:
        number = float(raw)
    except ValueError:
        return raw
    style = cell.get("s")
    if style and style.isdigit() and int(style) in dates:
        return _as_date(number, epoch) or raw
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.15g}"


def _as_date(serial: float, epoch: datetime.datetime) -> str | None:
    if serial < 0:
        return None  # Excel has no dates before its epoch; show the number as stored
    try:
        moment = epoch + datetime.timedelta(days=serial)
    except OverflowError:
        return None
    if serial < 1:
        return moment.strftime("%H:%M:%S")
    if serial.is_integer():
        return moment.date().isoformat()
    return moment.strftime("%Y-%m-%d %H:%M")


def _date_styles(package: Package, part: str | None) -> set[int]:
    """Indexes of the cell formats (the `s` attribute of a cell) that show a date or time."""
    if part is None or part not in package:
        return set()
    styles = package.xml(part)
    custom: dict[int, str] = {}
    for fmt in styles.iter("{*}numFmt"):
        ident = fmt.get("numFmtId") or ""
        if ident.isdigit():
            custom[int(ident)] = fmt.get("formatCode") or ""
    out: set[int] = set()
    cell_formats = next(styles.iter("{*}cellXfs"), None)
    if cell_formats is None:
        return out
    for index, xf in enumerate(cell_formats.iterchildren("{*}xf")):
        ident = xf.get("numFmtId") or "0"
        if not ident.isdigit():
            continue
        number = int(ident)
        if number in _DATE_FORMAT_IDS or (number in custom and _is_date_code(custom[number])):
            out.add(index)
    return out


def _is_date_code(code: str) -> bool:
    bare = _FORMAT_NOISE.sub("", code).lower()
    return bool(re.search(r"[ydhs]", bare)) or ("m" in bare and not re.search(r"[0#?]", bare))


def _uses_1904(workbook: Any) -> bool:
    properties = next(workbook.iter("{*}workbookPr"), None)
    return properties is not None and properties.get("date1904") in ("1", "true")
