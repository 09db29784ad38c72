"""Themes without a model: the new documents grouped by meaning, each named by its own words.

Grouping is greedy and deterministic: documents in the order given join the group whose
centroid is closest, if their cosine to it reaches `THRESHOLD`, else start a group. A document's
vector is the mean of its stored passage vectors (as `loci.search.related` reads it), so nothing
is embedded again. Measured with all-MiniLM-L6-v2 on ten two-sentence documents in five topics
(kettle descaling, gardening, tax, car upkeep, sourdough): same-topic pairs scored 0.13, 0.42,
0.50, 0.52, 0.71, different-topic pairs at most 0.23 — so 0.35 keeps topics apart and joins most
pairs that belong together (tests/test_digest.py checks a kettle pair and a garden pair).

A group is named by the words most distinctive of it: the share of its documents that use a
word, times the word's rarity among the brain's other documents (inverse document frequency
over a bounded sample of them). A word the rest of the brain uses everywhere names nothing.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loci.search.lexical import STOPWORDS

THRESHOLD = 0.35
MAX_THEMES = 5
WORDS_PER_THEME = 3
WORD = re.compile(r"[^\W\d_]{3,}(?:['’][^\W\d_]+)?", re.UNICODE)

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Theme:
    words: tuple[str, ...]  # most distinctive first
    document_ids: tuple[int, ...]  # in the order they were given

    @property
    def label(self) -> str:
        return ", ".join(self.words)


def words_of(text: str) -> set[str]:
    """The distinct content words of a text, lowercased."""
    return {w.lower() for w in WORD.findall(text)} - STOPWORDS


def group(vectors: Mapping[int, Vector], threshold: float = THRESHOLD) -> list[list[int]]:
    """Document ids grouped greedily by cosine to each group's centroid, in the given order."""
    groups: list[list[int]] = []
    sums: list[Vector] = []
    for document_id, vector in vectors.items():
        unit = _unit(vector)
        if unit is None:
            continue
        best, best_score = -1, threshold
        for index, total in enumerate(sums):
            centroid = _unit(total)
            score = float(unit @ centroid) if centroid is not None else -1.0
            if score >= best_score:
                best, best_score = index, score
        if best < 0:
            groups.append([document_id])
            sums.append(unit.copy())
        else:
            groups[best].append(document_id)
            sums[best] = sums[best] + unit
    return groups


def themes(
    vectors: Mapping[int, Vector],
    background: Mapping[int, set[str]],
    threshold: float = THRESHOLD,
) -> list[Theme]:
    """Up to `MAX_THEMES` groups of the documents in `vectors`, biggest first, each named by
    its distinctive words. `background` holds the word sets of the brain's documents, the new
    ones included: a group's word scores by the share of the group using it times its rarity
    among the other documents."""
    frequency: Counter[str] = Counter(w for words in background.values() for w in words)
    found = []
    for members in group(vectors, threshold):
        uses: Counter[str] = Counter(w for m in members for w in background.get(m, set()))
        rest = len(background) - sum(1 for m in members if m in background)
        scored = []
        for word, count in uses.items():
            rarity = math.log((rest + 1) / (frequency[word] - count + 0.5))
            if rarity <= 0:
                continue
            # Ties (e.g. two documents sharing every rare word) go to the longer word, then A-Z.
            scored.append((-(count / len(members)) * rarity, -len(word), word))
        named = tuple(w for _, _, w in sorted(scored)[:WORDS_PER_THEME])
        if named:
            found.append(Theme(named, tuple(members)))
    found.sort(key=lambda t: -len(t.document_ids))  # stable: equal sizes keep their order
    return found[:MAX_THEMES]


def mean_vector(vectors: Sequence[Vector]) -> Vector | None:
    if not vectors:
        return None
    return _unit(np.mean(np.stack(list(vectors)), axis=0).astype(np.float32))


def _unit(vector: Vector) -> Vector | None:
    norm = float(np.linalg.norm(vector))
    return None if norm == 0.0 else (vector / norm).astype(np.float32)
