"""Every `loci` command starts without the web server or the MCP SDK: importing them costs
seconds of CPU on a small machine, and only `loci serve` and `loci mcp` use them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("fastapi", "starlette", "uvicorn", "mcp", "onnxruntime")


def _modules_after(code: str) -> set[str]:
    # A fresh interpreter: this test process has long since imported all of them.
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def test_importing_the_cli_loads_no_server_no_mcp_and_no_model() -> None:
    loaded = _modules_after("import loci.cli.main")
    assert "loci.cli.main" in loaded
    # `loci --version` and `--help` load no HTTP client either
    assert sorted(m for m in (*HEAVY, "httpx") if m in loaded) == []


def test_building_the_service_for_a_command_loads_no_server_and_no_mcp() -> None:
    # What `loci list` pays: settings, the store and the service, but no web stack.
    loaded = _modules_after(
        "import os, tempfile\n"
        "os.environ['LOCI_HOME'] = tempfile.mkdtemp()\n"
        "from loci.cli.context import service\n"
        "service().store.close()"
    )
    assert "loci.service" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []
