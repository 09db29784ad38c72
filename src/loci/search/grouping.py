"""One hit per document: the best passage leads, the document's next best ride under it.

A passage ranking lets one long document fill the page — five passages of the best note, and
the second-best note, which a person may be looking for, at rank six. Search results are
documents: each hit is a document's best passage, with its other passages that ranked among
the candidates kept under it (`Hit.more`), best first, so nothing found is dropped and nothing
buries the next document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from loci.models import Hit

MORE_PASSAGES = 3  # a document's further passages kept under its hit


def by_document(hits: Sequence[Hit], limit: int, more: int = MORE_PASSAGES) -> list[Hit]:
    """`hits` (best first) as at most `limit` documents, each its best passage with up to
    `more` of its other passages under it."""
    leads: dict[int, Hit] = {}
    rest: dict[int, list[Hit]] = {}
    for hit in hits:
        document = hit.citation.document_id
        if document not in leads:
            if len(leads) < limit:
                leads[document] = hit
                rest[document] = []
        elif len(rest[document]) < more:
            rest[document].append(hit)
    return [replace(lead, more=tuple(rest[d])) for d, lead in leads.items()]
