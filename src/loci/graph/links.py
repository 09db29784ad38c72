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

# An id is 1-128 letters, digits and '-' in any script: lowercase where the script has case
# (Ll; the uncased letters of Japanese, Chinese, Thai, ... are Lo and Lm), with the marks its
# letters carry, NFKC-normalised, beginning and ending with a letter or digit, and short enough
# (MAX_SLUG_BYTES of UTF-8) that `<id>.md` is a legal file name everywhere. No '.', '/',
# control or format character (bidi overrides, zero-width joiners): an id is also a file name.
# SLUG is the same rule as a regular expression for JSON Schema and the web app (\p classes).
MAX_SLUG = 128
MAX_SLUG_BYTES = 240
_SLUG_START = r"\p{Ll}\p{Lo}\p{Lm}\p{Nd}"
SLUG = rf"[{_SLUG_START}](?:[{_SLUG_START}\p{{M}}-]{{0,126}}[{_SLUG_START}\p{{M}}])?"
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


def is_slug_char(char: str) -> bool:
    """A letter (lowercase if it has case), a digit, or a mark: what an id is made of besides
    '-' (and what a folder is made of besides '-', '.' and '_')."""
    category = unicodedata.category(char)
    return category in _SLUG_CATEGORIES or category[0] == "M"


_SLUG_CATEGORIES = frozenset({"Ll", "Lo", "Lm", "Nd"})


def is_name_part(value: str, extra: str, max_chars: int) -> bool:
    """`value` is letters, digits and marks (is_slug_char) or characters of `extra`, starts with
    a letter or digit, is NFKC-normalised and at most `max_chars` characters and MAX_SLUG_BYTES
    bytes long."""
    return (
        0 < len(value) <= max_chars
        and len(value.encode()) <= MAX_SLUG_BYTES
        and unicodedata.category(value[0]) in _SLUG_CATEGORIES
        and all(c in extra or is_slug_char(c) for c in value)
        and unicodedata.normalize("NFKC", value) == value
    )


def is_slug(value: str) -> bool:
    return is_name_part(value, "-", MAX_SLUG) and not value.endswith("-")


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
    """A slug for a title, a file name or a wikilink target: 'Ana López' → 'ana-lopez',
    '内部リンク' → '内部リンク', 'Über uns' → 'uber-uns'; anything else between words → '-'.

    A Latin letter with accents becomes its bare ASCII letter, as it always did, so every title
    that had an id keeps it; letters of other scripts stay as they are (NFKC, lowercase)."""
    out: list[str] = []
    for char in unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).lower()):
        if char.isascii():
            out.append(char if char.isalnum() else "-")
            continue
        parts = unicodedata.normalize("NFKD", char)
        bare = "".join(c for c in parts if not unicodedata.combining(c))
        if bare.isascii() and bare.isalnum():
            out.append(bare.lower())
        elif unicodedata.category(char)[0] == "M":
            # A mark belongs to the letter before it; one after an ASCII letter was an accent.
            out.append(char if out and not out[-1].isascii() else "")
        else:
            out.append(char if is_slug_char(char) else "-")
    slug = unicodedata.normalize("NFKC", re.sub("-+", "-", "".join(out)).strip("-"))
    slug = _shorten(slug, MAX_SLUG, MAX_SLUG_BYTES)
    return slug if is_slug(slug) else "untitled"


def slug_prefix(text: str, chars: int) -> str:
    """The start of `text`'s slug, for an id built from it and a suffix: at most `chars`
    characters and twice as many bytes, so the id stays within MAX_SLUG_BYTES in any script."""
    return _shorten(slugify(text), chars, 2 * chars)


def _shorten(slug: str, chars: int, size: int) -> str:
    """`slug` cut to `chars` characters and `size` UTF-8 bytes, never between a letter and
    its marks, with no '-' left at the end."""
    cut = slug[:chars]
    while cut and (len(cut.encode()) > size or _is_mark(slug[len(cut) : len(cut) + 1])):
        cut = cut[:-1]
    return cut.strip("-")


def _is_mark(char: str) -> bool:
    return bool(char) and unicodedata.category(char)[0] == "M"


def as_read(text: str) -> str:
    """`text` with its typed links shown as a reader sees them: `[[page:marta-kowalski|Marta]]`
    as "Marta", `[[page:garden]]` as "garden" (for snippets and quotes, not for storage)."""
    return TYPED_LINK.sub(lambda m: (m.group(3) or m.group(2)).strip(), text)
