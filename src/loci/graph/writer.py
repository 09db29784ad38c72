"""The one way into the graph's storage: validate, render, keep the Markdown, store atomically.

Every change the service makes becomes a `GraphPut` or `GraphDelete` here. A document that fails
validation is refused with every problem listed; one that passes is rendered (its `updated` set),
its Markdown kept in the blob store for the indexer, and its edges and timeline derived from the
text. `put_text` is the same write for Markdown that must be kept exactly as it came (a file
brought in by `import` or `sync`): validated, but neither re-rendered nor stamped. `commit` hands
a batch to the store as one transaction and then forgets blobs no document uses any more (the
store's versions keep old content, so nothing is lost).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loci.errors import InvalidInput
from loci.graph.document import BrainDoc, entry_id, now, parse
from loci.graph.links import derive_edges
from loci.graph.records import GraphDelete, GraphEdge, GraphPut, GraphTimelineEntry
from loci.graph.validate import validate
from loci.models import NewDocument
from loci.store.blobs import BlobStore
from loci.store.graph_tables import GraphStore

Change = GraphPut | GraphDelete


def check(doc: BrainDoc) -> None:
    problems = validate(doc)
    if problems:
        listed = "; ".join(str(p) for p in problems)
        raise InvalidInput(f"{doc.id or 'the document'} was not written — fix: {listed}")


class GraphWriter:
    def __init__(
        self, graph: GraphStore, blobs: BlobStore, unused: Callable[[Sequence[str]], list[str]]
    ) -> None:
        self.graph = graph
        self.blobs = blobs
        # The store's check across brains and document versions: the graph's own only sees
        # the brain it writes (row-level security), and bytes may be shared beyond it.
        self.unused = unused
        # Called after every commit with (brain id, the changes, actor): a vault followed as
        # pages writes the pages Loci changed back to their files.
        self.after_commit: list[Callable[[int, Sequence[Change], str], None]] = []

    def put(
        self,
        doc: BrainDoc,
        *,
        expected_hash: str | None,
        action: str,
        previous_id: str | None = None,
    ) -> GraphPut:
        """A checked, rendered write of `doc`; its Markdown is in the blob store on return."""
        stamp = now()
        doc = doc.with_changes(updated=stamp, created=doc.created or stamp)
        check(doc)
        return self._put(doc, doc.render(), expected_hash, action, previous_id)

    def put_text(self, text: str, *, expected_hash: str | None, action: str) -> GraphPut:
        """A checked write of Markdown exactly as given, nothing re-rendered or stamped:
        `import` and `sync` keep a file's bytes, so exporting it gives the same file back."""
        doc = parse(text)
        check(doc)
        return self._put(doc, text, expected_hash, action, None)

    def _put(
        self,
        doc: BrainDoc,
        content: str,
        expected_hash: str | None,
        action: str,
        previous_id: str | None,
    ) -> GraphPut:
        data = content.encode("utf-8")
        digest = self.blobs.put(data)  # canonical bytes first: the row never points at nothing
        texts = [doc.truth, *(e.text for e in doc.timeline)]
        edges = derive_edges(doc.id, texts, [(r.type, r.target) for r in doc.relations])
        # An entry written by hand without its `ev-` id still gets one in the derived table.
        timeline = {(e.id or entry_id(doc.id, e.at, e.text, e.source)): e for e in doc.timeline}
        return GraphPut(
            id=doc.id,
            kind=doc.kind,
            type=doc.type,
            folder=doc.folder,
            status=doc.status,
            title=doc.title,
            aliases=doc.aliases,
            merged_into=doc.merged_into,
            created=doc.created,
            updated=doc.updated,
            content=content,
            content_hash=digest,
            edges=tuple(GraphEdge(e.source, e.target, e.type) for e in edges),
            timeline=tuple(
                GraphTimelineEntry(doc.id, key, e.at, e.text, e.source)
                for key, e in timeline.items()
            ),
            index=NewDocument(
                kind=doc.kind,
                name=doc.path,
                title=doc.title,
                source_url=None,
                mime_type="text/markdown",
                size_bytes=len(data),
                content_hash=digest,
                metadata={"graph_id": doc.id, "type": doc.type, "status": doc.status},
            ),
            expected_hash=expected_hash,
            action=action,
            previous_id=previous_id,
        )

    def commit(self, brain_id: int, changes: Sequence[Change], actor: str) -> None:
        for content_hash in self.unused(self.graph.apply(brain_id, changes, actor)):
            self.blobs.delete(content_hash)
        for hook in self.after_commit:
            hook(brain_id, changes, actor)
