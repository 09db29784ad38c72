"""Each file of a transfer is its own validated write, committed alone: a file that fails
validation or meets a conflict is refused without holding up the others."""

from __future__ import annotations

from collections.abc import Callable

from loci.errors import LociError, NotFound
from loci.graph.document import BrainDoc
from loci.graph.records import GraphDocument
from loci.graph.service import BrainGraph
from loci.graph.validate import validate
from loci.graph.writer import Change
from loci.models import Brain


def validation_problems(doc: BrainDoc) -> tuple[str, ...]:
    return tuple(str(p) for p in validate(doc))


def stored_document(graph: BrainGraph, brain: Brain, doc_id: str) -> GraphDocument | None:
    """The document as the brain has it now, or None if it has none of that id."""
    try:
        return graph.graph.get(brain.id, doc_id)
    except NotFound:
        return None


def commit_alone(
    graph: BrainGraph, brain: Brain, change: Callable[[], Change], actor: str
) -> LociError | None:
    """Make and commit one change; why it was refused, or None."""
    try:
        graph.writer.commit(brain.id, [change()], actor)
    except LociError as error:
        return error
    return None
