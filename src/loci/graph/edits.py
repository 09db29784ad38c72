"""Pure edits of brain documents: what `set`, `link`, `alias`, `merge` and `move` change in the
text, before anything is validated or stored. Nothing here touches the database.
"""

from __future__ import annotations

import re
from typing import cast

from loci.errors import InvalidInput
from loci.graph.document import (
    EVIDENCE_ZONE,
    LEGACY_TYPES,
    BrainDoc,
    DocType,
    Kind,
    Relation,
    Status,
    TimelineEntry,
    new_entry,
)
from loci.graph.links import TYPED_LINK

SETTABLE = ("title", "type", "status", "folder", "aliases", "relations", "sources")


def kind_for(folder: str) -> Kind:
    """The graph's one structural rule, read the other way: evidence/ holds evidence."""
    return "evidence" if folder.split("/")[0] == EVIDENCE_ZONE else "page"


def parse_assignment(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or key.strip() not in SETTABLE:
        raise InvalidInput(f"{text!r}: write key=value with key one of {', '.join(SETTABLE)}")
    return key.strip(), value.strip()


def _items(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))


def set_fields(doc: BrainDoc, assignments: list[tuple[str, str]]) -> BrainDoc:
    """Frontmatter fields from `key=value` pairs; lists are comma-separated, relations are
    `type:target` (an empty value clears a list)."""
    changes: dict[str, object] = {}
    for key, value in assignments:
        if key == "title":
            changes["title"] = value
        elif key == "type":
            changes["type"] = LEGACY_TYPES.get(value, value)
        elif key == "status":
            if value == "merged":
                raise InvalidInput("status merged is set by `merge`, which names the survivor")
            changes["status"] = value
        elif key == "folder":
            changes["folder"] = value.strip("/")
        elif key in ("aliases", "sources"):
            changes[key] = _items(value)
        elif key == "relations":
            relations = []
            for item in _items(value):
                relation_type, sep, target = item.partition(":")
                if not sep:
                    raise InvalidInput(f"relation {item!r} must be type:target, e.g. works_at:acme")
                relations.append(Relation(relation_type.strip(), target.strip()))
            changes["relations"] = tuple(relations)
    return doc.with_changes(**changes)


def with_entry(doc: BrainDoc, entry: TimelineEntry) -> BrainDoc | None:
    """The document with the entry added in date order, or None when it is already there."""
    if any(e.id == entry.id for e in doc.timeline):
        return None
    timeline = sorted((*doc.timeline, entry), key=lambda e: e.at)  # stable: ties keep order
    return doc.with_changes(timeline=tuple(timeline))


def reid_timeline(doc: BrainDoc) -> tuple[TimelineEntry, ...]:
    """Entries with ids derived from this document (they name their document: a rename or a
    merge gives them new ids), each once."""
    found: dict[str, TimelineEntry] = {}
    for e in doc.timeline:
        entry = new_entry(doc.id, e.at, e.text, e.source)
        found.setdefault(entry.id, entry)
    return tuple(sorted(found.values(), key=lambda e: e.at))


def retarget_text(text: str, old: str, new: str) -> str:
    """Page links and evidence citations of `old` point at `new`; labels stay."""

    def swap(match: re.Match[str]) -> str:
        kind, target, label = match.group(1), match.group(2), match.group(3)
        if kind == "source" or target.strip() != old:
            return match.group(0)
        return f"[[{kind}:{new}|{label}]]" if label is not None else f"[[{kind}:{new}]]"

    return TYPED_LINK.sub(swap, text)


def retarget(doc: BrainDoc, old: str, new: str) -> BrainDoc:
    """`doc` with every reference to `old` (links, relations, mergedInto) naming `new`."""
    timeline = tuple(
        TimelineEntry(e.id, e.at, retarget_text(e.text, old, new), e.source) for e in doc.timeline
    )
    changed = doc.with_changes(
        truth=retarget_text(doc.truth, old, new),
        timeline=timeline,
        relations=tuple(
            Relation(r.type, new if r.target == old else r.target) for r in doc.relations
        ),  # fmt: skip
        merged_into=new if doc.merged_into == old else doc.merged_into,
    )
    return changed.with_changes(timeline=reid_timeline(changed))


def moved(doc: BrainDoc, folder: str | None, new_id: str | None) -> BrainDoc:
    changed = doc.with_changes(
        folder=(folder.strip("/") if folder else doc.folder), id=new_id or doc.id
    )
    return changed.with_changes(timeline=reid_timeline(changed))


def merge(
    source: BrainDoc, target: BrainDoc, *, alias_title: bool = True
) -> tuple[BrainDoc, BrainDoc]:
    """(the survivor, the tombstone): the survivor gains the source's title (unless
    `alias_title` is False: a retired capture's first line is no name) and aliases as aliases,
    its relations, sources and timeline; the source points at the survivor."""
    titles = (source.title,) if alias_title else ()
    aliases = [a for a in (*target.aliases, *titles, *source.aliases) if a != target.title]
    relations = [r for r in (*target.relations, *source.relations) if r.target != target.id]
    timeline = (*target.timeline, *source.timeline)
    survivor = target.with_changes(
        aliases=tuple(dict.fromkeys(aliases)),
        relations=tuple(dict.fromkeys(relations)),
        sources=tuple(dict.fromkeys((*target.sources, *source.sources))),
        timeline=timeline,
    )
    survivor = survivor.with_changes(timeline=reid_timeline(survivor))
    tombstone = source.with_changes(
        status="merged",
        merged_into=target.id,
        truth=f"Merged into [[page:{target.id}|{target.title}]].",
        relations=(),
        timeline=(),
    )
    return survivor, tombstone


def fields_doc(
    *, doc_id: str, doc_type: str, title: str, folder: str, truth: str, status: str = "draft"
) -> BrainDoc:
    """A new document from fields (`validate` judges the values)."""
    return BrainDoc(
        id=doc_id,
        kind=kind_for(folder),
        type=cast(DocType, LEGACY_TYPES.get(doc_type, doc_type)),
        folder=folder.strip("/"),
        status=cast(Status, status),
        title=title.strip(),
        truth=truth,
    )
