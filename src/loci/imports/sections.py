"""Text of another tool put under a heading of the import's own (a conversation's turn, a
note under its title) without changing where it is cited. Chunks carry the stack of the
document's top-level headings, so a "## Step 1" inside an assistant's answer would otherwise
start a section of its own and a passage under it would be cited to "Step 1", not to the turn
that holds it. Its headings are pushed down below the import's instead ("## Step 1" under a
"## ChatGPT" turn becomes "#### Step 1"), setext ones ("Title" over "===") included; what is
inside code fences is left alone, since markdown-it tells a heading from a `# comment`."""

from __future__ import annotations

import re
import threading

from markdown_it import MarkdownIt

# Only text with a line that could be a heading is parsed: most notes and turns have none.
_MAYBE_HEADING = re.compile(r"^ {0,3}(#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)
_parsers = threading.local()


def _markdown() -> MarkdownIt:
    parser: MarkdownIt | None = getattr(_parsers, "markdown", None)
    if parser is None:
        parser = _parsers.markdown = MarkdownIt("commonmark").disable("inline")
    return parser


def demote_headings(text: str, below: int) -> str:
    """`text` with every top-level heading moved `below` levels down (at most to level 6)."""
    if not _MAYBE_HEADING.search(text):
        return text
    lines = text.split("\n")
    for token in _markdown().parse(text):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        start, end = token.map
        level = min(int(token.tag[1:]) + below, 6)
        if token.markup.startswith("#"):
            lines[start] = "#" * level + " " + lines[start].lstrip(" ").lstrip("#").lstrip()
        else:  # setext: the heading's lines, then its underline
            words = " ".join(line.strip() for line in lines[start : end - 1])
            lines[start] = "#" * level + " " + words
            for index in range(start + 1, end):
                lines[index] = ""
    return "\n".join(lines)
