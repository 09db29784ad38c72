"""DOCX: headings, paragraphs, lists and tables in body order, via python-docx.

The package is inspected before python-docx sees it, because python-docx parses every part into
memory: the zip's declared sizes are checked against the decompression budgets (a zip bomb fails
here, cheaply), every XML part is streamed once to count its elements against the node budget
(63 MB of tiny paragraphs would take gigabytes as a tree), and an XML part with a DOCTYPE is
refused (entity declarations are how XML bombs and external-entity reads start; python-docx's
parser already leaves entities unresolved, this makes the refusal explicit). Declared sizes
cannot be used to lie past the budget: Python's zipfile stops at the declared size and fails the
CRC check.

`line_start`/`line_end` of a block count body paragraphs and table rows, 1-based.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from loci.errors import ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.package import Package
from loci.ingest.reasons import with_detail
from loci.models import Block, Location, ParsedDocument

logger = logging.getLogger(__name__)

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_HEADING_NAME = re.compile(r"^(?:heading|überschrift|titre|título|titolo|kop|rubrik)\s*(\d)$", re.I)
_CHECK_EVERY = 200


def parse_docx(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    _inspect_package(data, budgets)
    import docx  # python-docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors, ... here
        logger.debug("python-docx could not open the file: %r", exc)
        raise ParseError(
            with_detail(
                "corrupt DOCX: Word's parts in it cannot be read (save it again from Word)", exc
            )
        ) from None
    return _Reader(document, Deadline(budgets, "DOCX")).read()


def _inspect_package(data: bytes, budgets: ParseBudgets) -> None:
    package = Package(data, budgets, "DOCX")
    if "[Content_Types].xml" not in package:
        raise ParseError("not a Word document: the zip has no [Content_Types].xml")
    package.inspect_parts()


@dataclass(frozen=True)
class _StyleInfo:
    name: str
    style_id: str
    outline: int | None  # 0-based outline level, None for body text
    num_id: str | None
    num_level: int


class _Reader:
    """One pass over the body, keeping list numbering state as Word would."""

    def __init__(self, document: Any, deadline: Deadline) -> None:
        self._document = document
        self._deadline = deadline
        self._styles = _style_table(document)
        self._formats = _numbering_formats(document)
        self._counters: dict[str, list[int]] = {}
        self._blocks: list[Block] = []
        self._list: list[str] = []
        self._list_start = 0
        self._list_end = 0
        self._line = 0
        self._title: str | None = None

    def read(self) -> ParsedDocument:
        body = self._document.element.body
        for count, element in enumerate(_body_elements(body)):
            if count % _CHECK_EVERY == 0:
                self._deadline.check()
            if element.tag == _W + "p":
                self._paragraph(element)
            else:
                self._table(element)
        self._end_list()
        core = self._document.core_properties
        title = (
            (core.title or "").strip()
            or self._title
            or next((b.text for b in self._blocks if b.kind == "heading" and b.level == 1), None)
        )
        metadata: dict[str, Any] = {}
        for key in ("author", "subject", "keywords", "category"):
            value = getattr(core, key, None)
            if isinstance(value, str) and value.strip():
                metadata[key] = value.strip()
        for key in ("created", "modified"):
            value = getattr(core, key, None)
            if value is not None:
                metadata[key] = value.isoformat()
        warnings = () if self._blocks else ("no text found",)
        return ParsedDocument(
            title=title, blocks=tuple(self._blocks), metadata=metadata, warnings=warnings
        )

    def _paragraph(self, p: Any) -> None:
        self._line += 1
        text = _paragraph_text(p).strip()
        if not text:
            return
        style = self._style_of(p)
        level = _heading_level(p, style)
        if level is not None:
            self._end_list()
            if style is not None and style.style_id.lower() == "title" and self._title is None:
                self._title = " ".join(text.split())
            self._blocks.append(
                Block(
                    "heading",
                    " ".join(text.split()),
                    level=level,
                    location=Location(line_start=self._line, line_end=self._line),
                )
            )
            return
        numbering = self._numbering_of(p, style)
        if numbering is not None or (style is not None and "list" in style.name.lower()):
            marker = self._marker(*numbering) if numbering else "•"
            indent = "  " * (numbering[1] if numbering else 0)
            if not self._list:
                self._list_start = self._line
            self._list_end = self._line
            self._list.append(f"{indent}{marker} {text}")
            return
        self._end_list()
        self._blocks.append(
            Block("paragraph", text, location=Location(line_start=self._line, line_end=self._line))
        )

    def _table(self, table: Any) -> None:
        self._end_list()
        rows = []
        first = self._line + 1
        for tr in table.iter(_W + "tr"):
            if _nearest(tr, _W + "tbl") is not table:
                continue  # rows of a nested table are read as text of their cell
            self._line += 1
            cells = []
            for tc in tr.iter(_W + "tc"):
                if _nearest(tc, _W + "tbl") is table:
                    paragraphs = (_paragraph_text(p) for p in tc.iter(_W + "p"))
                    cells.append(" ".join(" ".join(paragraphs).split()))
            if any(cells):
                rows.append(" | ".join(cells))
        if rows:
            self._blocks.append(
                Block(
                    "table",
                    "\n".join(rows),
                    location=Location(line_start=first, line_end=self._line),
                )
            )

    def _end_list(self) -> None:
        if self._list:
            self._blocks.append(
                Block(
                    "list",
                    "\n".join(self._list),
                    location=Location(line_start=self._list_start, line_end=self._list_end),
                )
            )
            self._list = []

    def _style_of(self, p: Any) -> _StyleInfo | None:
        style_id = _first_val(p, "pPr", "pStyle")
        return self._styles.get(style_id or "") or self._styles.get("__default__")

    def _numbering_of(self, p: Any, style: _StyleInfo | None) -> tuple[str, int] | None:
        num_id = _first_val(p, "pPr", "numPr", "numId")
        level_text = _first_val(p, "pPr", "numPr", "ilvl")
        if num_id is None and style is not None:
            num_id = style.num_id
            if level_text is None:
                level_text = str(style.num_level)
        if num_id is None or num_id == "0":
            return None
        level = int(level_text) if level_text and level_text.isdigit() else 0
        return num_id, min(level, 8)

    def _marker(self, num_id: str, level: int) -> str:
        counters = self._counters.setdefault(num_id, [0] * 9)
        counters[level] += 1
        for deeper in range(level + 1, 9):
            counters[deeper] = 0
        fmt, start = self._formats.get((num_id, level), ("bullet", 1))
        n = counters[level] + start - 1
        if fmt == "bullet":
            return "•"
        if fmt in ("lowerLetter", "upperLetter"):
            letter = _letters(n)
            return (letter if fmt == "lowerLetter" else letter.upper()) + "."
        if fmt in ("lowerRoman", "upperRoman"):
            roman = _roman(n)
            return (roman if fmt == "lowerRoman" else roman.upper()) + "."
        return f"{n}."


def _body_elements(body: Any) -> Iterator[Any]:
    """Paragraphs and tables in order, including those inside content controls (w:sdt)."""
    for child in body:
        if child.tag in (_W + "p", _W + "tbl"):
            yield child
        elif child.tag == _W + "sdt":
            content = child.find(_W + "sdtContent")
            if content is not None:
                yield from _body_elements(content)


def _paragraph_text(p: Any) -> str:
    """Visible text of a paragraph: runs, hyperlinks, tracked insertions and text boxes, but not
    deleted text, field codes, or the duplicate fallback copy of a drawing."""
    parts: list[str] = []
    for element in p.iter(_W + "t", _W + "tab", _W + "br", _W + "cr", _W + "noBreakHyphen"):
        if any(True for _ in element.iterancestors(_MC_FALLBACK)):
            continue
        tag = element.tag
        if tag == _W + "t":
            parts.append(element.text or "")
        elif tag == _W + "tab":
            parts.append("\t")
        elif tag == _W + "noBreakHyphen":
            parts.append("-")
        else:
            parts.append("\n")
    return "".join(parts)


def _nearest(element: Any, tag: str) -> Any:
    for ancestor in element.iterancestors(tag):
        return ancestor
    return None


def _first_val(element: Any, *path: str) -> str | None:
    node = element
    for name in path:
        node = node.find(_W + name)
        if node is None:
            return None
    value = node.get(_W + "val")
    return str(value) if value is not None else None


def _heading_level(p: Any, style: _StyleInfo | None) -> int | None:
    outline = _first_val(p, "pPr", "outlineLvl")
    if outline is not None and outline.isdigit():
        return int(outline) + 1 if int(outline) < 9 else None
    if style is None:
        return None
    if style.style_id.lower() == "title":
        return 1
    match = _HEADING_NAME.match(style.name) or re.match(r"^heading(\d)$", style.style_id, re.I)
    if match:
        return max(1, int(match.group(1)))
    if style.outline is not None and style.outline < 9:
        return style.outline + 1
    return None


def _style_table(document: Any) -> dict[str, _StyleInfo]:
    """Paragraph styles by id, with outline level and numbering inherited along basedOn."""
    styles_part = document.styles.element
    raw: dict[str, Any] = {}
    default_id = None
    for style in styles_part.iter(_W + "style"):
        if style.get(_W + "type") != "paragraph":
            continue
        style_id = style.get(_W + "styleId") or ""
        raw[style_id] = style
        if style.get(_W + "default") in ("1", "true"):
            default_id = style_id

    resolved: dict[str, _StyleInfo] = {}

    def resolve(style_id: str, depth: int = 0) -> _StyleInfo | None:
        if style_id in resolved:
            return resolved[style_id]
        element = raw.get(style_id)
        if element is None or depth > 20:  # basedOn cycles exist in damaged files
            return None
        parent_id = _first_val(element, "basedOn")
        parent = resolve(parent_id, depth + 1) if parent_id else None
        name = _first_val(element, "name") or style_id
        outline = _first_val(element, "pPr", "outlineLvl")
        num_id = _first_val(element, "pPr", "numPr", "numId")
        num_level = _first_val(element, "pPr", "numPr", "ilvl")
        info = _StyleInfo(
            name=name,
            style_id=style_id,
            outline=int(outline)
            if outline and outline.isdigit()
            else (parent.outline if parent else None),
            num_id=num_id if num_id is not None else (parent.num_id if parent else None),
            num_level=int(num_level)
            if num_level and num_level.isdigit()
            else (parent.num_level if parent else 0),
        )
        resolved[style_id] = info
        return info

    for style_id in raw:
        resolve(style_id)
    if default_id is not None and default_id in resolved:
        resolved["__default__"] = resolved[default_id]
    return resolved


def _numbering_formats(document: Any) -> dict[tuple[str, int], tuple[str, int]]:
    """(numId, level) → (number format, start value) from the numbering part, if any."""
    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract: dict[str, dict[int, tuple[str, int]]] = {}
    for definition in numbering.iter(_W + "abstractNum"):
        levels: dict[int, tuple[str, int]] = {}
        for lvl in definition.iter(_W + "lvl"):
            ilvl = lvl.get(_W + "ilvl") or "0"
            fmt = _first_val(lvl, "numFmt") or "decimal"
            start = _first_val(lvl, "start") or "1"
            if ilvl.isdigit():
                levels[int(ilvl)] = (fmt, int(start) if start.isdigit() else 1)
        abstract[definition.get(_W + "abstractNumId") or ""] = levels
    formats: dict[tuple[str, int], tuple[str, int]] = {}
    for num in numbering.iter(_W + "num"):
        num_id = num.get(_W + "numId") or ""
        abstract_id = _first_val(num, "abstractNumId") or ""
        for level, value in abstract.get(abstract_id, {}).items():
            formats[(num_id, level)] = value
    return formats


def _letters(n: int) -> str:
    letters = ""
    while n > 0:
        n, rest = divmod(n - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters or "a"


def _roman(n: int) -> str:
    numerals = [
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ]
    out = ""
    for value, numeral in numerals:
        while n >= value:
            out += numeral
            n -= value
    return out or "i"
