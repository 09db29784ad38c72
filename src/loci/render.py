"""Markdown to HTML that is safe to put in a page: rendered without raw HTML, then sanitized.

Notes are written by people and agents and may quote anything; the HTML that reaches a browser
keeps formatting and links and loses scripts, event handlers and styles.
"""

from __future__ import annotations

import functools

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code", "pre",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


@functools.cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown_to_safe_html(text: str) -> str:
    html = _markdown().render(text)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
