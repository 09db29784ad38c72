"""What every followed place gives the scheduled sync: a `Listing` of its entries, each with a
stable key and a version that changes when its content does, and the bytes of one entry
(`Fetched`). A listing may say nothing changed since the last run (`unchanged`, from an ETag or
a folder's sync token), so an idle source costs one conditional request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Entry:
    """One item upstream: `key` is stable for its life (a feed entry's id, an IMAP UID with
    the folder's UIDVALIDITY, a path in a repository or share), `version` changes when its
    content does (an ETag, a blob hash, a modification time); `title` is shown in reports."""

    key: str
    version: str
    title: str | None = None


@dataclass(frozen=True)
class Listing:
    entries: tuple[Entry, ...] = ()
    # Nothing changed since `state` (a 304, an unchanged sync token): `entries` is empty and
    # the documents of the source are left as they are.
    unchanged: bool = False
    # What the next run sends back (ETag, Last-Modified, UIDVALIDITY, the commit read): kept
    # on the source between runs.
    state: Mapping[str, Any] = field(default_factory=dict)
    # Entries that could not be read this run (a page of a list that answered 500): key ->
    # why. Each fails alone: its document is kept as it is, and the run reports it.
    failed: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fetched:
    """An entry's content, as a document keeps it."""

    name: str  # file name
    data: bytes
    mime_type: str | None = None
    title: str | None = None
    url: str | None = None  # where a reader opens it (a feed entry's link)
    metadata: Mapping[str, Any] = field(default_factory=dict)


class Upstream(Protocol):
    """A followed place. Errors are `loci.errors.LociError`s with a message a person can act
    on ("the feed answered 404", "IMAP login failed for alice"): the run records it as the
    source's last error and retries later with backoff; nothing is removed on an error."""

    def list(self, state: Mapping[str, Any]) -> Listing: ...

    def fetch(self, entry: Entry) -> Fetched: ...
