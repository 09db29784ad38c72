"""Which documents are a followed folder's: those of files under it that its globs take, all
of them or those at or under some paths (what a watcher saw change)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from loci.ingest.folder_walk import wanted
from loci.models import Brain, Document, Source
from loci.store.base import Store

# Up to this many changed folders (or paths gone, which may have been folders) are looked up
# one by one; more, and the source's documents are read once and sorted out in memory. Changed
# files are looked up together, whatever their number.
LOOKUP_PATHS = 64


def contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def in_scope(path: str, scope: set[str]) -> bool:
    """Whether `path` is one of `scope` or lies inside one of them."""
    if path in scope:
        return True
    parent = os.path.dirname(path)
    while parent and parent != path:
        if parent in scope:
            return True
        path, parent = parent, os.path.dirname(parent)
    return False


def source_documents(
    store: Store, brain: Brain, source: Source, scope: set[str] | None = None
) -> Sequence[Document]:
    """The source's documents: those of files under its folder that its globs take. A file
    added there by hand that the globs leave out (or a hidden one) is not the source's to
    remove. `scope`: only those at or under these paths."""
    folders = [] if scope is None else [p for p in scope if not os.path.isfile(p)]
    if scope is not None and source.path not in scope and len(folders) <= LOOKUP_PATHS:
        found = {d.id: d for d in store.documents_at(brain.id, sorted(scope))}
        for path in folders:  # a folder, or a path gone: what was under it
            found.update((d.id, d) for d in store.documents_under(brain.id, path))
        candidates: Iterable[Document] = sorted(found.values(), key=lambda d: d.id)
    else:
        candidates = store.documents_under(brain.id, source.path)
    return [
        d
        for d in candidates
        if of_source(source, d) and (scope is None or in_scope(str(d.source_path), scope))
    ]


def of_source(source: Source, document: Document) -> bool:
    """Whether `document` is of a file of `source`: under its folder, taken by its globs."""
    root = source.path.rstrip("/") + "/"
    path = document.source_path
    return (
        path is not None
        and path.startswith(root)
        and wanted(path[len(root) :], source.include, source.exclude)
    )
