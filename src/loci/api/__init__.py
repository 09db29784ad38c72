"""The HTTP API (`/api/v1`) and the web app, served by one FastAPI application.

`create_app` is imported on first use: importing a request schema or `loci.api.gpt_action` must
not pay for FastAPI (`loci serve` alone needs it). The server `loci serve` runs, the API with
MCP beside it, is assembled above both in `loci.server`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loci.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from loci.api.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
