"""The line that tells a model where a passage sits: its document's title and heading path.

A passage cut from a document loses what the document is about ("the dose was halved" — of
what?). The embedder reads this line before each chunk's text when it indexes (so the vector
keeps that meaning), and the reranker reads it before each passage it judges.

What a document is called (`index_title`) is its title and, for a file, its file name where the
name says what the title does not: a vault note `Dentist.md` with no heading is known only by
its name, and `orphans.md` titled "Orphaned Notes" is found by either. Both search legs read
it: BM25 as the passage's title field, the embedder in the line above. A note's or a web page's
name is made from its title, first line or address, so it adds nothing and is left out.
"""

from __future__ import annotations

import re

NAMED_KINDS = ("file",)  # kinds whose name a person chose
_WORD = re.compile(r"[^\W_]+")


def context_line(title: str | None, heading_path: tuple[str, ...]) -> str:
    parts = [p for p in (title, " / ".join(h for h in heading_path if h != title)) if p]
    return " — ".join(parts)


def index_title(title: str | None, name: str, kind: str = "file") -> str:
    """The title both search legs index a document's passages under."""
    if kind not in NAMED_KINDS:
        return title or name
    stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    stem = " ".join(_WORD.findall(stem))
    if not title:
        return stem or name
    said = [w.lower() for w in _WORD.findall(title)]
    new = [w for w in _WORD.findall(stem) if not any(s.startswith(w.lower()) for s in said)]
    return f"{title} · {stem}" if new else title
