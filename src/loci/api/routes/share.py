"""`POST /brains/{brain}/share`: what a phone's "Share → Loci" sends, kept in one call.

The installed web app's share target opens `/share?title=…&text=…&url=…` (a GET that only loads
the app); the app then posts here like any other write — the session cookie (SameSite=Strict)
and the `X-CSRF-Token` header, or a bearer token — so a page on another site cannot share into
a brain.
"""

from __future__ import annotations

from fastapi import APIRouter

from loci.api.deps import LociDep, PrincipalDep, WritableBrain
from loci.api.schemas.common import errors
from loci.api.schemas.share import ShareIn
from loci.service.sharing import share
from loci.wire.share import SharedOut

router = APIRouter(prefix="/brains/{brain}", tags=["files"])


@router.post(
    "/share", status_code=201, response_model=SharedOut, responses=errors(400, 403, 404, 413)
)
def share_to_brain(
    body: ShareIn, brain: WritableBrain, principal: PrincipalDep, loci: LociDep
) -> SharedOut:
    """Keep a shared link or text: a link (the `url`, or the one address in a short `text`) is
    fetched and kept as a web page; other text — or a link whose page cannot be fetched, with
    `fetch_error` saying why — is kept as a capture (an inbox draft, curated later)."""
    shared = share(
        loci, brain, title=body.title, text=body.text, url=body.url, actor=principal.user.name
    )
    return SharedOut.of(shared, brain)
