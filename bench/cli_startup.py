"""CPU seconds a whole `loci` process spends, per command, on a small brain.

    python bench/cli_startup.py [--runs 7] [--loci PATH] [--compare OTHER_LOCI]

Builds a fresh home with the example folder in it (`loci add examples/`), then runs each command
as a user would, `--runs` times, and prints the median user + sys CPU seconds of the child process
(from `os.wait4`, so time spent waiting on a busy machine is not counted) and its median wall
time. With `--compare`, another `loci` executable (an older checkout) runs the same commands on
its own copy of the brain, alternating with this one, so both see the same machine load and the
ratio is fair. Targets (docs/benchmarks-journal.md): `loci --version` and `--help` ≤ 0.3 s,
`loci list` and `status` ≤ 0.8 s and `loci search QUERY` ≤ 2.0 s, which includes loading the
embedding model for the query. `loci add` is timed on a file the brain already holds (it checks
and adds nothing), so every run sees the same brain.

Also prints what `import loci.cli.main` loads, and, for `loci ask --json` with no model, the
answer's own time (its `timings.total`) beside the process's wall time: the difference is
start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "how do I bring the boiler pressure back up"
COMMANDS: list[tuple[str, list[str]]] = [
    ("--version", ["--version"]),
    ("--help", ["--help"]),
    ("list", ["list"]),
    ("status", ["status"]),
    ("search", ["search", QUESTION]),
    ("add (held file)", ["add", str(ROOT / "examples" / "lease-summary.txt")]),
    ("ask (no model)", ["ask", QUESTION]),
]
HEAVY = ("fastapi", "mcp", "uvicorn", "onnxruntime", "httpx")


def run_once(loci: str, args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU seconds user + sys, wall seconds, stdout) of one whole process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [loci, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{loci} {' '.join(args)} failed (exit {status})")
    return usage.ru_utime + usage.ru_stime, wall, out


def imported_modules(env: dict[str, str]) -> tuple[float, set[str]]:
    code = (
        "import sys, time; t = time.perf_counter(); import loci.cli.main; "
        "print(time.perf_counter() - t); print(' '.join(sorted(sys.modules)))"
    )
    here = {**env, "PYTHONPATH": str(ROOT / "src")}  # this checkout, not the venv's own loci
    lines = subprocess.run(
        [sys.executable, "-c", code], env=here, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return float(lines[0]), set(lines[1].split())


def fresh_home(loci: str, base: Path, name: str) -> dict[str, str]:
    home = base / name
    env = {**os.environ, "LOCI_HOME": str(home)}
    for key in ("LOCI_LLM_BASE_URL", "LOCI_LLM_MODEL", "LOCI_RERANK_BASE_URL"):
        env.pop(key, None)
    subprocess.run(
        [loci, "add", str(ROOT / "examples")], env=env, check=True, stdout=subprocess.DEVNULL
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--loci", default=shutil.which("loci") or str(Path(sys.executable).parent / "loci")
    )
    parser.add_argument("--compare", help="another loci executable, measured alternately")
    options = parser.parse_args()
    targets = [("this", options.loci)] + ([("other", options.compare)] if options.compare else [])

    with tempfile.TemporaryDirectory() as base:
        envs = {label: fresh_home(loci, Path(base), label) for label, loci in targets}
        seconds, modules = imported_modules(envs["this"])
        heavy = sorted(m for m in HEAVY if m in modules)
        print(f"import loci.cli.main: {seconds:.3f} s wall; loads {', '.join(heavy) or 'none'}"
              f" of {', '.join(HEAVY)}")  # fmt: skip
        header = f"{'command':<16} {'CPU s':>7} {'wall s':>7}"
        if options.compare:
            header += f" {'other CPU s':>12} {'other wall':>11} {'CPU ratio':>10}"
        print(f"{header}   (medians of {options.runs} runs)")
        ask_totals: list[float] = []
        for label, args in COMMANDS:
            samples: dict[str, list[tuple[float, float, str]]] = {t: [] for t, _ in targets}
            for _ in range(options.runs):
                for target, loci in targets:  # alternating: both see the same load
                    samples[target].append(run_once(loci, args, envs[target]))
            cpu = statistics.median(s[0] for s in samples["this"])
            wall = statistics.median(s[1] for s in samples["this"])
            line = f"{label:<16} {cpu:>7.2f} {wall:>7.2f}"
            if options.compare:
                other_cpu = statistics.median(s[0] for s in samples["other"])
                other_wall = statistics.median(s[1] for s in samples["other"])
                line += f" {other_cpu:>12.2f} {other_wall:>11.2f} {cpu / other_cpu:>10.2f}"
            print(line)
        for _ in range(options.runs):
            _, wall, out = run_once(options.loci, ["ask", QUESTION, "--json"], envs["this"])
            ask_totals.append(wall - json.loads(out)["timings"]["total"] / 1000)
        print(f"ask --json: process wall minus the answer's own time (start-up and exit), "
              f"median {statistics.median(ask_totals):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
