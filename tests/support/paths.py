"""Where things are in the repository, for tests wherever they sit below tests/."""

from __future__ import annotations

from pathlib import Path

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
EXAMPLES = REPO / "examples"
BENCH = REPO / "bench"
