"""Importing an export of another tool into a brain (`loci import KIND PATH`).

The reader reads the whole export first (`loci.imports`): an export it refuses imports
nothing. Then each item is a document known by its origin, "<kind>:<key>": the same item
imported again with the same text is left as it is, with new text it updates its document in
place (same id, a version kept), and a new one is added, so a second run of one export adds
nothing. A bad item fails alone, with its reason. Attachments become documents of their own
linked to their item (`attached_to` / `attachments`, as an e-mail's are), and links between
items of the export are recorded on both ends (`links` / `linked_from`), by document id.

An import adds and updates; it never removes a document whose item is no longer in the
export (an export is often partial). Following a place that changes is a source's job: an
export of places to follow (OPML's feeds, `Kind.follows`) makes each item a scheduled source
(`follow`, `loci.service.scheduled`) instead of a document; one followed already is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loci.errors import LociError
from loci.imports.items import Attachment, Export, Item, Limits
from loci.imports.readers import kind_named, reader_for
from loci.models import Brain
from loci.service.adding import AddResult
from loci.service.import_batches import ItemBytes, add_many
from loci.service.library import Library
from loci.store.blobs import sha256_hex

Action = Literal["add", "update", "unchanged", "fail", "skip"]
# Items written in one transaction: enough that the commit and the blobs' flush are a small
# share of an item's cost, few enough that an item's changes are not held back long.
BATCH = 200


@dataclass(frozen=True)
class ImportOutcome:
    """What the import did (or, in a dry run, would do) with one item."""

    name: str  # its title, or its name in the export
    action: Action
    document_id: int | None = None
    reason: str | None = None  # why it failed or was skipped
    attachments: int = 0
    source_id: int | None = None  # the source an item to follow is (`Kind.follows`)


@dataclass(frozen=True)
class ImportReport:
    kind: str
    dry_run: bool
    outcomes: tuple[ImportOutcome, ...]
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, kind: str, dry_run: bool, outcomes: Sequence[ImportOutcome]) -> ImportReport:
        counts = {a: 0 for a in ("add", "update", "unchanged", "fail", "skip")}
        for outcome in outcomes:
            counts[outcome.action] += 1
        return cls(kind, dry_run, tuple(outcomes), counts)


# Follow `url` as a source of `kind` in the brain (None: a dry run into a brain not made yet;
# then `dry_run`: only say; `confined`: for a caller who is not the machine's administrator):
# whether it is new ("add") or followed already ("unchanged"), and the source's id if any.
Follow = Callable[[Brain | None, str, str, bool, bool], tuple[Action, int | None]]


class Importing:
    def __init__(self, library: Library, limits: Limits, follow: Follow | None = None) -> None:
        self.library = library
        self.store = library.store
        self.limits = limits
        self.follow = follow

    def run(
        self,
        brain: Brain | None,
        kind: str,
        path: Path,
        *,
        dry_run: bool = False,
        tags: Sequence[str] = (),
        confined: bool = False,
    ) -> ImportReport:
        """`confined`: the caller is not the machine's administrator (a surface over HTTP),
        so places to follow obey the server's allow-lists (`ScheduledSources.add`)."""
        read = reader_for(kind)
        export = read(path, self.limits)
        outcomes: list[ImportOutcome] = [
            ImportOutcome(f.name, "fail", reason=f.reason) for f in export.failed
        ] + [ImportOutcome(s.name, "skip", reason=s.reason) for s in export.skipped]
        follows = kind_named(kind).follows
        if follows is not None:
            dry = dry_run or brain is None
            outcomes += [self._follow(brain, follows, item, dry, confined) for item in export.items]
            return ImportReport.of(kind, dry, outcomes)
        if dry_run or brain is None:  # a dry run into a brain not made yet: all of it is new
            outcomes += [self._plan(brain, kind, item) for item in export.items]
            return ImportReport.of(kind, True, outcomes)
        assert brain is not None
        written: dict[str, int] = {}
        origins = self.store.origins(brain.id, f"{kind}:")
        for start in range(0, len(export.items), BATCH):
            batch = export.items[start : start + BATCH]
            done = self._write_batch(brain, kind, batch, tags, origins)
            outcomes += done
            for item, outcome in zip(batch, done, strict=True):
                if outcome.document_id is not None:
                    written[item.key] = outcome.document_id
        self._link(export, written)
        return ImportReport.of(kind, False, outcomes)

    def _write_batch(
        self,
        brain: Brain,
        kind: str,
        items: Sequence[Item],
        tags: Sequence[str],
        origins: dict[str, int],
    ) -> list[ImportOutcome]:
        """`_write` for each of `items`, most of them in one transaction (`add_many`): the
        items first, then their attachments (which name their item's id), then the links
        between them. A link to fetch, and what `add_many` leaves, goes through `_write`."""
        all_tags = [(*item.tags, *tags) for item in items]
        kept = [i for i, item in enumerate(items) if item.url is None or item.body]
        added = add_many(
            self.library,
            brain,
            [
                ItemBytes(
                    items[i].name,
                    items[i].body,
                    origin_of(kind, items[i]),
                    title=items[i].title,
                    mime_type=items[i].mime_type,
                    source_url=items[i].url,
                    tags=all_tags[i],
                    metadata={"import": _facts(kind, items[i])},
                )
                for i in kept
            ],
            origins,
        )
        outcomes: list[ImportOutcome | None] = [None] * len(items)
        written: dict[int, AddResult] = {}  # the index of an item written here: how
        for i, result in zip(kept, added, strict=True):
            item = items[i]
            if isinstance(result, LociError):
                outcomes[i] = ImportOutcome(item.title or item.name, "fail", reason=result.message)
            elif result is not None:
                written[i] = result
        for i, item in enumerate(items):
            if outcomes[i] is None and i not in written:
                outcomes[i] = self._write(brain, kind, item, tags)  # each its own way
        attachments = [
            (i, result.document.id, attachment)
            for i, result in written.items()
            for attachment in items[i].attachments
        ]
        linked = add_many(
            self.library,
            brain,
            [
                ItemBytes(
                    a.name,
                    a.data,
                    _attachment_origin(origin_of(kind, items[i]), a),
                    mime_type=a.mime_type,
                    tags=all_tags[i],
                    metadata={"attached_to": parent_id},
                )
                for i, parent_id, a in attachments
            ],
            origins,
        )
        links: dict[int, list[dict[str, Any]]] = {}
        for (i, parent_id, attachment), result in zip(attachments, linked, strict=True):
            if result is None:
                origin = origin_of(kind, items[i])
                link = self._attach(brain, origin, parent_id, attachment, all_tags[i])
            elif isinstance(result, LociError):
                link = {"name": attachment.name, "error": result.message}
            else:
                link = {"id": result.document.id, "name": result.document.name}
            links.setdefault(i, []).append(link)
        for i, result in written.items():
            document_id = result.document.id
            if links.get(i):
                self.store.merge_document_metadata(document_id, {"attachments": links[i]})
            outcomes[i] = ImportOutcome(
                items[i].title or items[i].name,
                "update" if result.refreshed else "add",
                document_id,
                attachments=len(links.get(i, ())),
            )
        done: list[ImportOutcome] = []
        for outcome in outcomes:
            assert outcome is not None  # every item is written, or failed, above
            done.append(outcome)
        return done

    def _follow(
        self, brain: Brain | None, kind: str, item: Item, dry_run: bool, confined: bool
    ) -> ImportOutcome:
        name = item.title or item.name
        if self.follow is None or item.url is None:
            return ImportOutcome(name, "fail", reason="this Loci follows no sources")
        try:
            action, source_id = self.follow(brain, item.url, kind, dry_run, confined)
        except LociError as error:
            return ImportOutcome(name, "fail", reason=error.message)
        return ImportOutcome(name, action, source_id=source_id)

    def _plan(self, brain: Brain | None, kind: str, item: Item) -> ImportOutcome:
        name = item.title or item.name
        if brain is None:
            return ImportOutcome(name, "add", attachments=len(item.attachments))
        existing = self.store.find_by_origin(brain.id, origin_of(kind, item))
        reason = None
        if item.url is not None and not item.body:
            # A link to fetch: what it holds is known only once fetched (a dry run fetches
            # nothing). One imported before is most often the same page still.
            action: Action = "unchanged" if existing else "add"
            if existing:
                reason = "imported before; fetched again, it is updated if the page changed"
        elif existing is None:
            same = self.store.find_by_hash(brain.id, sha256_hex(item.body))
            action = "unchanged" if same else "add"
        else:
            action = "unchanged" if existing.content_hash == sha256_hex(item.body) else "update"
        return ImportOutcome(
            name,
            action,
            existing.id if existing else None,
            reason=reason,
            attachments=len(item.attachments),
        )

    def _write(self, brain: Brain, kind: str, item: Item, tags: Sequence[str]) -> ImportOutcome:
        name = item.title or item.name
        origin = origin_of(kind, item)
        before = self.store.find_by_origin(brain.id, origin)
        metadata = {"import": _facts(kind, item)}
        all_tags = (*item.tags, *tags)
        try:
            if item.url is not None and not item.body:
                added = self.library.add_url(
                    brain, item.url, all_tags, metadata=metadata, origin=origin, title=item.title
                )
            else:
                added = self.library.add_bytes(
                    brain,
                    item.name,
                    item.body,
                    tags=all_tags,
                    title=item.title,
                    mime_type=item.mime_type,
                    metadata=metadata,
                    origin=origin,
                    source_url=item.url,
                )
        except LociError as error:
            return ImportOutcome(name, "fail", reason=error.message)
        document = added.document
        action: Action = "unchanged" if added.deduped else "update" if before else "add"
        links = [self._attach(brain, origin, document.id, a, all_tags) for a in item.attachments]
        if links:
            self.store.merge_document_metadata(document.id, {"attachments": links})
        return ImportOutcome(name, action, document.id, attachments=len(links))

    def _attach(
        self, brain: Brain, origin: str, parent_id: int, attachment: Attachment, tags: Sequence[str]
    ) -> dict[str, Any]:
        try:
            added = self.library.add_bytes(
                brain,
                attachment.name,
                attachment.data,
                tags=tags,
                mime_type=attachment.mime_type,
                metadata={"attached_to": parent_id},
                origin=_attachment_origin(origin, attachment),
            )
        except LociError as error:
            return {"name": attachment.name, "error": error.message}
        return {"id": added.document.id, "name": added.document.name}

    def _link(self, export: Export, written: dict[str, int]) -> None:
        """Links between items, by document id, on both ends."""
        linked_from: dict[int, list[int]] = {}
        for item in export.items:
            source = written.get(item.key)
            targets = [written[k] for k in dict.fromkeys(item.links) if k in written]
            if source is None or not targets:
                continue
            self.store.merge_document_metadata(source, {"links": targets})
            for target in targets:
                linked_from.setdefault(target, []).append(source)
        for target, sources in linked_from.items():
            self.store.merge_document_metadata(target, {"linked_from": sources})


def origin_of(kind: str, item: Item) -> str:
    return f"{kind}:{item.key}"


def _attachment_origin(origin: str, attachment: Attachment) -> str:
    return f"{origin}#{sha256_hex(attachment.data)[:16]}"


def _facts(kind: str, item: Item) -> dict[str, Any]:
    facts: dict[str, Any] = {"kind": kind, "key": item.key}
    for name in ("where", "created", "updated", "url"):
        value = getattr(item, name)
        if value:
            facts[name] = list(value) if isinstance(value, tuple) else value
    facts.update({k: v for k, v in item.extra.items() if v is not None})
    return facts
