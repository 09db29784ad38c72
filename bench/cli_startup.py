"""CPU seconds a whole `loci` process spends, per command, on a small brain.

    python bench/cli_startup.py [--runs 7] [--loci PATH]

Builds a fresh home with the example folder in it (`loci add examples/`), then runs each command
as a user would, `--runs` times, and prints the median user + sys CPU seconds of the child process
(from `os.wait4`, so a busy machine's waiting is not counted) and its median wall time. The three
commands have targets in docs/benchmarks.md: `loci --version` ≤ 0.3 s, `loci list` ≤ 0.8 s and
`loci search QUERY` ≤ 2.0 s (which includes loading the embedding model for the query).
Also prints the import time of `loci.cli.main` and whether it loaded `fastapi` or `mcp`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS: list[tuple[str, list[str]]] = [
    ("--version", ["--version"]),
    ("list", ["list"]),
    ("search", ["search", "how do I bring the boiler pressure back up"]),
    ("ask (no model)", ["ask", "how do I bring the boiler pressure back up"]),
    ("status", ["status"]),
]


def run_once(loci: str, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds user + sys, wall seconds) of one whole process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [loci, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"loci {' '.join(args)} failed (exit {status})")
    return usage.ru_utime + usage.ru_stime, wall


def imported_modules(env: dict[str, str]) -> tuple[float, set[str]]:
    code = (
        "import sys, time; t = time.perf_counter(); import loci.cli.main; "
        "print(time.perf_counter() - t); print(' '.join(sorted(sys.modules)))"
    )
    lines = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return float(lines[0]), set(lines[1].split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--loci", default=shutil.which("loci") or str(Path(sys.executable).parent / "loci")
    )
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "LOCI_HOME": home}
        env.pop("LOCI_LLM_BASE_URL", None)
        subprocess.run(
            [options.loci, "add", str(ROOT / "examples")], env=env, check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        seconds, modules = imported_modules(env)
        heavy = sorted(m for m in ("fastapi", "mcp", "uvicorn", "onnxruntime") if m in modules)
        print(f"import loci.cli.main: {seconds:.3f} s wall; loads {', '.join(heavy) or 'none'}"
              " of fastapi, mcp, uvicorn, onnxruntime")  # fmt: skip
        print(
            f"{'command':<16} {'CPU s (median)':>15} {'wall s (median)':>16}  runs={options.runs}"
        )
        for label, args in COMMANDS:
            samples = [run_once(options.loci, args, env) for _ in range(options.runs)]
            cpu = statistics.median(s[0] for s in samples)
            wall = statistics.median(s[1] for s in samples)
            print(f"{label:<16} {cpu:>15.2f} {wall:>16.2f}")


if __name__ == "__main__":
    main()
