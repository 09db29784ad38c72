"""What a phone's "Share → Loci" keeps: a shared link becomes a web page, anything else a capture.

A share arrives as the Web Share Target's three fields — `title`, `text`, `url` — filled as
each app likes: Chrome on Android puts a page's address in `text`, other apps write "Look at
this https://…". So a link is the `url` field, or the one address in a short `text` (a title
or a line around it); a longer text with links in it is a note, kept as a capture (inbox
draft, curated later). A link whose page cannot be fetched (a challenge page, an address the
fetcher refuses, a timeout) is still kept, as a capture with the reason: a share is never lost.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

from loci.errors import InvalidInput, LociError
from loci.graph.results import Summary
from loci.ingest.sources import is_url
from loci.models import Brain, Document
from loci.service.facade import Loci

ADDRESS = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)
SHORT_AROUND_LINK = 300  # characters of text beside a link that still read as its title
TITLE_CHARS = 300  # what a capture's title takes


@dataclass(frozen=True)
class Shared:
    saved_as: Literal["page", "capture"]
    document: Document  # the web page, or the kept capture
    draft: Summary | None  # a capture's inbox draft
    deduped: bool  # already in the brain: nothing new was written
    fetch_error: str | None  # why a shared link was kept as a capture instead of a page


def shared_link(text: str, url: str) -> str | None:
    """The address a share is about, if it is about one."""
    if is_url(url.strip()):
        return url.strip()
    found = ADDRESS.findall(text)
    if len(found) != 1:
        return None
    beside = text.replace(found[0], "")
    return found[0].rstrip(".,;:!?)") if len(beside.strip()) <= SHORT_AROUND_LINK else None


def share(loci: Loci, brain: Brain, *, title: str, text: str, url: str, actor: str) -> Shared:
    title, text, url = title.strip(), text.strip(), url.strip()
    if not (text or url):
        raise InvalidInput("nothing was shared: no text and no link")
    link = shared_link(text, url)
    fetch_error = None
    if link is not None:
        try:
            added = loci.library.add_url(brain, link)
        except LociError as error:
            fetch_error = error.message
        else:
            return Shared("page", added.document, None, added.deduped, None)
    parts = [text] if not url or url in text else [text, url]
    body = "\n\n".join(p for p in parts if p)
    if title and title not in body:
        short = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
    else:
        short = ""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    captured = loci.library.save(
        brain, body, title=short or None, source=f"share:{stamp}", actor=actor
    )
    return Shared("capture", captured.item, captured.draft, captured.deduped, fetch_error)
