"""bench/figures.toml, the figures `bench/reproduce.py` measures again, stays runnable: every
figure it reruns says how to read itself from its command's output, and the checks flag only
what moved by more than its noise."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from tests.support.paths import REPO


def reproduce() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reproduce", REPO / "bench" / "reproduce.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reproduce"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_every_rerun_figure_can_be_read_from_its_commands_output() -> None:
    r = reproduce()
    figures = r.load_figures()
    assert len({f.id for f in figures}) == len(figures)
    benchmarks = (REPO / "docs" / "benchmarks.md").read_text()
    for f in figures:
        assert f.tier in ("quick", "all", "manual"), f.id
        assert f.better in ("higher", "lower"), f.id
        assert f.allowed() >= 0, f.id
        if f.tier == "manual":
            continue
        assert (f.pattern is None) != (f.json is None), f.id
        if f.pattern is not None:
            assert re.compile(f.pattern).groups >= 1, f.id
        command = r.argv(f.command, Path("/data"), Path("/tmp/x"))
        script = f.command.split()[0]
        if script.startswith("bench/"):
            assert (REPO / script).is_file(), f.id
            assert command[1] == str(REPO / script)
        # The command is the one docs/benchmarks.md gives for the figure.
        assert script in benchmarks or script == "loci", f.id


def test_every_figure_has_its_row_in_the_benchmarks_table() -> None:
    """docs/benchmarks.md (generated from figures.toml) gives each figure, with its value as
    recorded, its unit, its command and when it was measured, under its section."""
    r = reproduce()
    benchmarks = (REPO / "docs" / "benchmarks.md").read_text()
    literals = recorded_values()
    sections = re.split(r"^## ", benchmarks, flags=re.MULTILINE)
    for f in r.load_figures():
        rows = [line for line in benchmarks.splitlines() if line.endswith(f"| `{f.id}` |")]
        assert len(rows) == 1, f.id
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", rows[0])[1:-1]]
        assert cells[0] == " ".join(f.what.split()), f.id
        assert cells[1] == f"**{literals[f.id]}** {f.unit}".strip(), f.id
        assert float(literals[f.id]) == f.recorded, f.id
        assert cells[2] == f"`{f.command}`", f.id
        assert cells[3] == f.measured, f.id
        [section] = [s for s in sections if rows[0] in s]
        assert section.startswith(f"{f.section}\n"), f.id


def recorded_values() -> dict[str, str]:
    """Each figure's recorded value as figures.toml writes it (0.6900, not 0.69)."""
    values: dict[str, str] = {}
    figure = ""
    for line in (REPO / "bench" / "figures.toml").read_text().splitlines():
        if found := re.match(r'^id = "([^"]+)"', line):
            figure = found.group(1)
        elif found := re.match(r"^recorded = (\S+)", line):
            values[figure] = found.group(1)
    return values


def test_a_figure_is_read_and_judged_by_its_noise() -> None:
    r = reproduce()
    [parse] = [f for f in r.load_figures() if f.id == "parse.pdf-pages-per-s"]
    output = "  parse + chunk + chunk rows and FTS5: 1.80 s = 278 pages/s (812 chunks; CPU 1.4 s)"
    assert parse.extract(output) == 278
    assert r.verdict(parse, 278) == "ok"
    assert r.verdict(parse, parse.recorded * 1.5) == "MOVED, better"
    assert r.verdict(parse, parse.recorded * 0.5) == "MOVED, worse"
    [hybrid] = [f for f in r.load_figures() if f.id == "eval.scifact-hybrid"]
    results = (
        '{"results": [{"mode": "text", "ndcg_10": 0.70}, {"mode": "hybrid", "ndcg_10": 0.7461}]}'
    )
    assert hybrid.extract(results) == 0.7461
    assert r.verdict(hybrid, 0.7461) == "MOVED, worse"  # 0.0048 down: past its 0.002
