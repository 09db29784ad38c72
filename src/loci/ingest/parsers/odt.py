"""OpenDocument text (.odt): headings, paragraphs, lists and tables in body order.

Read with lxml from `content.xml` after `Package` checked the budgets; title and author come from
`meta.xml`. List markers follow the list's style (numbered or bulleted, per level), looked up in
the automatic styles of the content and the common styles. As for DOCX, `line_start`/`line_end`
count body paragraphs and table rows, 1-based. Footnotes, annotations, tracked deletions and
generated indexes (a table of contents repeats the headings) are left out.
"""

from __future__ import annotations

from typing import Any

from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.package import Package, local_name
from loci.models import Block, Location, ParsedDocument

_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OUTLINE_LEVEL = f"{{{_TEXT}}}outline-level"
_STYLE_NAME = f"{{{_TEXT}}}style-name"
_LEVEL = f"{{{_TEXT}}}level"
_SPACES = f"{{{_TEXT}}}c"
_SKIPPED = frozenset(
    {
        "note",
        "annotation",
        "annotation-end",
        "tracked-changes",
        "sequence-decls",
        "variable-decls",
        "user-field-decls",
        "table-of-content",
        "alphabetical-index",
        "illustration-index",
        "bibliography",
        "user-index",
        "object-index",
        "table-index",
        "forms",
        "soft-page-break",
    }
)
_CHECK_EVERY = 200


def parse_odt(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    package = Package(data, budgets, "ODT")
    content = package.xml("content.xml")
    list_styles = _list_styles(content)
    if "styles.xml" in package:
        list_styles = {**_list_styles(package.xml("styles.xml")), **list_styles}
    body = next(content.iter(f"{{{_OFFICE}}}text"), None)
    reader = _Reader(list_styles, Deadline(budgets, "ODT"))
    if body is not None:
        reader.walk(body)
    metadata = _metadata(package) if "meta.xml" in package else {}
    title = metadata.pop("title", None) or next(
        (b.text for b in reader.blocks if b.kind == "heading" and b.level == 1), None
    )
    warnings = () if reader.blocks else ("no text found",)
    return ParsedDocument(
        title=title, blocks=tuple(reader.blocks), metadata=metadata, warnings=warnings
    )


class _Reader:
    def __init__(self, list_styles: dict[str, dict[int, str]], deadline: Deadline) -> None:
        self.blocks: list[Block] = []
        self._list_styles = list_styles
        self._deadline = deadline
        self._line = 0
        self._seen = 0

    def walk(self, container: Any) -> None:
        for child in container:
            name = local_name(child)
            self._seen += 1
            if self._seen % _CHECK_EVERY == 0:
                self._deadline.check()
            if name in _SKIPPED or not name:
                continue
            if name == "h":
                self._line += 1
                text = _clean(_inline(child))
                if text:
                    level_text = child.get(_OUTLINE_LEVEL) or "1"
                    level = int(level_text) if level_text.isdigit() else 1
                    self._block("heading", text, self._line, self._line, max(1, min(level, 9)))
            elif name == "p":
                self._line += 1
                text = _clean(_inline(child))
                if text:
                    self._block("paragraph", text, self._line, self._line)
            elif name == "list":
                first = self._line + 1
                lines: list[str] = []
                self._list(child, 0, child.get(_STYLE_NAME), lines)
                if lines:
                    self._block("list", "\n".join(lines), first, self._line)
            elif name == "table":
                self._table(child)
            else:  # sections and other containers
                self.walk(child)

    def _list(self, element: Any, depth: int, style: str | None, lines: list[str]) -> None:
        style = element.get(_STYLE_NAME) or style
        kind = self._list_styles.get(style or "", {}).get(depth + 1, "bullet")
        number = 0
        for item in element:
            if local_name(item) not in ("list-item", "list-header"):
                continue
            number += 1
            marker = f"{number}." if kind == "number" else "•"
            for part in item:
                part_name = local_name(part)
                if part_name == "list":
                    self._list(part, depth + 1, style, lines)
                elif part_name in ("p", "h"):
                    self._line += 1
                    text = _clean(_inline(part))
                    if text:
                        lines.append(f"{'  ' * depth}{marker} {text}")
                        marker = " " * len(marker)  # a second paragraph of the same item

    def _table(self, table: Any) -> None:
        rows = []
        first = self._line + 1
        for row in table.iter(f"{{{_TABLE}}}table-row"):
            if _nearest_table(row) is not table:
                continue  # rows of a nested table are read as text of their cell
            self._line += 1
            cells = []
            for cell in row:
                if local_name(cell) != "table-cell":
                    continue
                paragraphs = (_inline(p) for p in cell.iter(f"{{{_TEXT}}}p", f"{{{_TEXT}}}h"))
                cells.append(_clean(" ".join(paragraphs)))
            while cells and not cells[-1]:
                cells.pop()  # ODF pads rows with repeated empty cells
            if any(cells):
                rows.append(" | ".join(cells))
        if rows:
            self._block("table", "\n".join(rows), first, self._line)

    def _block(self, kind: Any, text: str, start: int, end: int, level: int = 0) -> None:
        self.blocks.append(
            Block(kind, text, level=level, location=Location(line_start=start, line_end=end))
        )


def _inline(element: Any) -> str:
    parts: list[str] = [element.text or ""]
    for child in element:
        name = local_name(child)
        if name == "s":
            count = child.get(_SPACES) or "1"
            parts.append(" " * min(int(count) if count.isdigit() else 1, 100))
        elif name == "tab":
            parts.append("\t")
        elif name == "line-break":
            parts.append("\n")
        elif name and name not in _SKIPPED and name not in ("deletion", "frame"):
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _clean(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.split("\n") if line.strip())


def _nearest_table(element: Any) -> Any:
    for ancestor in element.iterancestors(f"{{{_TABLE}}}table"):
        return ancestor
    return None


def _list_styles(root: Any) -> dict[str, dict[int, str]]:
    """List style name → {level: "number" | "bullet"}."""
    styles: dict[str, dict[int, str]] = {}
    for style in root.iter(f"{{{_TEXT}}}list-style"):
        name = style.get("{urn:oasis:names:tc:opendocument:xmlns:style:1.0}name") or ""
        levels: dict[int, str] = {}
        for level in style:
            kind = local_name(level)
            value = level.get(_LEVEL) or ""
            if value.isdigit():
                levels[int(value)] = "number" if kind == "list-level-style-number" else "bullet"
        styles[name] = levels
    return styles


def _metadata(package: Package) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = {
        "title": "title",
        "creator": "author",
        "initial-creator": "author",
        "subject": "subject",
        "keyword": "keywords",
        "creation-date": "created",
        "date": "modified",
    }
    for element in package.xml("meta.xml").iter():
        key = names.get(local_name(element))
        text = " ".join("".join(element.itertext()).split())
        if key and text and key not in out:
            out[key] = text[:500]
    return out
