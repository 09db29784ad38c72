"""The rules every write must pass, each with a message that says what to fix.

id and folder shape, the kind/zone rule (evidence under evidence/, pages outside it), type and
status values, mergedInto on merged documents, timestamps, link syntax, timeline entries, and
the provenance rule: an active page cites at least one evidence record in its truth.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from loci.graph.document import EVIDENCE_ZONE, STATUSES, TYPES, BrainDoc, entry_id
from loci.graph.links import is_name_part, is_slug, is_source_ref, link_problem, links

MAX_FOLDER_SEGMENTS = 6
RELATION_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
MAX_FOLDER_SEGMENT = 64


@dataclass(frozen=True)
class Problem:
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def validate(doc: BrainDoc) -> list[Problem]:
    problems: list[Problem] = []

    def problem(where: str, message: str) -> None:
        problems.append(Problem(where, message))

    if not is_slug(doc.id):
        problem(
            "id",
            f"{doc.id!r} must be a lowercase slug: 1–128 letters of any script (lowercase where"
            " it has case), digits and '-', starting and ending with a letter or digit",
        )
    segments = doc.folder.split("/") if doc.folder else []
    if not segments:
        problem("folder", "a document needs a folder (e.g. people, projects/garden)")
    elif len(segments) > MAX_FOLDER_SEGMENTS:
        problem("folder", f"{doc.folder!r} has {len(segments)} levels; at most 6 are allowed")
    elif not all(is_folder_segment(s) for s in segments):
        problem(
            "folder",
            f"{doc.folder!r}: each level must be lowercase letters of any script (where it has"
            " case), digits, '.', '_' or '-', starting with a letter or digit",
        )
    in_zone = bool(segments) and segments[0] == EVIDENCE_ZONE
    if doc.kind not in ("page", "evidence"):
        problem("kind", f"{doc.kind!r} must be page or evidence")
    elif doc.kind == "evidence" and not in_zone:
        problem("folder", f"evidence lives under {EVIDENCE_ZONE}/, not {doc.folder!r}")
    elif doc.kind == "page" and in_zone:
        problem("folder", f"pages live outside {EVIDENCE_ZONE}/; use kind: evidence there")
    if doc.type not in TYPES:
        problem("type", f"{doc.type!r} must be one of {', '.join(TYPES)}")
    if doc.status not in STATUSES:
        problem("status", f"{doc.status!r} must be one of {', '.join(STATUSES)}")
    if doc.status == "merged" and not doc.merged_into:
        problem("mergedInto", "a merged document must name the document it was merged into")
    if doc.merged_into and doc.status != "merged":
        problem("mergedInto", "only a merged document names mergedInto")
    if doc.merged_into and not is_slug(doc.merged_into):
        problem("mergedInto", f"{doc.merged_into!r} must be a document id")
    if not doc.title.strip():
        problem("title", "a document needs a title")
    for name, value in (("created", doc.created), ("updated", doc.updated)):
        if value and not _is_timestamp(value):
            problem(name, f"{value!r} must be an ISO date or time, e.g. 2026-03-04T10:00:00Z")
    for relation in doc.relations:
        if not RELATION_TYPE.match(relation.type):
            problem("relations", f"relation {relation!r} needs a type like works_at")
        if not is_slug(relation.target):
            problem("relations", f"relation target {relation.target!r} must be a document id")
    for source in doc.sources:
        if not is_source_ref(source):
            problem("sources", f"{source!r} must be provider:id (e.g. file:12, slack:C01/123)")
    for link in links(doc.truth):
        reason = link_problem(link)
        if reason:
            problem("links", reason)
    for entry in doc.timeline:
        if not entry.at:
            problem("timeline", f"{entry.text[:60]!r} is not an entry: - **date** text `ev-id`")
            continue
        if not _is_timestamp(entry.at):
            problem("timeline", f"entry date {entry.at!r} must be an ISO date or time")
        if entry.source is not None and not is_source_ref(entry.source):
            problem("timeline", f"entry source {entry.source!r} must be provider:id")
        if entry.id and entry.id != entry_id(doc.id, entry.at, entry.text, entry.source):
            problem("timeline", f"entry {entry.id} does not match its content (edited by hand?)")
    if doc.kind == "page" and doc.status == "active":
        cited = [link for link in links(doc.truth) if link.kind == "evidence"]
        if not cited:
            problem(
                "status",
                "an active page must cite at least one evidence record in its truth, e.g. "
                "[[evidence:ev-kickoff-notes|kickoff notes]]; keep it draft until it does",
            )
    return problems


def is_folder_segment(segment: str) -> bool:
    """One level of a folder: a name of letters, digits, '.', '_' and '-' (never '..')."""
    return is_name_part(segment, "._-", MAX_FOLDER_SEGMENT)


def _is_timestamp(value: str) -> bool:
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
