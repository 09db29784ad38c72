"""The Markdown an imported note is kept as: its title as the first heading, then one line of
what its tool knew of it (notebook, tags, dates), then its text. The line makes those words
findable ("notes from my Travel notebook") and the heading gives every passage its title."""

from __future__ import annotations

from collections.abc import Sequence

from loci.ingest.sources import clean_name


def note_markdown(
    title: str,
    text: str,
    *,
    where: Sequence[str] = (),
    tags: Sequence[str] = (),
    created: str | None = None,
    updated: str | None = None,
    url: str | None = None,
) -> bytes:
    facts: list[str] = []
    if where:
        facts.append(" / ".join(where))
    if tags:
        facts.append("tags: " + ", ".join(tags))
    if created:
        facts.append("created " + created[:10])
    if updated and updated[:10] != (created or "")[:10]:
        facts.append("updated " + updated[:10])
    if url:
        facts.append(f"<{url}>")
    head = f"# {_one_line(title)}\n\n" if title.strip() else ""
    line = ("*" + " · ".join(_one_line(f) for f in facts) + "*\n\n") if facts else ""
    return (head + line + text.strip() + "\n").encode("utf-8")


def file_name(title: str, fallback: str, suffix: str = ".md") -> str:
    """A file name for an item from its title (cleaned, at most 120 characters)."""
    if not title.strip():
        return fallback + suffix
    base = clean_name(_one_line(title).replace("/", "-"))[:120].strip()
    return base + suffix


def _one_line(text: str) -> str:
    return " ".join(text.split())
