"""bench/figures.toml, the figures `bench/reproduce.py` measures again, stays runnable: every
figure it reruns says how to read itself from its command's output, and the checks flag only
what moved by more than its noise."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def reproduce() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reproduce", ROOT / "bench" / "reproduce.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reproduce"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_every_rerun_figure_can_be_read_from_its_commands_output() -> None:
    r = reproduce()
    figures = r.load_figures()
    assert len({f.id for f in figures}) == len(figures)
    benchmarks = (ROOT / "docs" / "benchmarks.md").read_text()
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
            assert (ROOT / script).is_file(), f.id
            assert command[1] == str(ROOT / script)
        # The command is the one docs/benchmarks.md gives for the figure.
        assert script in benchmarks or script == "loci", f.id


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
