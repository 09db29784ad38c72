"""The BM25 index of a brain kept beside the database, so a new process does not rebuild it.

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
from loci.store.lexical_index import LexicalIndex, Segment, Tokenize

log = logging.getLogger(__name__)

# 2: terms of the shared segmentation (CJK bigrams, NFKC, marks kept); 3: a file's name in its
# title field (`loci.context_line.index_title`); 4: stemmed by language
FORMAT = 4


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


def save(path: Path, index: LexicalIndex, identity: IndexIdentity) -> None:
    arrays: dict[str, Any] = {
        "meta": np.frombuffer(json.dumps(identity.meta(index.seq)).encode(), np.uint8),
    }
    for n, segment in enumerate(index.segments):
        words = list(segment.terms)
        encoded = [w.encode() for w in words]
        arrays[f"s{n}_chunk_ids"] = segment.chunk_ids
        arrays[f"s{n}_lengths"] = segment.lengths
        arrays[f"s{n}_live"] = segment.live
        arrays[f"s{n}_offsets"] = segment.offsets
        arrays[f"s{n}_rows"] = segment.rows
        arrays[f"s{n}_tfs"] = segment.tfs
        # Terms as one byte string plus boundaries; term i's postings are at terms[word].
        arrays[f"s{n}_words"] = np.frombuffer(b"".join(encoded), np.uint8)
        arrays[f"s{n}_word_ends"] = np.cumsum([len(e) for e in encoded], dtype=np.int64)
        arrays[f"s{n}_word_ids"] = np.fromiter(
            (segment.terms[w] for w in words), np.int64, len(words)
        )
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
) -> LexicalIndex | None:
    """The saved index if it is this brain's, built the same way, and not ahead of the log."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            expected = identity.meta(int(meta.get("seq", -1)))
            if meta != expected or int(meta["seq"]) > log_position:
                return None
            index = LexicalIndex(
                tokenize, identity.weights, int(meta["seq"]), identity.k1, identity.b
            )
            n = 0
            while f"s{n}_chunk_ids" in data:
                index.segments.append(_segment(data, n))
                n += 1
            return index
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        log.warning("ignoring the unreadable BM25 index file %s", path.name, exc_info=True)
        return None


def _segment(data: np.lib.npyio.NpzFile, n: int) -> Segment:
    blob = bytes(data[f"s{n}_words"])
    ends = data[f"s{n}_word_ends"].tolist()
    ids = data[f"s{n}_word_ids"].tolist()
    starts = [0, *ends[:-1]]
    terms = {blob[s:e].decode(): i for s, e, i in zip(starts, ends, ids, strict=True)}
    return Segment(
        chunk_ids=data[f"s{n}_chunk_ids"],
        lengths=data[f"s{n}_lengths"],
        live=data[f"s{n}_live"],
        terms=terms,
        offsets=data[f"s{n}_offsets"],
        rows=data[f"s{n}_rows"],
        tfs=data[f"s{n}_tfs"],
    )
