"""OPML, the outline feed readers export their subscriptions as (Feedly, NetNewsWire, Inoreader,
Thunderbird, Miniflux): each `<outline>` with an `xmlUrl` is a feed, nested in outlines that
are its folders. An OPML import follows each feed (`ImportingKind.follows`): it becomes a feed
source the worker checks on a schedule (`loci.service.scheduled`), not a document, so a second
import of the same file follows nothing new.

Read with an XML parser that loads no DTD, expands no entity and opens no network or file: an
OPML file crafted with entity tricks reads as written or is refused whole, never expanded.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from loci.errors import InvalidInput
from loci.imports.items import Export, ExportRefused, Item, ItemFailure, Limits
from loci.ingest.addresses import checked_url

_SAFE_XML = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
)
MAX_DEPTH = 20  # folders inside folders: deeper is not an export, and is not walked


def read(path: Path, limits: Limits) -> Export:
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise ExportRefused(f"{path.name} is over {limits.max_bytes:,} bytes; nothing was imported")
    try:
        root = etree.fromstring(path.read_bytes(), _SAFE_XML)
    except etree.XMLSyntaxError as exc:
        raise ExportRefused(f"{path.name} is not XML an OPML file would be: {exc}") from None
    if etree.QName(root).localname.lower() != "opml":
        raise ExportRefused(
            f"{path.name} is XML but not OPML (its root is <{etree.QName(root).localname}>);"
            " nothing was imported"
        )
    body = next((c for c in root if _name(c) == "body"), None)
    export = Export("opml")
    if body is not None:
        seen: set[str] = set()
        _walk(body, (), export, limits, seen, 0)
    if not export.items and not export.failed:
        raise ExportRefused(f"{path.name} lists no feeds (no <outline xmlUrl=...>)")
    return export


def _name(element: etree._Element) -> str:
    tag = element.tag
    return etree.QName(tag).localname.lower() if isinstance(tag, str) else ""


def _walk(
    parent: etree._Element,
    folders: tuple[str, ...],
    export: Export,
    limits: Limits,
    seen: set[str],
    depth: int,
) -> None:
    if depth > MAX_DEPTH:
        raise ExportRefused(f"outlines nested deeper than {MAX_DEPTH}; nothing was imported")
    for outline in parent:
        if _name(outline) != "outline":
            continue
        title = (outline.get("title") or outline.get("text") or "").strip()
        feed = (outline.get("xmlUrl") or outline.get("xmlurl") or "").strip()
        if not feed:  # a folder
            _walk(outline, (*folders, title) if title else folders, export, limits, seen, depth + 1)
            continue
        shown = title or feed
        try:
            checked_url(feed)
        except InvalidInput as error:
            export.failed.append(ItemFailure(shown, error.message))
            continue
        if feed in seen:
            export.skipped.append(ItemFailure(shown, "listed twice in this file"))
            continue
        seen.add(feed)
        site = (outline.get("htmlUrl") or "").strip() or None
        export.add(
            Item(
                key=feed,
                name=shown,
                body=b"",
                title=title or None,
                where=folders,
                tags=folders,
                url=feed,
                extra={"site": site},
            ),
            limits,
        )
