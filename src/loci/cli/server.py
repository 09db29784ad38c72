"""`loci serve` (the API, the web app and a worker in one process) and `loci openapi`."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from loci.cli.context import service, settings_or_error
from loci.cli.errors import exits_cleanly
from loci.cli.output import err
from loci.errors import InvalidInput


def register(app: typer.Typer) -> None:
    app.command("serve")(exits_cleanly(serve))
    app.command("openapi")(exits_cleanly(openapi))


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to bind.")] = 8765,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Do not index in this process.")
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="Server processes (each also indexes unless --no-worker); one per core.",
        ),
    ] = 1,
    ssl_certfile: Annotated[
        Path | None,
        typer.Option(
            "--ssl-certfile",
            exists=True,
            dir_okay=False,
            help="Serve https with this certificate (PEM; with --ssl-keyfile).",
        ),
    ] = None,
    ssl_keyfile: Annotated[
        Path | None,
        typer.Option(
            "--ssl-keyfile", exists=True, dir_okay=False, help="The certificate's key (PEM)."
        ),
    ] = None,
) -> None:
    """Serve the HTTP API (/api/v1), the web app (/) and an ingestion worker."""
    # The web server, the API and the MCP SDK load here, not at the top: every other
    # command would pay for them at start-up (seconds of CPU on a small machine).
    import uvicorn

    from loci.app import (
        SERVE_WORKER_ENV,
        bootstrap_owner,
        build_accounts,
        build_api,
        owner_token_path,
    )

    settings = settings_or_error()
    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise InvalidInput("https needs both --ssl-certfile and --ssl-keyfile")
    loci = service()
    issued = bootstrap_owner(settings, build_accounts(loci))
    if issued is not None:
        err.print(
            "[bold]First start:[/bold] created the owner account. Sign in with this token"
            " (shown once; also saved, readable only by you, in"
            f" {owner_token_path(settings)}):"
        )
        sys.stdout.write(issued.secret + "\n")
        sys.stdout.flush()
    scheme = "https" if ssl_certfile else "http"
    err.print(f"Loci is serving on {scheme}://{host}:{port}/")
    if workers == 1:
        uvicorn.run(
            build_api(settings, loci, run_worker=not no_worker),
            host=host,
            port=port,
            log_level="info",
            proxy_headers=False,  # the app reads them, from LOCI_TRUSTED_PROXIES only
            ssl_certfile=ssl_certfile,
            ssl_keyfile=ssl_keyfile,
        )
        return
    # Several processes share the data directory: SQLite's WAL and the job queue's leases
    # make that safe, and each process has its own interpreter lock for searches.
    os.environ[SERVE_WORKER_ENV] = "0" if no_worker else "1"
    os.environ.setdefault("LOCI_HOME", str(settings.home))
    uvicorn.run(
        "loci.app:api_from_environment",
        factory=True,
        workers=workers,
        host=host,
        port=port,
        log_level="info",
        proxy_headers=False,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
    )


def openapi(
    gpt: Annotated[
        bool,
        typer.Option("--gpt", help="Only what a Custom GPT's Action needs (needs --server-url)."),
    ] = False,
    server_url: Annotated[
        str | None,
        typer.Option("--server-url", help="The public address of this server, e.g. https://…"),
    ] = None,
) -> None:
    """Print the API's OpenAPI 3.1 document (the committed openapi.json is this output)."""
    # The document depends on the settings, never on what a data directory holds: build the
    # app over a scratch one, so printing it touches no brain, database or key of yours.
    from loci.api.gpt_action import gpt_action
    from loci.app import build_api, build_service

    with tempfile.TemporaryDirectory(prefix="loci-openapi-") as scratch:
        settings = settings_or_error().model_copy(
            update={"home": Path(scratch), "database_url": None, "blobs": "files"}
        )
        loci = build_service(settings)
        try:
            spec = build_api(settings, loci, run_worker=False).openapi()
        finally:
            loci.store.close()
    if gpt:
        if not server_url:
            raise InvalidInput("--gpt needs --server-url: the address the GPT reaches Loci at")
        spec = gpt_action(spec, server_url)
    elif server_url:
        spec = {**spec, "servers": [{"url": server_url.rstrip("/")}]}
    sys.stdout.write(json.dumps(spec, indent=2, ensure_ascii=False) + "\n")
