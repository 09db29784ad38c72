"""Typed inline links and the edges derived from them.

    [[page:some-id|Label]]              a link to another page            → edge `wiki_link`
    [[evidence:ev-some-id|Label]]       a citation of an evidence record  → edge `cites`
    [[source:provider:id|Label]]        a pointer to something outside    → a source ref, no edge
    relations: [{type: works_at, target: acme}]  in frontmatter           → edge `works_at`

Edges are derived, never authored: every write recomputes them from the document's text.
A plain `[[Some Page]]` (Obsidian) is not part of the grammar; `import` turns it into a page link.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

LinkKind = Literal["page", "evidence", "source"]

SLUG = r"[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?"
SLUG_PATTERN = re.compile(rf"^{SLUG}$")
SOURCE_REF = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}:[^\s\]|]{1,220}$")
MAX_SOURCE_REF = 256

# Anything that looks like a typed link, even a malformed one, so validation can name it.
TYPED_LINK = re.compile(r"\[\[(page|evidence|source):([^\]|]*)(?:\|([^\]]*))?\]\]")
PLAIN_LINK = re.compile(
    r"\[\[(?!page:|evidence:|source:)([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]"
)


@dataclass(frozen=True)
class Link:
    kind: LinkKind
    target: str  # page id, evidence id, or provider:id
    label: str | None
    start: int  # offset in the text it came from


@dataclass(frozen=True)
class Edge:
    source: str  # the id of the document the edge starts from
    target: str
    type: str  # a relation type, `wiki_link` or `cites`


def links(text: str) -> list[Link]:
    return [
        Link(m.group(1), m.group(2).strip(), m.group(3), m.start())  # type: ignore[arg-type]
        for m in TYPED_LINK.finditer(text)
    ]


def is_slug(value: str) -> bool:
    return bool(SLUG_PATTERN.match(value))


def is_source_ref(value: str) -> bool:
    return len(value) <= MAX_SOURCE_REF and bool(SOURCE_REF.match(value))


def link_problem(link: Link) -> str | None:
    """Why a link is malformed, or None."""
    if link.kind == "source":
        if not is_source_ref(link.target):
            return (
                f"source link {link.target!r} must be provider:id — a lowercase provider slug, "
                f"a colon, an id without spaces; at most {MAX_SOURCE_REF} characters"
            )
        return None
    if link.kind == "evidence" and not link.target.startswith("ev-"):
        return f"evidence link {link.target!r} must name an evidence id starting with 'ev-'"
    if not is_slug(link.target):
        return f"{link.kind} link {link.target!r} must name a lowercase slug id"
    return None


def derive_edges(
    document_id: str, texts: Iterable[str], relations: Iterable[tuple[str, str]]
) -> list[Edge]:
    """The document's edges: its relations, then its page links and evidence citations, each
    (type, target) once, in order of first appearance."""
    found: dict[tuple[str, str], Edge] = {}
    for relation_type, target in relations:
        found.setdefault((relation_type, target), Edge(document_id, target, relation_type))
    for text in texts:
        for link in links(text):
            if link_problem(link) is not None or link.kind == "source":
                continue
            kind = "wiki_link" if link.kind == "page" else "cites"
            found.setdefault((kind, link.target), Edge(document_id, link.target, kind))
    return [e for e in found.values() if e.target != document_id]


def source_refs(texts: Iterable[str]) -> list[str]:
    refs: dict[str, None] = {}
    for text in texts:
        for link in links(text):
            if link.kind == "source" and link_problem(link) is None:
                refs.setdefault(link.target, None)
    return list(refs)


def slugify(text: str) -> str:
    """A lowercase slug for a title or a wikilink target: 'Ana López' → 'ana-lopez'."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    return slug[:128].strip("-") or "untitled"
