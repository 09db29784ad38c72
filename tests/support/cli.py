"""The `loci` command run against a data directory: in this process (Typer's runner) or as the
real installed command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run a `loci` command in this process (Typer's runner) against the data directory `home`:
    the same app, arguments, environment, stdin, stdout, stderr and exit code as the real command,
    without paying a new interpreter and a model load per call. Commands that serve (`serve`,
    `mcp` over stdio) and the end-to-end tests of the installed command use `run_cli_process`."""
    from typer.testing import CliRunner

    from loci.cli.context import service
    from loci.cli.main import app

    full_env = {"LOCI_HOME": str(home), **(env or {})}
    service.cache_clear()
    try:
        result = CliRunner().invoke(app, list(args), input=stdin, env=full_env)
    finally:
        _close_cli_service()
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What the real process would print before exiting 1: the traceback.
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(
        ["loci", *args], result.exit_code, stdout=result.stdout, stderr=stderr
    )


def _close_cli_service() -> None:
    from loci.cli.context import service

    if service.cache_info().currsize:
        service().store.close()
    service.cache_clear()


def run_cli_process(
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run the real `loci` command in a subprocess against the data directory `home`."""
    full_env = {**os.environ, "LOCI_HOME": str(home), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "loci", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=stdin,
        timeout=timeout,
    )
