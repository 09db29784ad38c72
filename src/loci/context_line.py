"""The line that tells a model where a passage sits: its document's title and heading path.

A passage cut from a document loses what the document is about ("the dose was halved" — of
what?). The embedder reads this line before each chunk's text when it indexes (so the vector
keeps that meaning), and the reranker reads it before each passage it judges.
"""

from __future__ import annotations


def context_line(title: str | None, heading_path: tuple[str, ...]) -> str:
    parts = [p for p in (title, " / ".join(h for h in heading_path if h != title)) if p]
    return " — ".join(parts)
