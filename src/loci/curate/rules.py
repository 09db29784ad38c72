"""Curation without a model: plain rules over titles, aliases and the item's own fields.

A capture whose title or text names an existing page (its title or an alias, as whole words,
case-insensitive; the longest name wins, a tie is no match) is snapshotted onto that page's
timeline as evidence and its draft merged into the page; otherwise it stays in inbox/.

A meeting gets a meeting page and a person page per attendee (found by name, alias or e-mail,
else created), linked both ways and citing the transcript's evidence record, so they can be
active. Every step is idempotent: a job retried after a crash half-way finds what it already
wrote and finishes the rest.
"""

from __future__ import annotations

import datetime as dt
import re

from loci.curate.items import Attendee, SourceItem, defuse, label
from loci.errors import NotFound
from loci.graph.document import BrainDoc, new_entry, parse
from loci.graph.links import slugify
from loci.graph.records import GraphDocument
from loci.graph.service import BrainGraph
from loci.models import Brain

MIN_NAME = 3  # shorter titles and aliases ("AI", "Al") match too much to fold anything into


class RuleCurator:
    def __init__(self, graph: BrainGraph, brain: Brain, actor: str) -> None:
        self.graph = graph
        self.brain = brain
        self.actor = actor

    # captures ----------------------------------------------------------------------------
    def curate_capture(self, item: SourceItem, draft_id: str) -> str:
        target = self.match(f"{item.title}\n{item.text}", exclude=draft_id)
        if target is None:
            return f"left {draft_id} in inbox/: no page's title or alias appears in it"
        self.graph.append_evidence(
            self.brain, target.id, defuse(item.text), title=f"Capture: {label(item.title, 80)}",
            actor=self.actor, source=item.ref,
        )  # fmt: skip
        self.graph.merge(self.brain, draft_id, target.id, actor=self.actor, alias_title=False)
        return f"folded {draft_id} into {target.id}"

    def match(self, text: str, *, exclude: str) -> GraphDocument | None:
        """The page `text` names by title or alias, or None (none, or a tie)."""
        best: dict[str, tuple[int, GraphDocument]] = {}
        pages = self.graph.graph.documents(self.brain.id, kind="page", statuses=("draft", "active"))
        for doc in pages:
            if doc.id == exclude or doc.folder.split("/")[0] == "inbox":
                continue  # other captures are not homes
            for name in (doc.title, *doc.aliases):
                longer = len(name) > best.get(doc.id, (0, doc))[0]
                if longer and len(name) >= MIN_NAME and _names(name, text):
                    best[doc.id] = (len(name), doc)
        if not best:
            return None
        longest = max(length for length, _ in best.values())
        winners = [doc for length, doc in best.values() if length == longest]
        return winners[0] if len(winners) == 1 else None

    # meetings ----------------------------------------------------------------------------
    def curate_meeting(self, item: SourceItem, evidence_id: str) -> str:
        cite = f"[[evidence:{evidence_id}|transcript]]"
        when = item.date or dt.date.today().isoformat()
        existing = self._meeting(item)
        meeting_id = (
            existing.id if existing else self._free_id(item.title, f"{item.title} {when[:10]}")
        )
        people = [(a, self._person(a, avoid={meeting_id})) for a in item.attendees]
        person_ids = list(dict.fromkeys(person_id for _, (person_id, _) in people))
        names = {person_id: a.name for a, (person_id, _) in reversed(people)}  # first name wins
        links = [f"[[page:{i}|{label(names[i])}]]" for i in person_ids]
        title_link = f"[[page:{meeting_id}|{label(item.title)}]]"
        if existing is None:
            self._create_meeting(item, meeting_id, links, cite)
        elif f"[[evidence:{evidence_id}" not in existing.content:
            attended = f"; attendees: {', '.join(links)}" if links else ""
            self.graph.append_timeline(
                self.brain, meeting_id, f"Transcript {cite}{attended}", actor=self.actor,
                at=when, source=item.ref,
            )  # fmt: skip
        entry = f"Attended {title_link} — {cite}"
        for attendee, (person_id, _) in people:
            if self._exists(person_id):  # found by name, or made for an earlier attendee
                self.graph.append_timeline(
                    self.brain, person_id, entry, actor=self.actor, at=when, source=item.ref
                )
            else:
                self._create_person(attendee, person_id, item, entry, title_link, cite)
        return f"meeting {meeting_id} with {len(people)} attendee page(s), citing {evidence_id}"

    def _meeting(self, item: SourceItem) -> GraphDocument | None:
        """The meeting page an earlier run made of this item (its sources name it)."""
        for doc in self.graph.graph.documents(self.brain.id, doc_type="meeting", kind="page"):
            if doc.status != "merged" and item.ref in parse(doc.content).sources:
                return doc
        return None

    def _person(self, attendee: Attendee, avoid: set[str]) -> tuple[str, GraphDocument | None]:
        """(the person page's id, the page) — the page None when it is still to be made."""
        for name in (attendee.name, attendee.email):
            if not name:
                continue
            found = [
                d for d in self.graph.graph.by_alias(self.brain.id, name)
                if d.kind == "page" and d.status != "merged" and d.type == "person"
            ]  # fmt: skip
            if found:
                return found[0].id, found[0]
        return self._free_id(attendee.name, avoid=avoid), None

    def _free_id(self, *names: str, avoid: set[str] | None = None) -> str:
        candidates = [slugify(n) for n in names if n.strip()] or ["untitled"]
        base = candidates[0]
        for number in range(2, 1000):
            candidates.append(f"{base[:120]}-{number}")
        for candidate in candidates:
            if candidate not in (avoid or set()) and not self._exists(candidate):
                return candidate
        raise RuntimeError(f"no free id for {names[0]!r}")  # pragma: no cover

    def _create_meeting(
        self, item: SourceItem, meeting_id: str, links: list[str], cite: str
    ) -> None:
        when = item.date or dt.date.today().isoformat()
        with_whom = f", with {_join(links)}" if links else ""
        lines = [
            f"**{label(item.title)}** — a meeting on {when[:10]}{with_whom}.",
            "",
            f"Transcript: {cite} · [[source:{item.ref}|{item.provider}]]",
        ]
        if item.url:
            lines.append(f"Recording or notes: <{item.url}>")
        entries = (new_entry(meeting_id, when, f"Meeting held — {cite}", item.ref),)
        self._create(
            BrainDoc(
                id=meeting_id, kind="page", type="meeting", folder="meetings", status="active",
                title=label(item.title, 200), sources=(item.ref,), truth="\n".join(lines),
                timeline=entries,
            )
        )  # fmt: skip

    def _create_person(
        self,
        attendee: Attendee,
        person_id: str,
        item: SourceItem,
        entry: str,
        title_link: str,
        cite: str,
    ) -> None:
        when = item.date or dt.date.today().isoformat()
        aliases: tuple[str, ...] = ()
        if attendee.email and not self.graph.graph.by_alias(self.brain.id, attendee.email):
            aliases = (attendee.email,)
        self._create(
            BrainDoc(
                id=person_id, kind="page", type="person", folder="people", status="active",
                title=label(attendee.name, 200), aliases=aliases, sources=(item.ref,),
                truth=f"{label(attendee.name)} attended {title_link} ({cite}).",
                timeline=(new_entry(person_id, when, entry, item.ref),),
            )
        )  # fmt: skip

    def _exists(self, doc_id: str) -> bool:
        try:
            self.graph.graph.get(self.brain.id, doc_id)
        except NotFound:
            return False
        return True

    def _create(self, doc: BrainDoc) -> None:
        self.graph.create(self.brain, actor=self.actor, text=doc.render())


def _names(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
