from __future__ import annotations

from importlib.metadata import version

from fastapi import APIRouter

from loci.wire.health import HealthOut

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthOut)
def health() -> HealthOut:
    """Liveness, without authentication."""
    return HealthOut(status="ok", version=version("loci"))
