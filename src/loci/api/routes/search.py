"""Hybrid search in one brain, or across every brain the caller can read."""

from __future__ import annotations

from fastapi import APIRouter

from loci.api.deps import AccountsDep, LociDep, PrincipalDep, ReadableBrain
from loci.api.schemas.common import errors
from loci.api.schemas.search import SearchIn
from loci.search.engine import SearchRequest
from loci.search.weak import weak
from loci.wire.hit import HitOut, SearchOut

router = APIRouter(tags=["search"])


def _request(body: SearchIn) -> SearchRequest:
    return SearchRequest(
        query=body.query,
        mode=body.mode,
        limit=body.limit,
        filters=body.filters.to_filters(),
        min_similarity=body.min_similarity,
        include_retired=body.include_archived,
    )


@router.post("/brains/{brain}/search", response_model=SearchOut, responses=errors(400, 404))
def search_brain(body: SearchIn, brain: ReadableBrain, loci: LociDep) -> SearchOut:
    """Passages that answer the query, best first, each with its citation: file, page, lines,
    heading path, and a snippet with where the matched terms are in it (`highlights`)."""
    hits = loci.searching.search(brain, _request(body))
    return SearchOut(
        query=body.query,
        mode=body.mode,
        hits=[HitOut.found(h, brain) for h in hits],
        weak=weak(hits),
    )


@router.post("/search", response_model=SearchOut, responses=errors(400))
def search_all(
    body: SearchIn, principal: PrincipalDep, accounts: AccountsDep, loci: LociDep
) -> SearchOut:
    """The same search over every brain the caller can read, merged by score."""
    request = _request(body)
    found = [
        (hit, brain)
        for brain, _ in accounts.readable_brains(principal)
        for hit in loci.searching.search(brain, request)
    ]
    found.sort(key=lambda pair: -pair[0].score)
    best = found[: body.limit]
    return SearchOut(
        query=body.query,
        mode=body.mode,
        hits=[HitOut.found(hit, brain) for hit, brain in best],
        weak=weak(hit for hit, _ in best),
    )
