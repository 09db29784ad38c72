"""Measure the figures of docs/benchmarks.md again, with their own commands, and flag what moved.

    PYTHONPATH=src .venv/bin/python bench/reproduce.py            # the quick figures (minutes)
    PYTHONPATH=src .venv/bin/python bench/reproduce.py --all      # and the long ones (an hour+)
    PYTHONPATH=src .venv/bin/python bench/reproduce.py --only ingest.,parse.
    PYTHONPATH=src .venv/bin/python bench/reproduce.py --list     # what it checks, runs nothing
    make bench-check                                              # the quick figures

Which figures, their commands, the values docs/benchmarks.md records and how far each may move
(its noise) are in bench/figures.toml. Each command runs once (figures sharing a command share
the run), with this checkout's code; its output is kept in --out (a scratch folder unless given)
for reading afterwards. Then one table: recorded, now, the change, the noise, and a flag for
every figure that moved by more than its noise — better or worse. Figures of the "manual" tier
(hours of work, or a PostgreSQL server or a clean clone the script cannot make) are listed as
not rerun. The CPU model and the load average come first: a figure recorded on another CPU or
under another load may move for that reason alone, which is why the data file says where each
was taken.

Exit status: 0 when nothing moved, 1 when something did, 2 when a command failed or its output
no longer holds the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIGURES = Path(__file__).resolve().parent / "figures.toml"
TIERS = {"quick": ("quick",), "all": ("quick", "all")}


@dataclass(frozen=True)
class Figure:
    id: str
    section: str
    what: str
    command: str
    recorded: float
    unit: str
    better: str
    noise: float | str
    tier: str
    measured: str
    pattern: str | None = None
    json: str | None = None

    def allowed(self) -> float:
        """How far the figure may move and still be the same figure."""
        if isinstance(self.noise, str) and self.noise.endswith("%"):
            return abs(self.recorded) * float(self.noise[:-1]) / 100
        return float(self.noise)

    def extract(self, output: str) -> float:
        if self.json is not None:
            return float(json_path(json.loads(output), self.json))
        assert self.pattern is not None, f"{self.id} has neither pattern nor json"
        found = re.search(self.pattern, output, re.MULTILINE)
        if found is None:
            raise LookupError(f"{self.id}: no match for {self.pattern!r} in the output")
        return float(found.group(1))


def load_figures(path: Path = FIGURES) -> list[Figure]:
    with path.open("rb") as f:
        data = tomllib.load(f)
    figures = [Figure(**entry) for entry in data["figure"]]
    ids = [f.id for f in figures]
    duplicated = {i for i in ids if ids.count(i) > 1}
    if duplicated:
        raise SystemExit(f"{path.name}: ids used twice: {', '.join(sorted(duplicated))}")
    return figures


def json_path(value: Any, path: str) -> Any:
    """`results[mode=hybrid].ndcg_10` of a parsed JSON document."""
    for part in path.split("."):
        selector = re.fullmatch(r"(\w+)\[(\w+)=([^\]]+)\]", part)
        if selector is None:
            value = value[part]
            continue
        key, field, wanted = selector.groups()
        value = next(item for item in value[key] if str(item.get(field)) == wanted)
    return value


def argv(command: str, datasets: Path, scratch: Path) -> list[str]:
    words = shlex.split(command.format(datasets=datasets, tmp=scratch))
    if words[0].startswith("bench/") and words[0].endswith(".py"):
        return [sys.executable, str(REPO / words[0]), *words[1:]]
    if words[0] == "loci":
        return [sys.executable, "-m", "loci", *words[1:]]
    raise ValueError(f"cannot run {command!r}: a bench script or a loci command is expected")


def run(command: str, datasets: Path, out: Path, index: int) -> tuple[str, float]:
    """The command's standard output (its whole log is kept in `out`), and its wall time."""
    scratch = Path(tempfile.mkdtemp(prefix="loci-reproduce-"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
        "LOCI_HOME": str(scratch / "home"),  # a `loci` command gets a data directory of its own
    }
    for key in ("LOCI_DATABASE_URL", "LOCI_LLM_BASE_URL", "LOCI_RERANK_BASE_URL"):
        env.pop(key, None)
    started = time.perf_counter()
    done = subprocess.run(
        argv(command, datasets, scratch), cwd=REPO, env=env, capture_output=True, text=True
    )
    took = time.perf_counter() - started
    log = out / f"{index:02d}-{re.sub(r'[^A-Za-z0-9]+', '-', command)[:60]}.log"
    log.write_text(
        f"$ {command}\n# exit {done.returncode}, {took:.0f} s\n{done.stdout}\n{done.stderr}"
    )
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}; see {log}")
    return done.stdout, took


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def verdict(figure: Figure, now: float) -> str:
    change = now - figure.recorded
    if abs(change) <= figure.allowed():
        return "ok"
    up = change > 0
    better = up if figure.better == "higher" else not up
    return "MOVED, better" if better else "MOVED, worse"


def fmt(value: float) -> str:
    if value == 0 or abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.4f}".rstrip("0").rstrip(".")


def table(rows: list[tuple[Figure, float | None, str]]) -> str:
    head = ("figure", "recorded", "now", "change", "noise", "")
    lines = [head]
    for figure, now, state in rows:
        noise = figure.noise if isinstance(figure.noise, str) else fmt(figure.noise)
        unit = f" {figure.unit}" if figure.unit else ""
        if now is None:
            lines.append((figure.id, fmt(figure.recorded) + unit, "", "", str(noise), state))
            continue
        change = now - figure.recorded
        share = f" ({100 * change / figure.recorded:+.0f}%)" if figure.recorded else ""
        recorded = fmt(figure.recorded) + unit
        lines.append((figure.id, recorded, fmt(now), f"{change:+.4g}{share}", str(noise), state))
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in lines
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--all", action="store_true", help="the long figures too")
    parser.add_argument("--only", help="comma-separated id prefixes (any tier but manual)")
    parser.add_argument("--list", action="store_true", help="list the figures; run nothing")
    parser.add_argument(
        "--datasets", type=Path, default=REPO.parent / "shared" / "datasets",
        help="the folder holding scifact/, dbpedia-subset/, msmarco-subset/",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, help="keep each command's output here")
    args = parser.parse_args()

    figures = load_figures()
    if args.only:
        prefixes = tuple(args.only.split(","))
        chosen = [f for f in figures if f.id.startswith(prefixes) and f.tier != "manual"]
    else:
        chosen = [f for f in figures if f.tier in TIERS["all" if args.all else "quick"]]
    if args.list:
        for f in figures:
            mark = "*" if f in chosen else " "
            print(f"{mark} {f.tier:<6} {f.id:<34} {f.command}")
        print("(* would run now)")
        return

    load = os.getloadavg()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()},"
        f" {os.cpu_count()} cores; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    out = args.out or Path(tempfile.mkdtemp(prefix="loci-reproduce-out-"))
    out.mkdir(parents=True, exist_ok=True)
    outputs: dict[str, str | Exception] = {}
    commands = list(dict.fromkeys(f.command for f in chosen))
    for n, command in enumerate(commands, start=1):
        print(f"[{n}/{len(commands)}] {command}", flush=True)
        try:
            outputs[command], took = run(command, args.datasets, out, n)
            print(f"        {took:.0f} s", flush=True)
        except (RuntimeError, ValueError, OSError) as error:
            outputs[command] = error
            print(f"        failed: {error}", flush=True)

    rows: list[tuple[Figure, float | None, str]] = []
    failed = moved = 0
    for figure in figures:
        if figure not in chosen:
            why = "not rerun (manual)" if figure.tier == "manual" else "not run (--all)"
            if args.only:
                continue
            rows.append((figure, None, why))
            continue
        output = outputs[figure.command]
        if isinstance(output, Exception):
            rows.append((figure, None, "FAILED"))
            failed += 1
            continue
        try:
            now = figure.extract(output)
        except (LookupError, ValueError, KeyError, StopIteration, json.JSONDecodeError) as error:
            rows.append((figure, None, f"FAILED: {error}"))
            failed += 1
            continue
        state = verdict(figure, now)
        moved += state != "ok"
        rows.append((figure, now, state))
    print()
    print(table(rows))
    load = os.getloadavg()
    print(f"\nload at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; outputs in {out}")
    print(f"{moved} moved by more than their noise, {failed} failed")
    sys.exit(2 if failed else 1 if moved else 0)


if __name__ == "__main__":
    main()
