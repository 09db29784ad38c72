"""The kinds of export Loci reads, each by a module of this package with a
`read(path, limits) -> Export` function, imported only when its kind is used. A kind that
`follows` lists places to follow rather than things to keep (OPML's feeds): its items become
scheduled sources, not documents (`Importing`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loci.errors import InvalidInput
from loci.imports.items import Export, Limits

Reader = Callable[[Path, Limits], Export]


@dataclass(frozen=True)
class Kind:
    name: str  # as typed: `loci import NAME PATH`
    module: str  # loci.imports.<module>
    what: str  # the export it reads, as the person knows it
    follows: str | None = None  # its items are sources of this kind (`loci.upstream.kinds`)


KINDS: tuple[Kind, ...] = (
    Kind("kindle", "kindle", "Kindle's My Clippings.txt"),
    Kind("notion", "notion", "Notion's Markdown & CSV export (a zip or its folder)"),
    Kind("evernote", "evernote", "Evernote's .enex notebooks (a file, a zip or a folder of them)"),
    Kind("keep", "keep", "Google Keep from Google Takeout (the zip or its folder)"),
    Kind("readwise", "readwise", "Readwise's CSV export (or its Markdown export zip)"),
    Kind("chatgpt", "chatgpt", "ChatGPT's data export (the zip with conversations.json)"),
    Kind("claude", "claude", "Claude's data export (the zip with conversations.json)"),
    Kind("bookmarks", "bookmarks", "browser bookmarks (Chrome, Firefox, Safari, Pocket, Raindrop)"),
    Kind("opml", "opml", "a feed reader's OPML subscriptions, followed as feeds", follows="feed"),
)
BY_NAME = {k.name: k for k in KINDS}


def kind_named(kind: str) -> Kind:
    found = BY_NAME.get(kind)
    if found is None:
        known = ", ".join(k.name for k in KINDS)
        raise InvalidInput(f"no importer for {kind!r}; Loci imports: {known}")
    return found


def reader_for(kind: str) -> Reader:
    found = kind_named(kind)
    module = importlib.import_module(f"loci.imports.{found.module}")
    read: Reader = module.read
    return read
