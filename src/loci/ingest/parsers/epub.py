"""EPUB: chapters in spine (reading) order, each a heading over its text; title and authors.

The package is opened under the budgets (`Package`); `META-INF/container.xml` names the OPF file,
whose metadata gives title, authors and language, whose manifest and spine give the chapter files
in reading order. A chapter's heading is its entry in the table of contents (the EPUB 3 nav
document, else the EPUB 2 NCX), else its first heading, else "Chapter N". Chapter XHTML is read
with lxml's HTML parser (which never expands entities) into blocks; like every HTML in Loci, no
markup survives into the text. EPUB files legitimately carry DOCTYPEs (NCX, XHTML), so they are
not refused, only never resolved.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any
from urllib.parse import unquote

from loci.errors import ParseError
from loci.ingest.encoding import decode_text
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.html import strip_markup
from loci.ingest.parsers.package import Package, local_name, resolve
from loci.models import Block, BlockKind, ParsedDocument

_XHTML_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/xml"})
_DROPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "svg", "math", "nav", "iframe"}
)
_CONTAINERS = frozenset(
    {
        "body",
        "div",
        "section",
        "article",
        "main",
        "aside",
        "header",
        "footer",
        "blockquote",
        "figure",
        "figcaption",
        "dl",
        "center",
        "hgroup",
        "details",
        "summary",
        "form",
    }
)
_HEADING = re.compile(r"h([1-6])$")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
# The HTML parser reads a DOCTYPE's internal subset (entity declarations) as text; it is never
# expanded, only dropped, so a bomb in a chapter neither inflates nor shows up in the book.
_DOCTYPE = re.compile(r"^\s*(?:<!--.*?-->\s*)*<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>", re.S | re.I)


def parse_epub(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    package = Package(data, budgets, "EPUB")
    deadline = Deadline(budgets, "EPUB")
    container = package.xml("META-INF/container.xml", allow_doctype=True)
    rootfile = next(container.iter("{*}rootfile"), None)
    opf_name = unquote(rootfile.get("full-path") or "") if rootfile is not None else ""
    if not opf_name or opf_name not in package:
        raise ParseError("corrupt EPUB: the container does not name a package document")
    opf = package.xml(opf_name, allow_doctype=True)
    folder = posixpath.dirname(opf_name)

    manifest: dict[str, tuple[str, str, str]] = {}  # id → (part, media type, properties)
    for item in opf.iter("{*}item"):
        href = unquote(item.get("href") or "")
        if href:
            manifest[item.get("id") or ""] = (
                resolve(folder, href),
                (item.get("media-type") or "").lower(),
                item.get("properties") or "",
            )
    spine = next(opf.iter("{*}spine"), None)
    chapters = [
        manifest[ref.get("idref") or ""][0]
        for ref in (spine.iter("{*}itemref") if spine is not None else ())
        if (ref.get("idref") or "") in manifest
        and manifest[ref.get("idref") or ""][1] in _XHTML_TYPES
    ]
    labels = _toc_labels(package, manifest, spine)

    blocks: list[Block] = []
    for number, part in enumerate(dict.fromkeys(chapters), start=1):
        deadline.check()
        if part not in package:
            continue
        chapter = _chapter_blocks(package.read(part, allow_doctype=True))
        if not any(b.kind != "heading" for b in chapter):
            continue  # a cover image or an empty page
        heading = labels.get(part) or next(
            (b.text for b in chapter if b.kind == "heading"), f"Chapter {number}"
        )
        blocks.append(Block("heading", heading, level=1))
        if chapter[0].kind == "heading" and _repeats(chapter[0].text, heading):
            chapter = chapter[1:]  # the chapter's own title under its table-of-contents name
        for block in chapter:
            if block.kind == "heading":
                block = Block("heading", block.text, level=min(block.level + 1, 6))
            blocks.append(block)

    metadata = _metadata(opf)
    title = metadata.pop("title", None)
    warnings = () if blocks else ("no text found",)
    return ParsedDocument(title=title, blocks=tuple(blocks), metadata=metadata, warnings=warnings)


def _metadata(opf: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    authors: list[str] = []
    section = next(opf.iter("{*}metadata"), None)
    if section is None:
        return out
    for element in section:
        name = local_name(element)
        text = _clean("".join(element.itertext()))[:500]
        if not text:
            continue
        if name == "creator":
            authors.append(text)
        elif name in ("title", "language", "publisher", "date", "description") and name not in out:
            out[name] = text
    if authors:
        out["author"] = ", ".join(authors)
    return out


def _toc_labels(
    package: Package, manifest: dict[str, tuple[str, str, str]], spine: Any
) -> dict[str, str]:
    """Chapter part → its first label in the table of contents."""
    labels: dict[str, str] = {}
    nav = next((m for m in manifest.values() if "nav" in m[2].split()), None)
    if nav is not None and nav[0] in package:
        tree = _html_tree(package.read(nav[0], allow_doctype=True))
        navs = [n for n in tree.iter("nav") if "toc" in (n.get("epub:type") or "")]
        for element in navs[:1] or list(tree.iter("nav"))[:1]:
            for link in element.iter("a"):
                target = resolve(posixpath.dirname(nav[0]), unquote(link.get("href") or ""))
                label = _clean(strip_markup(link.text_content()))
                if label:
                    labels.setdefault(target, label)
    if labels:
        return labels
    ncx_id = spine.get("toc") if spine is not None else None
    ncx = manifest.get(ncx_id or "") or next(
        (m for m in manifest.values() if m[1] == "application/x-dtbncx+xml"), None
    )
    if ncx is not None and ncx[0] in package:
        root = package.xml(ncx[0], allow_doctype=True)
        for point in root.iter("{*}navPoint"):
            text = point.find("{*}navLabel/{*}text")
            content = point.find("{*}content")
            if text is None or content is None:
                continue
            target = resolve(posixpath.dirname(ncx[0]), unquote(content.get("src") or ""))
            label = _clean(strip_markup(text.text or ""))
            if label:
                labels.setdefault(target, label)
    return labels


def _html_tree(data: bytes) -> Any:
    from lxml import etree
    from lxml import html as lxml_html

    text = _XML_DECLARATION.sub("", decode_text(data), count=1)
    text = _DOCTYPE.sub("", text, count=1)
    try:
        return lxml_html.document_fromstring(text or "<html></html>")
    except (etree.ParserError, ValueError):
        return lxml_html.document_fromstring("<html></html>")


def _chapter_blocks(data: bytes) -> list[Block]:
    tree = _html_tree(data)
    body = tree.find("body")
    walker = _Walker()
    walker.walk(body if body is not None else tree)
    walker.flush()
    return walker.blocks


class _Walker:
    """Block elements become blocks; loose text between them becomes paragraphs."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._run: list[str] = []

    def walk(self, element: Any) -> None:
        self._run.append(element.text or "")
        for child in element:
            tag = child.tag.lower() if isinstance(child.tag, str) else ""
            if tag and tag not in _DROPPED:
                self._element(child, tag)
            self._run.append(child.tail or "")

    def flush(self) -> None:
        self._add("paragraph", _clean(strip_markup("".join(self._run))))
        self._run = []

    def _element(self, element: Any, tag: str) -> None:
        heading = _HEADING.match(tag)
        if heading:
            self.flush()
            self._add("heading", _text(element), int(heading.group(1)))
        elif tag in ("p", "dd", "dt", "address"):
            self.flush()
            self._add("paragraph", _text(element))
        elif tag in ("ul", "ol"):
            self.flush()
            self._add("list", "\n".join(_list_lines(element, 0)))
        elif tag == "pre":
            self.flush()
            code = strip_markup("".join(element.itertext())).strip("\n")
            self._add("code", "\n".join(line.rstrip() for line in code.split("\n")))
        elif tag == "table":
            self.flush()
            rows = []
            for row in element.iter("tr"):
                cells = [_text(c) for c in row if c.tag in ("td", "th")]
                if any(cells):
                    rows.append(" | ".join(cells))
            self._add("table", "\n".join(rows))
        elif tag in _CONTAINERS or tag == "li":
            self.flush()
            self.walk(element)
            self.flush()
        elif tag == "br":
            self._run.append("\n")
        else:  # inline: span, a, em, img alt text is not read
            self._run.append(_inline_text(element))

    def _add(self, kind: BlockKind, text: str, level: int = 0) -> None:
        if text.strip():
            self.blocks.append(Block(kind, text, level=level if kind == "heading" else 0))


def _list_lines(element: Any, depth: int) -> list[str]:
    lines: list[str] = []
    ordered = element.tag == "ol"
    number = 0
    for item in element:
        if item.tag != "li":
            continue
        number += 1
        # lists directly inside this item (not those nested deeper) become indented lines
        nested = [
            sub
            for sub in item.iter("ul", "ol")
            if next(sub.iterancestors("ul", "ol"), None) is element
        ]
        text = _clean(strip_markup(_inline_text(item, skip=nested)))
        if text:
            lines.append(f"{'  ' * depth}{f'{number}.' if ordered else '-'} {text}")
        for sub in nested:
            lines.extend(_list_lines(sub, depth + 1))
    return lines


def _inline_text(element: Any, skip: list[Any] | None = None) -> str:
    """Text of an element with a space where a break or a nested block separates words."""
    if not isinstance(element.tag, str) or element.tag in _DROPPED:
        return ""
    if skip and element in skip:
        return ""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str) and child.tag in ("br", "p", "div", "li"):
            parts.append(" ")
        parts.append(_inline_text(child, skip))
        parts.append(child.tail or "")
    return "".join(parts)


def _text(element: Any) -> str:
    return _clean(strip_markup(_inline_text(element)))


def _clean(text: str) -> str:
    return " ".join(text.split())


def _repeats(heading: str, label: str) -> bool:
    """True when `heading` says what `label` says ("Spring Tides" under "I. Spring Tides")."""
    a, b = _clean(heading).casefold(), _clean(label).casefold()
    return a in b or b in a
