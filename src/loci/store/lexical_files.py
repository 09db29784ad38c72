"""The BM25 index of a brain kept beside the database, so a new process does not rebuild it:
its passage index and its document-level index (`loci.store.document_index`) in one file.

Building the index is the slow part of a first search (1.5 s for 11k passages, minutes at a
million); loading the arrays back is a read. The file is derived like the index itself: it says
which brain it belongs to (id and creation time, so a brain deleted and made again under the
same id does not inherit it), the scoring it was built with, and the change-log position it
reflects. A file that does not match is ignored and the index is rebuilt; one that is behind is
caught up from the log like an index in memory. Writes go to a temporary name and are renamed
into place, so a reader sees a whole file or the previous one, and of several processes saving
at once the last one wins with a file that is complete in itself.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from loci.private_files import make_private_dir
from loci.store.document_index import DocumentIndex
from loci.store.lexical_index import LexicalIndex, Segment, Tokenize

log = logging.getLogger(__name__)

# 2: terms of the shared segmentation (CJK bigrams, NFKC, marks kept); 3: a file's name in its
# title field (`loci.context_line.index_title`); 4: stemmed by language; 5: and the
# document-level index
FORMAT = 5


@dataclass(frozen=True)
class IndexIdentity:
    """What a saved index must match to be used."""

    brain_id: int
    brain_created: str
    weights: tuple[int, int, int]
    k1: float
    b: float
    language: str  # the brain's stemming language: another one makes other terms

    def meta(self, seq: int) -> dict[str, object]:
        return {
            "format": FORMAT,
            "brain_id": self.brain_id,
            "brain_created": self.brain_created,
            "weights": list(self.weights),
            "k1": self.k1,
            "b": self.b,
            "language": self.language,
            "seq": seq,
        }


def index_path(folder: Path, brain_id: int) -> Path:
    return folder / f"bm25-brain-{brain_id}.npz"


def save(
    path: Path, index: LexicalIndex, documents: DocumentIndex, identity: IndexIdentity
) -> None:
    arrays: dict[str, Any] = {
        "meta": np.frombuffer(json.dumps(identity.meta(index.seq)).encode(), np.uint8),
        "document_chunks": documents.chunk_ids,
        "document_owners": documents.owners,
    }
    for prefix, segments in (("s", index.segments), ("d", documents.lexical.segments)):
        for n, segment in enumerate(segments):
            _put_segment(arrays, f"{prefix}{n}", segment)
    make_private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(
    path: Path, identity: IndexIdentity, tokenize: Tokenize, log_position: int
) -> tuple[LexicalIndex, DocumentIndex] | None:
    """The saved indexes if they are this brain's, built the same way, and not ahead of the
    log."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            expected = identity.meta(int(meta.get("seq", -1)))
            if meta != expected or int(meta["seq"]) > log_position:
                return None
            seq = int(meta["seq"])
            index = LexicalIndex(tokenize, identity.weights, seq, identity.k1, identity.b)
            by_document = LexicalIndex(tokenize, identity.weights, seq, identity.k1, identity.b)
            for prefix, into in (("s", index), ("d", by_document)):
                n = 0
                while f"{prefix}{n}_ids" in data:
                    into.segments.append(_segment(data, f"{prefix}{n}"))
                    n += 1
            documents = DocumentIndex(
                tokenize, identity.weights, identity.k1, identity.b, by_document,
                data["document_chunks"], data["document_owners"],
            )  # fmt: skip
            return index, documents
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        log.warning("ignoring the unreadable BM25 index file %s", path.name, exc_info=True)
        return None


def _put_segment(arrays: dict[str, Any], name: str, segment: Segment) -> None:
    words = list(segment.terms)
    encoded = [w.encode() for w in words]
    arrays[f"{name}_ids"] = segment.ids
    arrays[f"{name}_lengths"] = segment.lengths
    arrays[f"{name}_live"] = segment.live
    arrays[f"{name}_offsets"] = segment.offsets
    arrays[f"{name}_rows"] = segment.rows
    arrays[f"{name}_tfs"] = segment.tfs
    # Terms as one byte string plus boundaries; term i's postings are at terms[word].
    arrays[f"{name}_words"] = np.frombuffer(b"".join(encoded), np.uint8)
    arrays[f"{name}_word_ends"] = np.cumsum([len(e) for e in encoded], dtype=np.int64)
    arrays[f"{name}_word_ids"] = np.fromiter(
        (segment.terms[w] for w in words), np.int64, len(words)
    )


def _segment(data: np.lib.npyio.NpzFile, name: str) -> Segment:
    blob = bytes(data[f"{name}_words"])
    ends = data[f"{name}_word_ends"].tolist()
    ids = data[f"{name}_word_ids"].tolist()
    starts = [0, *ends[:-1]]
    terms = {blob[s:e].decode(): i for s, e, i in zip(starts, ends, ids, strict=True)}
    return Segment(
        ids=data[f"{name}_ids"],
        lengths=data[f"{name}_lengths"],
        live=data[f"{name}_live"],
        terms=terms,
        offsets=data[f"{name}_offsets"],
        rows=data[f"{name}_rows"],
        tfs=data[f"{name}_tfs"],
    )
