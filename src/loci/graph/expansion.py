"""Graph expansion for `brain query`: from the best hits, follow page edges.

A page that search did not find can still be the answer when a page it did find links to it
("who leads the compost effort?" finds the project page; the project links to its lead). The
walk starts at the best few hits, follows page edges both ways (relations and wiki links; an
evidence citation is not a hop) for up to two hops, and gives a reached page its seed's score
decayed per hop — added to its own score when search found it too, so a page that matches a
little and is linked from the best hit rises above one that only matches a little. Then every
score is blended with recency, so of two equally good pages the one touched lately comes first.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass

SEEDS = 5
MAX_HOPS = 2
HOP_DECAY = 0.5
RECENCY_WEIGHT = 0.1
RECENCY_HALF_LIFE_DAYS = 180.0


@dataclass(frozen=True)
class Reached:
    doc_id: str
    score: float
    path: tuple[str, ...]  # from the seed hit to this page, ids in order


def expand_from(
    seeds: list[tuple[str, float]], neighbours_of: Callable[[str], list[str]]
) -> list[Reached]:
    """Pages reached from the first `SEEDS` seeds within `MAX_HOPS` hops (other seeds included:
    a linked page deserves more than its own weak match), each with its best decayed score and
    the path that gave it."""
    best: dict[str, Reached] = {}
    frontier = [Reached(doc_id, score, (doc_id,)) for doc_id, score in seeds[:SEEDS]]
    for _ in range(MAX_HOPS):
        following = []
        for here in frontier:
            for neighbour in neighbours_of(here.doc_id):
                if neighbour in here.path:
                    continue
                reached = Reached(neighbour, here.score * HOP_DECAY, (*here.path, neighbour))
                if neighbour not in best or reached.score > best[neighbour].score:
                    best[neighbour] = reached
                    following.append(reached)
        frontier = following
    return sorted(best.values(), key=lambda r: -r.score)


def recency(updated: str, now: dt.datetime | None = None) -> float:
    """1 for a page updated now, ½ after the half-life, towards 0 for old or undated pages."""
    if not updated:
        return 0.0
    try:
        moment = dt.datetime.fromisoformat(updated.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    age_days = max(((now or dt.datetime.now(dt.UTC)) - moment).total_seconds() / 86400, 0.0)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def blended(score: float, updated: str) -> float:
    return (1 - RECENCY_WEIGHT) * score + RECENCY_WEIGHT * recency(updated)


TEXTUAL = ("text", "both")  # the legs that matched the question's own words
BELOW = 1e-5  # how far under a page that matches a lifted one is kept


@dataclass(frozen=True)
class Placed:
    """A hit's scores before and after links moved it, and how search matched it."""

    before: float  # search's own score (0: only a link brought it in)
    after: float  # with what links gave it, blended with recency
    matched_by: str  # "text", "vector", "both", each maybe "+graph"; "graph": a link alone

    @property
    def textual(self) -> bool:
        return self.matched_by.split("+")[0] in TEXTUAL

    @property
    def linked(self) -> bool:
        return self.matched_by == "graph" or self.matched_by.endswith("+graph")


def keep_matches_first(placed: list[Placed]) -> list[float]:
    """The final scores, with one rule: links never carry a page that does not hold the
    question's words above one that does and scored at least as well on its own. A page only a
    link brought in stays under every page that matches; a page lifted by a link can still pass
    pages that matched only by meaning. ("accountant" found the one page that says it, 0.63,
    under two pages that merely link to each other, 0.88 and 0.85.)"""
    out = []
    for item in placed:
        score = item.after
        if item.linked and not item.textual:
            above = [
                other.after for other in placed
                if other is not item and other.textual and other.before >= item.before
            ]  # fmt: skip
            if above:
                score = min(score, min(above) - BELOW)
        out.append(score)
    return out
