"""The HTTP API (`/api/v1`) and the web app, served by one FastAPI application."""

from loci.api.app import create_app

__all__ = ["create_app"]
