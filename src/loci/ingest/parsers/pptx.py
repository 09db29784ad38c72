"""PPTX: each slide as a page, its title as a heading, then its text, tables and speaker notes.

Read with lxml straight from the package after `Package` checked the budgets. Slides come in the
presentation's order (`p:sldIdLst`), not the order of their file names, and a slide's number is
its position there, as PowerPoint shows it; it is the block's `page`, so a citation says "slide 7".
Within a slide the title comes first, then the other shapes in the slide's own order (the order
a screen reader follows). `line_start`/`line_end` count the text lines of the slide, 1-based.
"""

from __future__ import annotations

from typing import Any

from loci.errors import BudgetExceeded, ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.package import Package, local_name
from loci.models import Block, BlockKind, Location, ParsedDocument

_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_TITLE_TYPES = frozenset({"title", "ctrTitle"})
_SKIPPED_PLACEHOLDERS = frozenset({"sldNum", "dt", "ftr", "hdr", "sldImg"})
_MAX_SLIDES = 5000


def parse_pptx(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    package = Package(data, budgets, "PPTX")
    deadline = Deadline(budgets, "PPTX")
    presentation_name = package.main_part("officeDocument", "ppt/presentation.xml")
    presentation = package.xml(presentation_name)
    relations = package.relationships(presentation_name)
    slide_parts = []
    for slide_id in presentation.iter("{*}sldId"):
        _, target = relations.get(slide_id.get(_REL_ID) or "", ("", ""))
        if target in package:
            slide_parts.append(target)
    has_slides = any(name.startswith("ppt/slides/slide") for name in package.names())
    if not slide_parts and has_slides:
        raise ParseError("corrupt PPTX: the slide list does not name the slides")
    if len(slide_parts) > _MAX_SLIDES:
        raise BudgetExceeded(
            f"PPTX has {len(slide_parts)} slides, over the {_MAX_SLIDES}-slide budget"
        )

    blocks: list[Block] = []
    first_title: str | None = None
    for number, part in enumerate(slide_parts, start=1):
        deadline.check()
        slide = _Slide(number)
        slide.read(package.xml(part))
        notes = next(
            (t for kind, t in package.relationships(part).values() if kind.endswith("/notesSlide")),
            None,
        )
        if notes is not None and notes in package:
            slide.read_notes(package.xml(notes))
        if any(b.location.line_start is not None for b in slide.blocks):  # not just "Slide 7" alone
            blocks.extend(slide.blocks)
        first_title = first_title or slide.title

    properties = package.core_properties()
    metadata: dict[str, Any] = {k: v for k, v in properties.items() if k != "title"}
    metadata["slides"] = len(slide_parts)
    warnings = () if blocks else ("no text found",)
    return ParsedDocument(
        title=properties.get("title") or first_title,
        blocks=tuple(blocks),
        metadata=metadata,
        warnings=warnings,
    )


class _Slide:
    def __init__(self, number: int) -> None:
        self.number = number
        self.blocks: list[Block] = []
        self.title: str | None = None
        self._line = 0

    def read(self, root: Any) -> None:
        tree = next(root.iter("{*}spTree"), None)
        if tree is None:
            return
        shapes = list(_shapes(tree))
        titles = [s for s in shapes if _placeholder(s) in _TITLE_TYPES]
        title_lines = [line for shape in titles for line in _text_lines(shape)]
        if title_lines:
            self.title = " ".join(" ".join(line for _, line in title_lines).split())
            self._add("heading", [self.title], level=1)
        else:
            self._add("heading", [f"Slide {self.number}"], level=1, counted=False)
        for shape in shapes:
            if shape in titles or _placeholder(shape) in _SKIPPED_PLACEHOLDERS:
                continue
            if local_name(shape) == "graphicFrame":
                rows = _table_rows(shape)
                if rows:
                    self._add("table", rows)
                continue
            lines = _text_lines(shape)
            if not lines:
                continue
            bulleted = any(level > 0 for level, _ in lines) or _placeholder(shape) == "body"
            if bulleted and len(lines) > 1:
                self._add("list", [f"{'  ' * level}• {text}" for level, text in lines])
            else:
                self._add("paragraph", [text for _, text in lines])

    def read_notes(self, root: Any) -> None:
        tree = next(root.iter("{*}spTree"), None)
        if tree is None:
            return
        lines = [
            text
            for shape in _shapes(tree)
            if _placeholder(shape) == "body"
            for _, text in _text_lines(shape)
        ]
        if lines:
            self._add("heading", ["Speaker notes"], level=2, counted=False)
            self._add("paragraph", lines)

    def _add(self, kind: BlockKind, lines: list[str], level: int = 0, counted: bool = True) -> None:
        if counted:
            start = self._line + 1
            self._line += len(lines)
            span: tuple[int | None, int | None] = (start, self._line)
        else:
            span = (None, None)
        self.blocks.append(
            Block(
                kind,
                "\n".join(lines),
                level=level,
                location=Location(page=self.number, line_start=span[0], line_end=span[1]),
            )
        )


def _shapes(tree: Any) -> Any:
    """Shapes and graphic frames in the slide's order, groups opened in place."""
    for child in tree:
        name = local_name(child)
        if name == "grpSp":
            yield from _shapes(child)
        elif name in ("sp", "graphicFrame"):
            yield child
        elif name == "AlternateContent":
            choice = next(iter(child), None)
            if choice is not None:
                yield from _shapes(choice)


def _placeholder(shape: Any) -> str | None:
    for ph in shape.iter("{*}ph"):
        return str(ph.get("type") or "body")
    return None


def _text_lines(shape: Any) -> list[tuple[int, str]]:
    """(indent level, text) of each non-empty paragraph of a shape's text body."""
    body = next((c for c in shape if local_name(c) == "txBody"), None)
    if body is None:
        return []
    lines = []
    for paragraph in body.iterchildren("{*}p"):
        text = _paragraph_text(paragraph)
        if text:
            properties = paragraph.find("{*}pPr")
            level_text = properties.get("lvl") if properties is not None else None
            level = int(level_text) if level_text and level_text.isdigit() else 0
            lines.append((min(level, 8), text))
    return lines


def _paragraph_text(paragraph: Any) -> str:
    parts: list[str] = []
    for element in paragraph.iter("{*}t", "{*}br"):
        parts.append("\n" if local_name(element) == "br" else (element.text or ""))
    return " ".join("".join(parts).split())


def _table_rows(frame: Any) -> list[str]:
    rows = []
    for row in frame.iter("{*}tr"):
        cells = [
            " ".join(" ".join(_paragraph_text(p) for p in cell.iter("{*}p")).split())
            for cell in row.iterchildren("{*}tc")
        ]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows
