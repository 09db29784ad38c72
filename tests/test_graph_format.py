"""The brain graph's format: documents, links and edges, and every validation rule."""

from __future__ import annotations

import pytest

from loci.errors import InvalidInput
from loci.graph.document import BrainDoc, Relation, new_entry, parse
from loci.graph.links import derive_edges, slugify, source_refs
from loci.graph.validate import validate

ANA = """---
id: ana-lopez
kind: page
type: person
folder: people
status: active
title: Ana López
aliases:
- Ana
relations:
- type: works_at
  target: acme
sources:
- file:12
created: '2026-03-04T10:00:00Z'
updated: '2026-03-05T09:12:00Z'
colour: green
---

Ana leads [[page:garden-project|the garden project]] since March
[[evidence:ev-kickoff-notes|kickoff notes]]; see also [[source:slack:C01/1234|thread]].

## Timeline

- **2026-03-04** Kickoff held; Ana leads. — [[source:file:12]] `ev-6799a5c58a`
"""


def test_a_document_parses_into_its_fields_and_renders_back_identically() -> None:
    doc = parse(ANA)
    assert (doc.id, doc.kind, doc.type, doc.folder, doc.status) == (
        "ana-lopez", "page", "person", "people", "active",
    )  # fmt: skip
    assert doc.title == "Ana López" and doc.aliases == ("Ana",)
    assert doc.relations == (Relation("works_at", "acme"),) and doc.sources == ("file:12",)
    assert doc.extra == {"colour": "green"}  # unknown keys are kept, not dropped
    assert doc.truth.startswith("Ana leads") and doc.path == "people/ana-lopez.md"
    (entry,) = doc.timeline
    assert (entry.at, entry.text, entry.source) == ("2026-03-04", "Kickoff held; Ana leads.",
                                                    "file:12")  # fmt: skip
    assert doc.render() == ANA
    assert validate(doc) == []


def test_timeline_ids_are_derived_from_the_entry() -> None:
    one = new_entry("ana-lopez", "2026-03-04", "Kickoff held;  Ana leads.", "file:12")
    again = new_entry("ana-lopez", "2026-03-04", "Kickoff held; Ana leads.", "file:12")
    other = new_entry("ana-lopez", "2026-03-05", "Kickoff held; Ana leads.", "file:12")
    assert one.id == again.id != other.id and one.id.startswith("ev-")
    assert one.id == parse(ANA).timeline[0].id


def test_retired_type_names_still_parse() -> None:
    for old, new in (("media", "source"), ("email", "source"), ("writing", "analysis")):
        text = ANA.replace("type: person", f"type: {old}")
        assert parse(text).type == new


def test_edges_come_from_relations_and_links() -> None:
    doc = parse(ANA)
    edges = derive_edges(doc.id, [doc.truth], [(r.type, r.target) for r in doc.relations])
    assert [(e.type, e.target) for e in edges] == [
        ("works_at", "acme"), ("wiki_link", "garden-project"), ("cites", "ev-kickoff-notes"),
    ]  # fmt: skip
    assert source_refs([doc.truth]) == ["slack:C01/1234"]


def test_text_without_frontmatter_or_with_broken_yaml_is_refused() -> None:
    with pytest.raises(InvalidInput, match="no YAML frontmatter"):
        parse("# just a heading\n")
    with pytest.raises(InvalidInput, match="not valid YAML"):
        parse("---\nid: [unclosed\n---\n")


def problems(**changes: object) -> list[str]:
    doc = parse(ANA).with_changes(**changes)
    return [str(p) for p in validate(doc)]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"id": "Ana Lopez"}, "id: 'Ana Lopez' must be a lowercase slug"),
        ({"folder": ""}, "folder: a document needs a folder"),
        ({"folder": "a/b/c/d/e/f/g"}, "has 7 levels; at most 6"),
        ({"folder": "People"}, "each level must be lowercase"),
        ({"folder": "evidence/x"}, "pages live outside evidence/"),
        ({"kind": "evidence"}, "evidence lives under evidence/"),
        ({"kind": "thing"}, "kind: 'thing' must be page or evidence"),
        ({"type": "gadget"}, "type: 'gadget' must be one of person"),
        ({"status": "done"}, "status: 'done' must be one of draft"),
        ({"status": "merged"}, "a merged document must name the document it was merged into"),
        ({"merged_into": "other"}, "only a merged document names mergedInto"),
        ({"title": " "}, "a document needs a title"),
        ({"created": "yesterday"}, "created: 'yesterday' must be an ISO date or time"),
        ({"relations": (Relation("Works At", "acme"),)}, "needs a type like works_at"),
        ({"relations": (Relation("works_at", "ACME Inc"),)}, "must be a document id"),
        ({"sources": ("not a ref",)}, "must be provider:id"),
        ({"truth": "See [[page:Bad Id]] [[evidence:ev-x]]."}, "page link 'Bad Id' must name"),
        ({"truth": "[[source:nocolon]] [[evidence:ev-x]]"}, "source link 'nocolon' must be"),
        ({"truth": "Cites [[evidence:kickoff]]."}, "must name an evidence id starting with 'ev-'"),
        ({"truth": "No citation here."}, "an active page must cite at least one evidence"),
    ],
)
def test_each_rule_says_what_to_fix(changes: dict[str, object], expected: str) -> None:
    found = problems(**changes)
    assert any(expected in p for p in found), found


def test_a_draft_need_not_cite_evidence_and_evidence_lives_in_its_zone() -> None:
    assert problems(status="draft", truth="No citation yet.") == []
    evidence = BrainDoc("ev-kickoff-notes", "evidence", "source", "evidence/meetings",
                        "active", "Kickoff notes", truth="Transcript…")  # fmt: skip
    assert validate(evidence) == []


def test_a_hand_edited_timeline_entry_is_noticed() -> None:
    text = ANA.replace("Kickoff held; Ana leads.", "Kickoff held; Ben leads.")
    assert any("does not match its content" in str(p) for p in validate(parse(text)))
    garbled = ANA.replace("- **2026-03-04**", "* 2026-03-04")
    assert any("is not an entry" in str(p) for p in validate(parse(garbled)))


def test_slugify_makes_ids_from_titles() -> None:
    assert slugify("Ana López — Garden Lead!") == "ana-lopez-garden-lead"
    assert slugify("???") == "untitled"
