"""An in-memory BM25 index of one brain's chunks, for large brains where FTS5's `bm25()` is slow.

FTS5 scores every chunk that matches any query term with a per-row auxiliary function (about
2.5 µs a row here) before it sorts: at a million chunks a question with common words costs half a
second. This index keeps the postings as NumPy arrays and scores a query term-at-a-time into a
dense accumulator, so the cost is a few vectorised passes over the matching postings.

It scores as FTS5's `bm25()` does — the same terms (`loci.store.stemming`), same column
weights, the same idf with its floor of 1e-6; at FTS5's k1 = 1.2, b = 0.75 the scores are equal
(a test holds it to that) — with two deliberate differences. Statistics (chunk count, mean
length, document frequencies) are the brain's own, where FTS5's are those of the whole table, so
a brain's ranking does not depend on what other brains hold. And k1 and b, which FTS5 fixes, are
0.9 and 0.4 (Anserini's defaults across BEIR): passages are already cut to similar lengths, and
less length normalisation ranks better (docs/benchmarks-journal.md, SciFact hybrid 0.7404 → 0.7459).

The index is a list of segments. A segment is immutable except for its `live` mask: chunks that
change are marked dead where they were and indexed again in a new segment (the store tells the
index which chunk ids changed, from its change log), and small segments are merged when they
pile up. Nothing here is canonical: the index is rebuilt from the chunks table whenever needed.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loci.models import TextCeiling

K1 = 0.9
B = 0.4
FTS5_K1, FTS5_B = 1.2, 0.75  # what SQLite's bm25() uses, fixed in its C code
IDF_FLOOR = 1e-6  # FTS5 replaces a non-positive idf with this
SEGMENT_ROWS = 50_000  # rows per segment on a full build; also keeps row numbers in uint16

Tokenize = Callable[[str, str], list[str]]  # (text, stemmer) -> terms
# (chunk id, title, heading path, body, stemmer): what FTS5 indexes beside the brain token,
# and the stemmer of the chunk's language (`loci.store.stemming`)
IndexRow = tuple[int, str, str, str, str]
# (row id, title terms, heading path terms, body terms): a row as the index inverts it
TokenRow = tuple[int, list[str], list[str], list[str]]


@dataclass(eq=False)  # compared by identity: segments are merged by object
class Segment:
    ids: npt.NDArray[np.int64]  # ascending: chunk ids (or document ids, `document_index`)
    lengths: npt.NDArray[np.float64]  # tokens in the FTS row, all columns (brain token included)
    live: npt.NDArray[np.bool_]
    terms: dict[str, int]  # token -> index into offsets
    offsets: npt.NDArray[np.int64]
    rows: npt.NDArray[np.uint16]  # postings: row numbers, ascending within a term
    tfs: npt.NDArray[np.uint16]  # weighted term frequency (title counts double, as in FTS5)

    @property
    def live_count(self) -> int:
        return int(np.count_nonzero(self.live))

    def postings(self, token: str) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint16]]:
        index = self.terms.get(token)
        if index is None:
            return _EMPTY_ROWS, _EMPTY_ROWS
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.rows[start:end], self.tfs[start:end]

    def kill(self, ids: npt.NDArray[np.int64]) -> int:
        """Mark these rows dead if they are here; returns how many were live."""
        at = np.searchsorted(self.ids, ids)
        at = at[at < len(self.ids)]
        found = at[np.isin(self.ids[at], ids)]
        killed = int(np.count_nonzero(self.live[found]))
        if killed:
            live = self.live.copy()  # copy on write: a search may be reading the old mask
            live[found] = False
            self.live = live
        return killed


_EMPTY_ROWS = np.zeros(0, np.uint16)


def build_segment(rows: Sequence[TokenRow], weights: tuple[int, int, int]) -> Segment:
    """Invert up to SEGMENT_ROWS tokenized rows (sorted by id)."""
    if len(rows) > SEGMENT_ROWS:
        raise ValueError("a segment holds at most SEGMENT_ROWS rows")
    # Token ids are handed out in first-seen order by a counter behind a defaultdict, so the
    # per-token work stays in C (map over a list); everything after is NumPy.
    vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    flat: list[str] = []
    counts: list[int] = []  # tokens per (row, column): title, heading path, body
    for _row_id, *columns in rows:
        for tokens in columns:
            flat += tokens
            counts.append(len(tokens))
    token_ids = np.fromiter(map(vocabulary.__getitem__, flat), np.int64, len(flat))
    per_column = np.asarray(counts, np.int64)
    lengths = 1.0 + per_column.reshape(-1, 3).sum(axis=1).astype(np.float64)  # + brain token
    row_of = np.repeat(np.repeat(np.arange(len(rows), dtype=np.int64), 3), per_column)
    weight_of = np.repeat(np.tile(np.asarray(weights, np.int64), len(rows)), per_column)
    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    n_terms = len(vocabulary)
    if len(token_ids):
        keys = token_ids * len(rows) + row_of
        column_weights = weight_of
        order = np.argsort(keys)
        keys, column_weights = keys[order], column_weights[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        unique = keys[starts]
        tfs = np.add.reduceat(column_weights, starts)
        term_of = unique // len(rows)
        posting_rows = (unique % len(rows)).astype(np.uint16)
        offsets = np.searchsorted(term_of, np.arange(n_terms + 1)).astype(np.int64)
    else:
        tfs = np.zeros(0, np.int64)
        posting_rows = _EMPTY_ROWS
        offsets = np.zeros(n_terms + 1, np.int64)
    return Segment(
        ids=ids,
        lengths=lengths,
        live=np.ones(len(rows), np.bool_),
        terms=dict(vocabulary),
        offsets=offsets,
        rows=posting_rows,
        tfs=np.minimum(tfs, np.iinfo(np.uint16).max).astype(np.uint16),
    )


def tokenized(rows: Iterable[IndexRow], tokenize: Tokenize) -> Iterator[TokenRow]:
    """Chunk rows as their columns' terms; titles and heading paths, which repeat across a
    document's chunks, are analysed once."""
    cache: dict[tuple[str, str], list[str]] = {}

    def cached(text: str, stemmer: str) -> list[str]:
        found = cache.get((text, stemmer))
        if found is None:
            if len(cache) > 10_000:
                cache.clear()
            found = cache[text, stemmer] = tokenize(text, stemmer)
        return found

    for row_id, title, headings, body, stemmer in rows:
        yield row_id, cached(title, stemmer), cached(headings, stemmer), tokenize(body, stemmer)


class LexicalIndex:
    """BM25 over one brain's chunks; `seq` is the last change-log entry it reflects."""

    def __init__(
        self,
        tokenize: Tokenize,
        weights: tuple[int, int, int],
        seq: int = 0,
        k1: float = K1,
        b: float = B,
    ) -> None:
        self.tokenize = tokenize
        self.weights = weights  # integer weights of title, heading path and body
        self.seq = seq
        self.k1, self.b = k1, b
        self.segments: list[Segment] = []

    @property
    def size(self) -> int:
        return sum(s.live_count for s in self.segments)

    def add(self, rows: Iterable[IndexRow]) -> None:
        """Index chunk rows (sorted by chunk id)."""
        self.add_tokens(tokenized(rows, self.tokenize))

    def add_tokens(self, rows: Iterable[TokenRow]) -> None:
        """Index rows already analysed (sorted by id)."""
        batch: list[TokenRow] = []
        for row in rows:
            batch.append(row)
            if len(batch) == SEGMENT_ROWS:
                self.segments = [*self.segments, build_segment(batch, self.weights)]
                batch = []
        if batch:
            self.segments = [*self.segments, build_segment(batch, self.weights)]

    def remove(self, row_ids: Sequence[int]) -> None:
        ids = np.unique(np.asarray(row_ids, np.int64))
        if len(ids):
            for segment in self.segments:
                segment.kill(ids)
            self.segments = [s for s in self.segments if s.live_count]

    def small_segments(self, below: int) -> list[Segment]:
        return [s for s in self.segments if len(s.ids) < below]

    def ceiling(self, tokens: Sequence[str]) -> float:
        """The best score any chunk could reach for these tokens: each matching term's idf
        times k1 + 1, where BM25's term frequency saturates. Fusion divides the leg's scores by
        it, so how much of the question a passage matches counts, not only its rank."""
        return self.text_ceiling(tokens).score

    def text_ceiling(self, tokens: Sequence[str]) -> TextCeiling:
        """`ceiling`, with the idf of the most specific matching token and the live rows."""
        view = [(s, s.live) for s in self.segments]
        total = sum(int(np.count_nonzero(live)) for _, live in view)
        idfs = []
        for token in tokens:
            matches = _matches(view, [s.postings(token) for s, _ in view])
            if matches:
                idfs.append(idf(total, matches))
        return TextCeiling(sum(idfs) * (self.k1 + 1.0), max(idfs, default=0.0), total)

    def search(
        self,
        tokens: Sequence[str],
        limit: int,
        allowed: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) best first; ties broken by chunk id as FTS5 returns them."""
        if not tokens or limit <= 0:
            return []
        # One consistent view: a catch-up on another thread swaps lists and masks, never edits.
        view = [(s, s.live) for s in self.segments]
        total = sum(int(np.count_nonzero(live)) for _, live in view)
        if total == 0:
            return []
        mean_length = sum(float(s.lengths[live].sum()) for s, live in view) / total
        postings = [[s.postings(t) for s, _ in view] for t in tokens]
        idfs = [idf(total, _matches(view, per_segment)) for per_segment in postings]
        best_ids: list[npt.NDArray[np.int64]] = []
        best_scores: list[npt.NDArray[np.float64]] = []
        for number, (segment, live) in enumerate(view):
            k1, b = self.k1, self.b
            norm = k1 * (1.0 - b + b * segment.lengths / mean_length)
            scores = np.zeros(len(segment.ids), np.float64)
            for weight, per_segment in zip(idfs, postings, strict=True):
                rows, tfs = per_segment[number]
                if len(rows):
                    tf = tfs.astype(np.float64)
                    scores[rows] += weight * tf * (k1 + 1.0) / (tf + norm[rows])
            keep = live & (scores > 0)
            if allowed is not None:
                keep &= np.isin(segment.ids, allowed)
            candidates = np.flatnonzero(keep)
            if len(candidates) > limit:
                cut = np.argpartition(-scores[candidates], limit - 1)[:limit]
                candidates = candidates[cut]
            best_ids.append(segment.ids[candidates])
            best_scores.append(scores[candidates])
        ids = np.concatenate(best_ids)
        values = np.concatenate(best_scores)
        order = np.lexsort((ids, -values))[:limit]
        return [(int(ids[i]), float(values[i])) for i in order]

    def scores(self, tokens: Sequence[str], ids: Sequence[int]) -> dict[int, float]:
        """BM25 of the rows `ids` (those matching no token score 0; unknown ids are left out).
        Each posting list is searched for the rows, not scanned: the cost is in the rows asked
        for, plus counting each term's matches for its idf, as `search` does."""
        wanted = np.unique(np.asarray(ids, np.int64))
        if not tokens or not len(wanted):
            return {}
        view = [(s, s.live) for s in self.segments]
        total = sum(int(np.count_nonzero(live)) for _, live in view)
        if total == 0:
            return {}
        mean_length = sum(float(s.lengths[live].sum()) for s, live in view) / total
        postings = [[s.postings(t) for s, _ in view] for t in tokens]
        idfs = [idf(total, _matches(view, per_segment)) for per_segment in postings]
        out: dict[int, float] = {}
        k1, b = self.k1, self.b
        for number, (segment, live) in enumerate(view):
            here = _rows_of(segment.ids, wanted)
            here = here[live[here]]
            if not len(here):
                continue
            norm = k1 * (1.0 - b + b * segment.lengths[here] / mean_length)
            scores = np.zeros(len(here), np.float64)
            for weight, per_segment in zip(idfs, postings, strict=True):
                rows, tfs = per_segment[number]
                at = _rows_of(rows.astype(np.int64), here, positions=True)
                found = at >= 0
                if found.any():
                    tf = tfs[at[found]].astype(np.float64)
                    scores[found] += weight * tf * (k1 + 1.0) / (tf + norm[found])
            out.update(zip(segment.ids[here].tolist(), scores.tolist(), strict=True))
        return out


View = list[tuple[Segment, npt.NDArray[np.bool_]]]
Postings = list[tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint16]]]


def _matches(view: View, per_segment: Postings) -> int:
    """Live chunks holding the term, over every segment."""
    return sum(
        int(np.count_nonzero(live[rows]))
        for (_, live), (rows, _) in zip(view, per_segment, strict=True)
    )


def _rows_of(
    haystack: npt.NDArray[np.int64], needles: npt.NDArray[np.int64], positions: bool = False
) -> npt.NDArray[np.int64]:
    """Where each needle sits in the ascending `haystack`: the positions of those found or,
    with `positions`, one entry per needle (-1 where absent)."""
    at = np.searchsorted(haystack, needles)
    inside = at < len(haystack)
    found = np.zeros(len(needles), np.bool_)
    found[inside] = haystack[at[inside]] == needles[inside]
    if positions:
        return np.where(found, at, -1)
    return at[found]


def idf(total: int, matches: int) -> float:
    """BM25's idf of a term in `matches` of `total` rows, floored as FTS5 floors it."""
    value = math.log((total - matches + 0.5) / (matches + 0.5))
    return value if value > 0 else IDF_FLOOR
