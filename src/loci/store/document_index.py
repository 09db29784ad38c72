"""BM25 over a brain's whole documents, beside the passage index of the SQLite store.

A `LexicalIndex` whose rows are documents (`loci.store.document_terms`: the index title and each
stretch of the passages' text once), with the brain's own document statistics — how many
documents hold a term, their mean length — and the same k1, b and column weights as the passage
index. It keeps which document each indexed passage belongs to, so a search asks for the
document scores of its passages directly, and so catching up knows which documents a deleted
passage belonged to (the change log names passages, not documents).

A document's rows change whole: its passages are replaced together, so a change to any of them
re-reads the document. Like the passage index, nothing here is canonical.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from loci.store.document_terms import PassageText, document_columns
from loci.store.lexical_index import LexicalIndex, Tokenize

# (document id, index title, its passages in index order with their chunk ids)
DocumentRow = tuple[int, str, list[tuple[int, PassageText]]]

_NONE = np.zeros(0, np.int64)


class DocumentIndex:
    def __init__(
        self,
        tokenize: Tokenize,
        weights: tuple[int, int, int],
        k1: float,
        b: float,
        lexical: LexicalIndex | None = None,
        chunk_ids: npt.NDArray[np.int64] = _NONE,
        owners: npt.NDArray[np.int64] = _NONE,
    ) -> None:
        self.lexical = lexical or LexicalIndex(tokenize, weights, 0, k1, b)
        # Indexed passages, ascending, and each one's document. Swapped whole, never edited:
        # a search may be reading them while a catch-up runs.
        self.chunk_ids = chunk_ids
        self.owners = owners

    @property
    def size(self) -> int:
        return self.lexical.size

    def add(self, rows: Iterable[DocumentRow]) -> None:
        """Index documents (sorted by id) that are not indexed."""
        tokenize = self.lexical.tokenize
        new_chunks: list[int] = []
        new_owners: list[int] = []

        def token_rows() -> Iterable[tuple[int, list[str], list[str], list[str]]]:
            for document_id, title, passages in rows:
                if not passages:
                    continue
                for chunk_id, _ in passages:
                    new_chunks.append(chunk_id)
                    new_owners.append(document_id)
                yield (document_id, *document_columns(title, [p for _, p in passages], tokenize))

        self.lexical.add_tokens(token_rows())
        if new_chunks:
            added = np.asarray(new_chunks, np.int64)
            order = np.argsort(added, kind="stable")
            added, added_owners = added[order], np.asarray(new_owners, np.int64)[order]
            chunk_ids = np.concatenate([self.chunk_ids, added])
            owners = np.concatenate([self.owners, added_owners])
            # New passages have new, higher ids (ids are never handed out twice); anything
            # else is sorted in.
            if len(self.chunk_ids) and added[0] <= self.chunk_ids[-1]:
                order = np.argsort(chunk_ids, kind="stable")
                chunk_ids, owners = chunk_ids[order], owners[order]
            self.chunk_ids, self.owners = chunk_ids, owners

    def remove(self, document_ids: Sequence[int]) -> None:
        if not document_ids:
            return
        gone = np.asarray(list(document_ids), np.int64)
        self.lexical.remove(document_ids)
        keep = ~np.isin(self.owners, gone)
        if not keep.all():
            self.chunk_ids, self.owners = self.chunk_ids[keep], self.owners[keep]

    def owners_of(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id -> document id, for the indexed passages among `chunk_ids`."""
        wanted = np.asarray(list(chunk_ids), np.int64)
        known, owners = self.chunk_ids, self.owners
        at = np.searchsorted(known, wanted)
        inside = at < len(known)
        found = np.zeros(len(wanted), np.bool_)
        found[inside] = known[at[inside]] == wanted[inside]
        return dict(zip(wanted[found].tolist(), owners[at[found]].tolist(), strict=True))

    def passage_scores(self, tokens: Sequence[str], chunk_ids: Sequence[int]) -> dict[int, float]:
        """chunk id -> its document's BM25, for the indexed passages among `chunk_ids`."""
        owner = self.owners_of(chunk_ids)
        scores = self.lexical.scores(tokens, list(set(owner.values())))
        return {chunk: scores.get(document, 0.0) for chunk, document in owner.items()}

    def ceiling(self, tokens: Sequence[str]) -> float:
        return self.lexical.ceiling(tokens)
