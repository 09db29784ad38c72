"""HTML: the main content of a page as blocks, boilerplate and markup dropped.

trafilatura finds the main content (dropping navigation, footers, ads, scripts) and returns it as
a small XML vocabulary (head, p, list/item, table/row/cell, quote, code). That XML is read here
into blocks. Pages too small or too odd for trafilatura fall back to a plain walk over the HTML
with the usual boilerplate elements removed. The web fetcher reuses `parse_html` for fetched pages.

Every block's text is plain text: no tag survives, even one that was written as escaped text,
because block text ends up in snippets and answers that other code may render.
"""

from __future__ import annotations

import html as html_lib
import logging
import re
from typing import Any

import nh3
from lxml import etree
from lxml import html as lxml_html

from loci.ingest.encoding import decode_text
from loci.models import Block, BlockKind, ParsedDocument

logger = logging.getLogger(__name__)

# What still looks like a tag once entities are decoded. Bounded repeats keep this linear: an
# unbounded lazy `<!--.*?-->` goes quadratic on text with many unclosed comment openers.
_TAG = re.compile(r"<!--|-->|<[!?][^<>]{0,1024}>|</?[A-Za-z][^<>]{0,1024}>")
_RAW_TEXT_TAGS = {"script", "style", "template", "noscript"}
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)
_HEADING_LEVEL = re.compile(r"h([1-6])$")

_BOILERPLATE = (
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "footer",
    "header",
    "aside",
    "form",
    "iframe",
    "svg",
    "button",
    "select",
)
_FALLBACK_BLOCKS = frozenset(
    {"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "table", "dd", "dt"}
)
# Elements that separate words: trafilatura's line break and cells, and HTML's block elements.
_BREAKS = frozenset(
    {"lb", "br", "cell", "item", "row", "p", "div", "li", "td", "th", "tr", "dd", "dt", "section"}
)
_SHORT_PAGE_CHARS = 250
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def strip_markup(fragment: str) -> str:
    """Plain text of an HTML fragment: nh3 (a real HTML parser) drops every tag and the bodies
    of scripts and styles; entities are decoded, then anything tag-like is removed once more,
    since an escaped `&lt;b&gt;` decodes into markup."""
    cleaned = nh3.clean(fragment, tags=set(), clean_content_tags=_RAW_TEXT_TAGS)
    return _TAG.sub("", html_lib.unescape(cleaned))


def decode_html(data: bytes) -> str:
    """Bytes of a page to str, honouring a `<meta charset>` when the bytes are not UTF-8."""
    declared = _META_CHARSET.search(data[:4096])
    return decode_text(data, declared.group(1).decode("ascii") if declared else None)


def parse_html(html: str, url: str | None = None) -> ParsedDocument:
    """Main content of an HTML page; `url` helps trafilatura with metadata (site, links)."""
    import trafilatura  # slow to import; only pages pay for it

    warnings: list[str] = []
    metadata: dict[str, Any] = {}
    try:
        meta = trafilatura.extract_metadata(html, default_url=url)
    except Exception as exc:  # trafilatura raises assorted errors on odd markup
        logger.debug("metadata extraction failed: %s", exc)
        meta = None
    if meta is not None:
        for key in ("author", "sitename", "date", "description", "language", "url"):
            value = getattr(meta, key, None)
            if isinstance(value, str) and value.strip():
                metadata[key] = _clean_inline(value)
    title = _declared_title(html) or (_clean_inline(meta.title or "") if meta else None) or None
    blocks = _trafilatura_blocks(html, url)
    if sum(len(b.text) for b in blocks) < _SHORT_PAGE_CHARS:
        # On tiny pages trafilatura falls back to "all the text", navigation included; the
        # explicit boilerplate walk does better there.
        blocks = _fallback_blocks(html) or blocks
    if not blocks:
        warnings.append("no text found")
    return ParsedDocument(
        title=title, blocks=tuple(blocks), metadata=metadata, warnings=tuple(warnings)
    )


def _trafilatura_blocks(html: str, url: str | None) -> list[Block]:
    import trafilatura

    try:
        xml = trafilatura.extract(
            html,
            url=url,
            output_format="xml",
            include_tables=True,
            include_comments=False,
            include_images=False,
            include_links=False,
            include_formatting=False,
            with_metadata=False,
        )
    except Exception as exc:  # a bad page must fall back, not fail the document
        logger.debug("trafilatura failed: %s", exc)
        return []
    if not xml:
        return []
    try:
        root = etree.fromstring(xml.encode("utf-8"), _SAFE_XML)
    except etree.XMLSyntaxError as exc:
        logger.debug("unreadable trafilatura output: %s", exc)
        return []
    main = root.find("main")
    blocks: list[Block] = []
    _walk_extracted(main if main is not None else root, blocks)
    return blocks


def _walk_extracted(element: Any, blocks: list[Block]) -> None:
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "head":
            match = _HEADING_LEVEL.match(child.get("rend", ""))
            _add(blocks, "heading", _text_of(child), level=int(match.group(1)) if match else 2)
        elif tag == "list":
            _add(blocks, "list", "\n".join(_list_lines(child, depth=0)))
        elif tag == "table":
            _add(blocks, "table", _table_text(child, row_tag="row", cell_tags=("cell",)))
        elif tag == "code":
            _add(blocks, "code", _strip_lines("".join(child.itertext())))
        elif tag in ("p", "quote"):
            _add(blocks, "paragraph", _text_of(child))
        elif tag in ("comments", "graphic"):
            continue
        elif len(child):
            _walk_extracted(child, blocks)
        else:
            _add(blocks, "paragraph", _text_of(child))


def _list_lines(element: Any, depth: int) -> list[str]:
    lines: list[str] = []
    ordered = element.get("rend", "") == "ol"
    number = 0
    for item in element:
        if item.tag != "item":
            continue
        number += 1
        nested = [sub for sub in item if sub.tag == "list"]
        marker = f"{number}." if ordered else "-"
        text = _clean_inline("".join(_own_text(item, skip=nested)))
        if text:
            lines.append(f"{'  ' * depth}{marker} {text}")
        for sub in nested:
            lines.extend(_list_lines(sub, depth + 1))
    return lines


def _own_text(item: Any, skip: list[Any]) -> list[str]:
    """Text of a list item without its nested lists (they become lines of their own)."""
    parts = [item.text or ""]
    for child in item:
        if child not in skip:
            _inline_parts(child, parts)
        parts.append(child.tail or "")
    return parts


def _table_text(element: Any, row_tag: str, cell_tags: tuple[str, ...]) -> str:
    rows = []
    for row in element.iter(row_tag):
        cells = [_text_of(c) for c in row if c.tag in cell_tags]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _fallback_blocks(html: str) -> list[Block]:
    """Trafilatura found nothing (tiny or unusual page): every block element outside obvious
    boilerplate, in document order, outermost wins (a <p> inside an <li> is read with the li)."""
    try:
        tree = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        logger.debug("unparseable HTML: %s", exc)
        return []
    for element in list(tree.iter(*_BOILERPLATE)):
        if element.getparent() is not None:
            element.drop_tree()
    body = tree.find("body")
    blocks: list[Block] = []
    for element in (body if body is not None else tree).iter(*_FALLBACK_BLOCKS):
        if any(a.tag in _FALLBACK_BLOCKS for a in element.iterancestors()):
            continue
        tag = element.tag
        match = _HEADING_LEVEL.match(tag)
        if match:
            _add(blocks, "heading", _text_of(element), level=int(match.group(1)))
        elif tag == "table":
            _add(blocks, "table", _table_text(element, row_tag="tr", cell_tags=("td", "th")))
        elif tag == "pre":
            _add(blocks, "code", _strip_lines("".join(element.itertext())))
        elif tag in ("li", "dt", "dd"):
            _add(blocks, "list", "- " + _text_of(element))
        else:
            _add(blocks, "paragraph", _text_of(element))
    return _merge_list_items(blocks)


def _merge_list_items(blocks: list[Block]) -> list[Block]:
    merged: list[Block] = []
    for block in blocks:
        if block.kind == "list" and merged and merged[-1].kind == "list":
            merged[-1] = Block("list", merged[-1].text + "\n" + block.text)
        else:
            merged.append(block)
    return merged


def _declared_title(html: str) -> str | None:
    """og:title, else <title>: what the page says it is called."""
    try:
        tree = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None
    og = tree.xpath("//meta[@property='og:title']/@content")
    if og and str(og[0]).strip():
        return _clean_inline(str(og[0]))
    title = tree.findtext(".//title")
    return _clean_inline(title) if title and title.strip() else None


def _text_of(element: Any) -> str:
    parts: list[str] = []
    _inline_parts(element, parts)
    return _clean_inline("".join(parts))


def _inline_parts(element: Any, parts: list[str]) -> None:
    """Text of an element, with a space wherever a line break or a nested block separates words
    (plain itertext() would glue "one<br>two" into "onetwo")."""
    tag = element.tag if isinstance(element.tag, str) else ""
    if not tag:  # comments and processing instructions carry no content
        return
    if tag in _BREAKS:
        parts.append(" ")
    parts.append(element.text or "")
    for child in element:
        _inline_parts(child, parts)
        parts.append(child.tail or "")
    if tag in _BREAKS:
        parts.append(" ")


def _clean_inline(text: str) -> str:
    return _SPACES.sub(" ", strip_markup(text).replace("\n", " ")).strip()


def _strip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in strip_markup(text).strip("\n").split("\n"))


def _add(blocks: list[Block], kind: BlockKind, text: str, level: int = 0) -> None:
    if text.strip():
        blocks.append(Block(kind, text, level=level if kind == "heading" else 0))
