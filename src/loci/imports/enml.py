"""ENML, the XHTML Evernote keeps a note's text in, as Markdown a person can read and a search
can cite: headings as headings, lists as lists, checkboxes (`<en-todo checked="true"/>`) as
"[x]"/"[ ]", tables as Markdown tables (so the chunker keeps a row with its header), and an
attachment shown in the note (`<en-media hash=…>`) named where it sat.

ENML is parsed as XML, strictly, so a broken note is told apart from a good one (it fails
alone, with the parser's reason) rather than guessed at. Its DOCTYPE names Evernote's DTD,
which is where `&nbsp;` and the other HTML entity names come from; that DTD is never loaded:
the HTML names are put in as the characters they stand for, and a note whose DOCTYPE declares
anything of its own is refused."""

from __future__ import annotations

import html.entities
import re
from dataclasses import dataclass

from lxml import etree

_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_DOCTYPE = re.compile(r"<!DOCTYPE[^>\[]*([\[>])", re.IGNORECASE)
_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})
_CONTAINERS = frozenset(
    {"en-note", "div", "p", "section", "article", "header", "footer", "center", "font", "dl"}
    | {"dt", "dd", "address", "main", "aside", "nav", "figure", "figcaption"}
)
_LINE_BREAK = "\x00"  # a <br/> in an inline run, until the run is cut into lines


class EnmlError(Exception):
    """The note cannot be read; its message is the reason, as the person will see it."""


@dataclass(frozen=True)
class Media:
    """A resource an `<en-media>` tag can point at (by the MD5 of its bytes)."""

    name: str
    mime_type: str | None


def enml_markdown(content: str, media: dict[str, Media]) -> str:
    if not content.strip():
        return ""
    note = _parse(content)
    return _Renderer(media).container(note).strip()


def text_of(element: etree._Element | None) -> str:
    """An element's text with its descendants', an HTML entity name left by the parser (not
    resolved, on purpose) read as its character."""
    if element is None:
        return ""
    parts: list[str] = []
    for node in element.iter():
        if node is not element:
            if isinstance(node, etree._Entity):
                parts.append(_entity_text(node.name))
            elif isinstance(node.tag, str) and node.text:
                parts.append(node.text)
        elif node.text:
            parts.append(node.text)
        if node is not element and node.tail:
            parts.append(node.tail)
    return "".join(parts)


def _entity_text(name: str) -> str:
    code = html.entities.name2codepoint.get(name)
    return chr(code) if code is not None else ""


def _parse(content: str) -> etree._Element:
    text = _DECLARATION.sub("", content, count=1)
    doctype = _DOCTYPE.search(text)
    if doctype and doctype.group(1) == "[":
        raise EnmlError("its ENML declares XML entities or a DTD of its own; refused")
    if doctype:
        text = text[: doctype.start()] + text[doctype.end() :]
    text = _ENTITY.sub(_numeric, text)
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.XMLSyntaxError as error:
        raise EnmlError(f"its ENML is not well-formed ({error})") from None
    if root.tag != "en-note":
        raise EnmlError(f"its content is not ENML (<{root.tag}> where <en-note> belongs)")
    return root


def _numeric(match: re.Match[str]) -> str:
    name = match.group(1)
    code = html.entities.name2codepoint.get(name)
    if name in _XML_ENTITIES or code is None:
        return match.group(0)  # the XML five stay; an unknown name fails the note, named
    return f"&#{code};"


class _Renderer:
    def __init__(self, media: dict[str, Media]) -> None:
        self.media = media

    def container(self, element: etree._Element) -> str:
        """An element holding blocks and inline runs: its blocks, blank-line separated."""
        blocks: list[str] = []
        run: list[str] = [_words(element.text)]
        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag in _CONTAINERS or self._is_block(tag):
                blocks.append(self._paragraph(run))
                run = []
                blocks.append(self.block(child))
            else:
                run.append(self.inline(child))
            run.append(_words(child.tail))
        blocks.append(self._paragraph(run))
        return "\n\n".join(b for b in blocks if b.strip())

    def block(self, element: etree._Element) -> str:
        tag = element.tag
        if tag in _CONTAINERS:
            return self.container(element)
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            return "#" * int(tag[1]) + " " + self._one_line(element)
        if tag in ("ul", "ol"):
            return self._list(element, ordered=tag == "ol")
        if tag == "table":
            return self._table(element)
        if tag == "blockquote":
            return "\n".join("> " + line for line in self.container(element).split("\n"))
        if tag == "pre":
            code = "".join(element.itertext()).strip("\n")
            return f"```\n{code}\n```"
        if tag == "hr":
            return "---"
        return self.container(element)  # li outside a list, and the like

    def inline(self, element: etree._Element) -> str:
        if isinstance(element, etree._Entity):
            return _entity_text(element.name)
        if not isinstance(element.tag, str):  # a comment or processing instruction
            return ""
        tag = element.tag
        if tag == "br":
            return _LINE_BREAK
        if tag == "en-todo":
            return "[x] " if element.get("checked", "").lower() == "true" else "[ ] "
        if tag == "en-media":
            found = self.media.get((element.get("hash") or "").lower())
            if found is None:
                return "[attachment]"
            if (found.mime_type or "").startswith("image/"):
                return f"![{found.name}]({_target(found.name)})"
            return f"[attachment: {found.name}]"
        if tag == "en-crypt":
            return "[encrypted text]"
        inner = _words(element.text) + "".join(self.inline(c) + _words(c.tail) for c in element)
        if tag == "a":
            href = (element.get("href") or "").strip()
            label = inner.strip()
            if href and label and label != href:
                return f"[{label}]({href})"
            return label or href
        return inner

    def _is_block(self, tag: str) -> bool:
        return tag in ("ul", "ol", "table", "blockquote", "pre", "hr", "li") or (
            len(tag) == 2 and tag[0] == "h" and tag[1] in "123456"
        )

    def _paragraph(self, run: list[str]) -> str:
        lines = [" ".join(line.split()) for line in "".join(run).split(_LINE_BREAK)]
        text = "\n".join(line for line in lines if line)
        # A line that starts with a checkbox is a task: a list item, as Markdown writes one.
        if text.startswith(("[x] ", "[ ] ")):
            text = "\n".join(
                "- " + line if line.startswith(("[x] ", "[ ] ")) else "  " + line
                for line in text.split("\n")
            )
        return text

    def _one_line(self, element: etree._Element) -> str:
        return " ".join(self.container(element).split())

    def _list(self, element: etree._Element, *, ordered: bool) -> str:
        lines: list[str] = []
        number = 0
        for child in element:
            if not isinstance(child.tag, str):
                continue
            if child.tag in ("ul", "ol"):  # a nested list written outside its <li>
                lines += ["  " + line for line in self.block(child).split("\n")]
                continue
            number += 1
            marker = f"{number}. " if ordered else "- "
            text = self.container(child).replace("\n\n", "\n")
            if text.startswith("- [") and text[3:5] in ("x]", " ]"):
                text = text[2:]  # the checkbox of a task item, already "- "-marked
            first, *rest = text.split("\n")
            lines.append(marker + first)
            # What else the item holds (a second line, a nested list) goes under its text.
            lines += [" " * len(marker) + line for line in rest]
        return "\n".join(lines)

    def _table(self, element: etree._Element) -> str:
        rows: list[list[str]] = []
        for row in element.iter("tr"):
            cells = [
                self._one_line(cell).replace("|", "\\|")
                for cell in row
                if isinstance(cell.tag, str) and cell.tag in ("td", "th")
            ]
            if any(cells):
                rows.append(cells)
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        lines.insert(1, "|" + " --- |" * width)
        return "\n".join(lines)


def _words(text: str | None) -> str:
    """Runs of white space as one space, as a browser shows them (split and join: several
    times faster than a regular expression on long runs of words)."""
    if not text:
        return ""
    inner = " ".join(text.split())
    if not inner:
        return " "
    return (" " if text[0].isspace() else "") + inner + (" " if text[-1].isspace() else "")


def _target(name: str) -> str:
    return name.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
