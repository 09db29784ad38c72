"""Markdown: frontmatter into metadata (its aliases and description also as text), then one block
per top-level markdown element.

markdown-it (CommonMark + GFM tables) finds the blocks and their line maps; the text of a block
is taken from the source lines themselves, so what a citation shows is what the author wrote and
line numbers match the file, frontmatter included. Inline parsing is switched off: only heading
text is needed from it, and it is the slow part on big files.
"""

from __future__ import annotations

import datetime
import logging
import re
import threading
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from loci.ingest.encoding import decode_text
from loci.ingest.parsers.html import strip_markup
from loci.models import Block, BlockKind, Location, ParsedDocument

logger = logging.getLogger(__name__)

_FRONTMATTER_MAX_CHARS = 256 * 1024
_METADATA_MAX_NODES = 10_000  # YAML aliases can make a small frontmatter expand enormously
_FENCES = ("---", "...")
_parsers = threading.local()

_SOURCE_KINDS: dict[str, BlockKind] = {
    "paragraph_open": "paragraph",
    "blockquote_open": "paragraph",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "table_open": "table",
    "fence": "code",
    "code_block": "code",
}


def _markdown() -> MarkdownIt:
    # One parser a thread: building one costs as much as parsing a short note, and a parser
    # keeps its rules in itself (nothing of a parse), but is not documented as thread-safe.
    parser: MarkdownIt | None = getattr(_parsers, "markdown", None)
    if parser is None:
        parser = _parsers.markdown = (
            MarkdownIt("commonmark", {"html": True}).enable("table").disable("inline")
        )
    return parser


def parse_markdown(data: bytes) -> ParsedDocument:
    return parse_markdown_text(decode_text(data))


def parse_markdown_text(text: str) -> ParsedDocument:
    lines = text.split("\n")
    warnings: list[str] = []
    metadata: dict[str, Any] = {}
    offset = _frontmatter_length(lines)
    if offset:
        metadata = _read_frontmatter("\n".join(lines[1 : offset - 1]), warnings)
    body = "\n".join(lines[offset:])
    blocks = _frontmatter_blocks(metadata, lines, offset) + _blocks(
        _markdown().parse(body), lines, offset
    )
    title = metadata.get("title") if isinstance(metadata.get("title"), str) else None
    if not title:
        heading = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), None)
        title = _readable(heading) if heading else None
    if not blocks:
        warnings.append("no text found")
    return ParsedDocument(
        title=title, blocks=tuple(blocks), metadata=metadata, warnings=tuple(warnings)
    )


_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HTML_IMAGE = re.compile(r"<img\b[^>]*?\balt\s*=\s*[\"']([^\"']*)[\"'][^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_`]|[*_`](?!\w)")


def _readable(heading: str) -> str | None:
    """A heading as a reader sees it, for a title: an image by its alt text, a link by its
    words, without emphasis or tags ("# ![libsodium](…/logo.png)" is titled "libsodium").
    None when nothing readable is left (a logo without alt text): the file name serves."""
    text = _IMAGE.sub(r"\1", heading)
    text = _HTML_IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = " ".join(_EMPHASIS.sub("", text).split())
    return text or None


# Frontmatter keys whose value says what the note is about, in a sentence or two (Obsidian
# Publish, Hugo, Jekyll, Docusaurus and MkDocs pages carry one): searchable text, not metadata.
SUMMARY_KEYS = ("description", "summary", "abstract", "excerpt")


def _frontmatter_blocks(metadata: dict[str, Any], lines: list[str], offset: int) -> list[Block]:
    """The frontmatter values that are text a person would search for, each a passage of its
    own cited at the frontmatter lines that hold it: the note's other names (Obsidian's
    `aliases:`), so a search for a name the note goes by finds it, and its description, which
    often says what the note is about in words its body never uses."""
    blocks: list[Block] = []
    value = metadata.get("aliases", metadata.get("alias"))
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = [str(n).strip() for n in names if n is not None and str(n).strip()]
    if names:
        where = _key_lines(lines, offset, ("aliases", "alias"))
        blocks.append(Block("paragraph", "Also called: " + ", ".join(names), location=where))
    for key in SUMMARY_KEYS:
        summary = metadata.get(key)
        if isinstance(summary, str) and summary.strip():
            where = _key_lines(lines, offset, (key,))
            blocks.append(Block("paragraph", " ".join(summary.split()), location=where))
            break  # one is enough: a page with both says the same thing twice
    return blocks


def _key_lines(lines: list[str], offset: int, keys: tuple[str, ...]) -> Location:
    """The 1-based lines of a top-level frontmatter key: its own line and the indented or list
    lines under it (a YAML list, a folded string)."""
    start = next(
        (i for i in range(1, offset - 1) if lines[i].startswith(tuple(f"{k}:" for k in keys))),
        1,
    )
    end = start + 1
    while end < offset - 1 and lines[end].startswith((" ", "\t", "-")):
        end += 1
    return Location(line_start=start + 1, line_end=end)


def _frontmatter_length(lines: list[str]) -> int:
    """Number of lines the frontmatter takes (fences included), 0 when there is none."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    size = 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in _FENCES:
            return index + 1
        size += len(lines[index]) + 1
        if size > _FRONTMATTER_MAX_CHARS:
            break
    return 0  # never closed (or absurdly long): a thematic break, not frontmatter


def _read_frontmatter(source: str, warnings: list[str]) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        warnings.append(f"frontmatter is not valid YAML ({reason}); ignored")
        return {}
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        warnings.append("frontmatter is not a mapping of keys to values; ignored")
        return {}
    budget = [_METADATA_MAX_NODES]
    try:
        metadata: dict[str, Any] = {str(k): _json_safe(v, budget) for k, v in loaded.items()}
    except _TooBig:
        warnings.append("frontmatter expands to too many values; ignored")
        return {}
    tags = metadata.get("tags")
    if isinstance(tags, str):
        metadata["tags"] = [t.strip() for t in tags.split(",") if t.strip()]
    elif isinstance(tags, list):
        metadata["tags"] = [str(t) for t in tags if t is not None and str(t).strip()]
    elif tags is not None:
        metadata["tags"] = [str(tags)]
    if "title" in metadata and metadata["title"] is not None:
        metadata["title"] = str(metadata["title"])
    return metadata


class _TooBig(Exception):
    pass


def _json_safe(value: Any, budget: list[int]) -> Any:
    """Metadata is stored as JSON: dates become ISO strings, anything exotic becomes str."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json_safe(v, budget) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v, budget) for v in value]
    return str(value)


def _blocks(tokens: list[Token], lines: list[str], offset: int) -> list[Block]:
    """Top-level tokens to blocks; `offset` is where the markdown body starts in `lines`."""
    blocks: list[Block] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.level != 0 or token.map is None:
            continue
        start, end = token.map[0] + offset, token.map[1] + offset
        if token.type == "heading_open":
            content = tokens[index].content.strip() if index < len(tokens) else ""
            if content:
                level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
                blocks.append(
                    Block(
                        "heading",
                        content,
                        level=level,
                        location=Location(line_start=start + 1, line_end=end),
                    )
                )
            continue
        if token.type == "html_block":
            text = strip_markup(token.content).strip()
            if text:
                blocks.append(
                    Block("paragraph", text, location=Location(line_start=start + 1, line_end=end))
                )
            continue
        kind = _SOURCE_KINDS.get(token.type)
        if kind is None:  # hr and anything unknown carry no text of their own
            continue
        while end > start and not lines[end - 1].strip():
            end -= 1  # markdown-it counts the blank lines after a list into its map
        text = "\n".join(line.rstrip() for line in lines[start:end]).strip("\n")
        if text.strip():
            blocks.append(Block(kind, text, location=Location(line_start=start + 1, line_end=end)))
    return blocks
