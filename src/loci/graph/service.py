"""`BrainGraph`: the operations of `loci brain …` over one store, for every surface.

Reads come from `GraphReader`. Writes read the current version, compose the new text with
`loci.graph.edits`, and commit through `GraphWriter` with the hash they read: a caller may pass
the `expected_hash` it saw (the HTTP API will), and either way an edit that raced another one
fails with `Conflict` instead of overwriting it. Every write names its actor.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Sequence

from loci.errors import Conflict, InvalidInput, NotFound
from loci.graph import edits
from loci.graph.document import (
    DEFAULT_FOLDERS,
    EVIDENCE_ZONE,
    LEGACY_TYPES,
    TIMELINE_HEADING,
    BrainDoc,
    Relation,
    new_entry,
    parse,
)
from loci.graph.links import slug_prefix, slugify
from loci.graph.reads import GraphReader, Search
from loci.graph.records import GraphDelete, GraphDocument
from loci.graph.results import DeletePlan, Summary, Written, summary
from loci.graph.writer import Change, GraphWriter
from loci.models import Brain
from loci.store.base import Store
from loci.store.blobs import BlobStore


class BrainGraph(GraphReader):
    def __init__(self, store: Store, blobs: BlobStore, search: Search) -> None:
        super().__init__(store, search)
        self.writer = GraphWriter(store.graph, blobs, store.unused)

    # writing ------------------------------------------------------------------------------
    def create(
        self,
        brain: Brain,
        *,
        actor: str,
        doc_type: str | None = None,
        title: str | None = None,
        folder: str | None = None,
        doc_id: str | None = None,
        text: str = "",
        status: str | None = None,
    ) -> Summary:
        """A new document from fields, or from a full Markdown text (frontmatter first) whose
        fields the given ones override. The folder defaults per type; the id to the title's
        slug (`ev-…` in evidence/)."""
        if text.lstrip().startswith("---"):
            doc = parse(text.lstrip())
            changes: dict[str, object] = {
                k: v
                for k, v in (
                    ("type", LEGACY_TYPES.get(doc_type or "", doc_type)),
                    ("title", title),
                    ("status", status),
                    ("folder", folder),
                    ("id", doc_id),
                )  # fmt: skip
                if v
            }
            doc = doc.with_changes(**changes, created="", updated="")
        else:
            if not doc_type or not title:
                raise InvalidInput("a new document needs --type and --title (or full Markdown)")
            folder = folder or DEFAULT_FOLDERS.get(doc_type, "inbox")
            default_id = slugify(title)
            if edits.kind_for(folder) == "evidence" and not default_id.startswith("ev-"):
                default_id = "ev-" + default_id
            doc = edits.fields_doc(
                doc_id=doc_id or default_id, doc_type=doc_type, title=title,
                folder=folder, truth=text, status=status or "draft",
            )  # fmt: skip
        if not doc.folder:
            doc = doc.with_changes(folder=DEFAULT_FOLDERS.get(doc.type, "inbox"))
        doc = doc.with_changes(timeline=edits.reid_timeline(doc))
        put = self.writer.put(doc, expected_hash=None, action="create")
        return self._write(brain, [put], actor)[0]

    def rewrite(
        self, brain: Brain, ref: str, truth: str, *, actor: str, expected_hash: str | None = None
    ) -> Summary:
        """Replace the compiled truth; frontmatter and timeline stay as they are."""
        if truth.lstrip().startswith("---") or any(
            line.strip() == TIMELINE_HEADING for line in truth.split("\n")
        ):
            raise InvalidInput(
                "rewrite takes the compiled truth only: no frontmatter (use set) and no "
                "timeline (use append-timeline)"
            )
        written = self._edit(
            brain, ref, lambda d: d.with_changes(truth=truth), "rewrite", actor, expected_hash
        )
        return written.document

    def set_fields(
        self,
        brain: Brain,
        ref: str,
        assignments: Sequence[str],
        *,
        actor: str,
        expected_hash: str | None = None,
    ) -> Summary:
        if not assignments:
            raise InvalidInput("nothing to set: give key=value pairs, e.g. status=active")
        pairs = [edits.parse_assignment(a) for a in assignments]
        written = self._edit(
            brain, ref, lambda d: edits.set_fields(d, pairs), "set", actor, expected_hash
        )
        return written.document

    def append_timeline(
        self,
        brain: Brain,
        ref: str,
        text: str,
        *,
        actor: str,
        at: str | None = None,
        source: str | None = None,
        expected_hash: str | None = None,
    ) -> Written:
        """Add a dated entry; the same entry (date, text, source) twice is one entry."""
        if not text.strip():
            raise InvalidInput("the timeline entry is empty")
        when = at or dt.date.today().isoformat()

        def add(doc: BrainDoc) -> BrainDoc | None:
            return edits.with_entry(doc, new_entry(doc.id, when, text, source))

        return self._edit(brain, ref, add, "append-timeline", actor, expected_hash)

    def append_evidence(
        self,
        brain: Brain,
        ref: str,
        text: str,
        *,
        title: str,
        actor: str,
        source: str | None = None,
        expected_hash: str | None = None,
    ) -> tuple[Summary, Summary]:
        """Snapshot `text` into a new evidence record under evidence/ and cite it from the
        page's timeline (the copy rule, for sources the brain cannot fetch again).
        Returns (evidence, page); the same snapshot twice is one record."""
        if not text.strip() or not title.strip():
            raise InvalidInput("evidence needs a text and a --title")
        page = self.resolve(brain, ref)
        self._check_expected(page, expected_hash)
        if page.kind != "page":
            raise InvalidInput(f"{page.id} is evidence itself; attach evidence to a page")
        digest = hashlib.sha256(text.strip().encode()).hexdigest()[:8]
        evidence_id = f"ev-{slug_prefix(title, 100)}-{digest}"
        changes: list[Change] = []
        try:
            self.graph.get(brain.id, evidence_id)
        except NotFound:
            evidence = edits.fields_doc(
                doc_id=evidence_id, doc_type="source", title=title, folder=EVIDENCE_ZONE,
                truth=text.strip(), status="active",
            ).with_changes(sources=(source,) if source else ())  # fmt: skip
            changes.append(self.writer.put(evidence, expected_hash=None, action="create"))
        doc = parse(page.content)
        cite = f"Evidence: [[evidence:{evidence_id}|{' '.join(title.split())}]]"
        entry = new_entry(doc.id, dt.date.today().isoformat(), cite, source)
        if not any(cite in e.text for e in doc.timeline):
            updated = edits.with_entry(doc, entry)
            if updated is not None:
                changes.append(
                    self.writer.put(
                        updated, expected_hash=page.content_hash, action="append-evidence"
                    )
                )
        self.writer.commit(brain.id, changes, actor)
        return summary(self.graph.get(brain.id, evidence_id)), summary(
            self.graph.get(brain.id, page.id)
        )

    def alias(self, brain: Brain, ref: str, alias: str, *, actor: str) -> Written:
        name = " ".join(alias.split())
        if not name:
            raise InvalidInput("the alias is empty")
        record = self.resolve(brain, ref)
        taken = [d.id for d in self.graph.by_alias(brain.id, name) if d.id != record.id]
        if taken or (name != record.id and self._exists(brain, name)):
            raise Conflict(f"{name!r} already names {', '.join(taken) or name}")

        def add(doc: BrainDoc) -> BrainDoc | None:
            if name in doc.aliases or name == doc.title:
                return None
            return doc.with_changes(aliases=(*doc.aliases, name))

        return self._edit(brain, record.id, add, "alias", actor, None)

    def link(self, brain: Brain, ref: str, relation: str, target: str, *, actor: str) -> Written:
        """Add a typed relation (an edge `relation` to `target`, which must exist)."""
        target_id = self.resolve(brain, target).id
        new = Relation(relation.strip(), target_id)

        def add(doc: BrainDoc) -> BrainDoc | None:
            if new in doc.relations:
                return None
            return doc.with_changes(relations=(*doc.relations, new))

        return self._edit(brain, ref, add, "link", actor, None)

    def merge(
        self,
        brain: Brain,
        source_ref: str,
        target_ref: str,
        *,
        actor: str,
        alias_title: bool = True,
    ) -> Summary:
        """Fold `source` into `target`: the target gains its aliases (and its title as one,
        unless `alias_title` is False) and timeline; the source stays as a `merged` tombstone
        pointing at the target."""
        source = self.resolve(brain, source_ref)
        target = self.resolve(brain, target_ref)
        if source.id == target.id:
            raise InvalidInput("a document cannot be merged into itself")
        if target.status == "merged":
            raise InvalidInput(f"{target.id} is itself merged into {target.merged_into}")
        if source.kind != target.kind:
            raise InvalidInput(f"cannot merge {source.kind} {source.id} into {target.kind}")
        survivor, tombstone = edits.merge(
            parse(source.content), parse(target.content), alias_title=alias_title
        )
        changes: list[Change] = [
            self.writer.put(survivor, expected_hash=target.content_hash, action="merge"),
            self.writer.put(tombstone, expected_hash=source.content_hash, action="merged"),
        ]
        self._write(brain, changes, actor)
        return summary(self.graph.get(brain.id, target.id))

    def move(
        self,
        brain: Brain,
        ref: str,
        *,
        actor: str,
        folder: str | None = None,
        new_id: str | None = None,
        expected_hash: str | None = None,
    ) -> Summary:
        """A new folder and/or a new id. On a rename every document that links to the old id
        is rewritten to the new one in the same transaction (each rewrite a new version)."""
        if not folder and not new_id:
            raise InvalidInput("say where to: --folder and/or --id")
        record = self.resolve(brain, ref)
        self._check_expected(record, expected_hash)
        doc = edits.moved(parse(record.content), folder, new_id)
        renamed = doc.id != record.id
        if renamed and self._exists(brain, doc.id):
            raise Conflict(f"a brain document {doc.id!r} already exists")
        previous_id = record.id if renamed else None
        put = self.writer.put(
            doc, expected_hash=record.content_hash, action="move", previous_id=previous_id
        )
        changes: list[Change] = [put]
        if renamed:
            for other in self._referrers(brain, record.id):
                changed = edits.retarget(parse(other.content), record.id, doc.id)
                changes.append(
                    self.writer.put(changed, expected_hash=other.content_hash, action="relink")
                )
        self.writer.commit(brain.id, changes, actor)
        return summary(self.graph.get(brain.id, doc.id))

    def delete(self, brain: Brain, ref: str, *, actor: str, confirm: bool = False) -> DeletePlan:
        """What deleting would do (a dry run), or, with `confirm`, do it. The last content is
        kept as a version; the indexed document goes with it."""
        record = self.resolve(brain, ref)
        incoming = self.graph.edges(brain.id, target=record.id)
        backlinks = tuple(e for e in incoming if e.source != record.id)
        if confirm:
            self.writer.commit(brain.id, [GraphDelete(record.id, record.content_hash)], actor)
        return DeletePlan(summary(record), backlinks, deleted=confirm)

    # plumbing -----------------------------------------------------------------------------
    @staticmethod
    def _check_expected(record: GraphDocument, expected_hash: str | None) -> None:
        if expected_hash is not None and expected_hash != record.content_hash:
            raise Conflict(f"{record.id} changed since you read it; reload it and edit again")

    def _referrers(self, brain: Brain, doc_id: str) -> list[GraphDocument]:
        """Documents that link to, relate to, or are merged into `doc_id`."""
        sources = {e.source for e in self.graph.edges(brain.id, target=doc_id)}
        merged = {d.id for d in self.graph.documents(brain.id) if d.merged_into == doc_id}
        return [self.graph.get(brain.id, i) for i in sorted((sources | merged) - {doc_id})]

    def _edit(
        self,
        brain: Brain,
        ref: str,
        change: Callable[[BrainDoc], BrainDoc | None],
        action: str,
        actor: str,
        expected_hash: str | None,
    ) -> Written:
        """Read, change (None: nothing to do), write back against the hash that was read."""
        record = self.resolve(brain, ref)
        self._check_expected(record, expected_hash)
        changed = change(parse(record.content))
        if changed is None:
            return Written(summary(record), changed=False)
        put = self.writer.put(changed, expected_hash=record.content_hash, action=action)
        return Written(self._write(brain, [put], actor)[0], changed=True)

    def _write(self, brain: Brain, changes: list[Change], actor: str) -> list[Summary]:
        self.writer.commit(brain.id, changes, actor)
        return [summary(self.graph.get(brain.id, c.id)) for c in changes]
