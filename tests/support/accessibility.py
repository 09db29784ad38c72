"""axe-core run inside a page of the web app: what it finds at a given impact or worse.

axe-core comes from `make axe` (npm, pinned by tests/axe/package-lock.json); when it is missing
the tests that need it fail with what to do, never skip. It is evaluated in the page through the
DevTools protocol, as a test harness does, so the app's Content-Security-Policy — which allows no
inline script — stays on for everything the app itself does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

AXE = Path(__file__).resolve().parents[1] / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
# The rules of WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


@cache
def _source() -> str:
    if not AXE.is_file():
        pytest.fail(f"axe-core is not installed at {AXE}: run `make axe` (npm ci in tests/axe)")
    return AXE.read_text(encoding="utf-8")


def violations(page: Page, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """Each violation of `impacts` on the page as it is now, one line per element: rule, impact,
    what is wrong and where (axe's own words)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(_source() + "\n;0")
    found: list[dict[str, Any]] = page.evaluate(
        """async (tags) => {
          const result = await axe.run(document, { runOnly: { type: "tag", values: tags } });
          return result.violations;
        }""",
        TAGS,
    )
    lines = []
    for violation in found:
        if violation["impact"] not in impacts:
            continue
        for node in violation["nodes"]:
            lines.append(
                f"{violation['id']} ({violation['impact']}): {violation['help']} — "
                f"{' '.join(node['target'])}: {node['failureSummary'].splitlines()[-1].strip()}"
            )
    return lines
