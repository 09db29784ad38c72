"""An answer as a Slack message: mrkdwn, numbered sources, and a length Slack takes.

Everything in the answer and its sources is text to show, never markup to obey: it is escaped
first (so a passage saying `<!channel>` or `<https://evil|bank>` shows literally, pings no one
and links nowhere), then only Loci's own Markdown — bold, headings and `[label](https://…)`
links — becomes Slack's. Slack cuts a message at 40,000 characters; an answer in a thread
should be far shorter, so it is capped well before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from loci.models import Location

MAX_ANSWER = 3000  # characters of the answer itself
MAX_SOURCES = 10
MAX_REPLY = 4000  # the whole message (Slack's limit is 40,000; its advice, 4,000)
SHORTENED = " … (shortened: open Loci for the full answer)"

BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
LINK = re.compile(r"\[([^\]\n]{1,300})\]\((https?://[^\s)]{1,2000})\)")


def escape(text: str) -> str:
    """Text as Slack shows it literally: its three control characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _label(text: str) -> str:
    # Inside <url|label>, a "|" or ">" would end the label early.
    return text.replace("|", "¦").replace("&gt;", "›")


def to_mrkdwn(markdown: str) -> str:
    """Markdown as Slack's mrkdwn, minimally: **bold** and headings as *bold*, [label](url)
    as <url|label>; the rest (lists, `code`, _italics_, [1] citations) reads the same."""
    text = escape(markdown)
    text = HEADING.sub(lambda m: f"*{m.group(1)}*", text)
    text = BOLD.sub(lambda m: f"*{m.group(1) or m.group(2)}*", text)
    return LINK.sub(lambda m: f"<{m.group(2)}|{_label(m.group(1))}>", text)


def document_link(public_url: str, brain: str, document_id: int, page: int | None) -> str:
    """Where a signed-in person opens the document (the web app's session admits them; anyone
    else gets a 404). A PDF opens at the cited page."""
    base = public_url.rstrip("/")
    link = f"{base}/api/v1/brains/{quote(brain, safe='')}/files/{document_id}/download"
    return link + (f"#page={page}" if page is not None else "")


def source_line(citation: Mapping[str, Any], public_url: str | None) -> str:
    """ "[2] <link|report.pdf>, page 3" — the file name (linked when the server's public
    address is known), then where in it."""
    name = str(citation.get("name") or citation.get("title") or "untitled")
    shown = escape(name)
    document_id, brain = citation.get("document_id"), citation.get("brain")
    if public_url and isinstance(document_id, int) and isinstance(brain, str):
        page = citation.get("page")
        link = document_link(
            public_url, brain, document_id, page if isinstance(page, int) else None
        )
        shown = f"<{link}|{_label(shown)}>"
    at = Location(
        page=citation.get("page"),
        line_start=citation.get("line_start"),
        line_end=citation.get("line_end"),
    )
    where = at.where(lines=True)
    if citation.get("heading_path"):
        where.append("§ " + escape(" › ".join(str(h) for h in citation["heading_path"][-2:])))
    return f"[{citation.get('number')}] " + ", ".join([shown, *where])


def answer_message(
    answer: str, citations: Sequence[Mapping[str, Any]], public_url: str | None
) -> str:
    """The reply: the answer, then its numbered sources, within `MAX_REPLY` characters."""
    body = to_mrkdwn(_shorten(answer.strip(), MAX_ANSWER))
    lines = [source_line(c, public_url) for c in citations[:MAX_SOURCES]]
    if len(citations) > MAX_SOURCES:
        lines.append(f"… and {len(citations) - MAX_SOURCES} more in Loci")
    text = body + ("\n\n*Sources*\n" + "\n".join(lines) if lines else "")
    return _shorten(text, MAX_REPLY)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - len(SHORTENED)]
    # Never end inside an escape (&amp;) or a link (<url|label>) that was cut in two.
    cut = re.sub(r"&[a-z]{0,4}$|<[^>]*$", "", cut.rsplit(" ", 1)[0] if " " in cut else cut)
    return cut + SHORTENED
