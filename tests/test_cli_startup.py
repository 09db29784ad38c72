"""Every `loci` command starts without the web server or the MCP SDK: importing them costs
seconds of CPU on a small machine, and only `loci serve` and `loci mcp` use them. `loci --version`
and `--help` import no command at all, and a command imports its own module only."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import typer
import typer.main

from loci.cli.main import COMMANDS, app

HEAVY = ("fastapi", "starlette", "uvicorn", "mcp", "onnxruntime")
COMMAND_MODULES = {f"loci.cli.{m}" for entry in COMMANDS.values() for m in entry.modules}


def _modules_after(code: str) -> set[str]:
    # A fresh interpreter: this test process has long since imported all of them.
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def _after_command(*args: str, home: Path | None = None) -> set[str]:
    """The modules a `loci ARGS` process has loaded when it ends."""
    setup = f"import os\nos.environ['LOCI_HOME'] = {str(home)!r}\n" if home else ""
    return _modules_after(
        f"{setup}import sys\nsys.argv = ['loci', *{list(args)!r}]\n"
        "from loci.cli.main import run\n"
        "try:\n    run()\nexcept SystemExit:\n    pass"
    )


def test_importing_the_cli_loads_no_server_no_mcp_and_no_model() -> None:
    loaded = _modules_after("import loci.cli.main")
    assert "loci.cli.main" in loaded
    # `loci --version` and `--help` load no HTTP client either
    assert sorted(m for m in (*HEAVY, "httpx") if m in loaded) == []


def test_version_and_help_load_no_command_and_no_settings() -> None:
    for args in (["--version"], ["--help"], []):
        loaded = _after_command(*args)
        assert sorted(loaded & COMMAND_MODULES) == [], args
        assert "loci.config" not in loaded and "loci.service" not in loaded, args


def test_a_command_loads_its_own_module_only(tmp_path: Path) -> None:
    loaded = _after_command("list", home=tmp_path / "home")
    assert sorted(loaded & COMMAND_MODULES) == ["loci.cli.documents"]
    assert sorted(m for m in (*HEAVY, "httpx") if m in loaded) == []
    # A group's own help loads that group's module, and its help is the module's.
    loaded = _after_command("brains", "--help")
    assert sorted(loaded & COMMAND_MODULES) == ["loci.cli.brains"]


def test_building_the_service_for_a_command_loads_no_server_and_no_mcp() -> None:
    # What `loci list` pays: settings, the store and the service, but no web stack and no
    # HTTP client (only the commands that fetch or call a model server import httpx).
    loaded = _modules_after(
        "import os, tempfile\n"
        "os.environ['LOCI_HOME'] = tempfile.mkdtemp()\n"
        "from loci.cli.context import service\n"
        "service().store.close()"
    )
    assert "loci.service" in loaded
    assert sorted(m for m in (*HEAVY, "httpx") if m in loaded) == []


def _registered() -> dict[str, object]:
    """Every top-level command as the command modules make them, all imported at once."""
    holder = typer.Typer()
    for module in dict.fromkeys(m for entry in COMMANDS.values() for m in entry.modules):
        importlib.import_module(f"loci.cli.{module}").register(holder)
    return dict(typer.main.get_group(holder).commands)


def test_the_list_of_commands_is_what_the_modules_make() -> None:
    """`loci --help` lists the commands from `COMMANDS` without importing them: each entry
    must name the command's module and say what its own help says first."""
    registered = _registered()
    assert set(COMMANDS) == set(registered)  # none forgotten, none left over
    for name, entry in COMMANDS.items():
        command = registered[name]
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]  # type: ignore[attr-defined]
        assert (entry.summary, entry.hidden) == (first, command.hidden), name  # type: ignore[attr-defined]


def _runs(command: object) -> tuple[str, str] | None:
    """The function a command runs, by name (`register` may make it afresh each time)."""
    callback = getattr(command, "callback", None)
    if callback is None:  # a group without options of its own
        return None
    function = inspect.unwrap(callback)
    return function.__module__, function.__qualname__


def test_the_lazy_app_resolves_each_command_to_the_one_its_module_makes() -> None:
    root = typer.main.get_command(app)
    registered = _registered()
    for name in COMMANDS:
        lazy = root.commands[name]  # type: ignore[attr-defined]
        made = registered[name]
        assert type(lazy) is type(made), name
        assert _runs(lazy) == _runs(made), name
        assert [p.opts for p in lazy.params] == [p.opts for p in made.params], name  # type: ignore[attr-defined]
    assert list(root.commands) == list(COMMANDS)  # type: ignore[attr-defined]
