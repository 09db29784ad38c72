"""Debian's Chromium for the browser tests, driven by Playwright.

Chromium comes from `make browser` (apt), at /usr/bin/chromium unless $LOCI_CHROMIUM says
otherwise; when it is missing the tests that need it fail with what to do, never skip.
Screenshots land in $LOCI_TEST_ARTIFACTS (default: test-artifacts/ at the repository root).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("LOCI_CHROMIUM", "/usr/bin/chromium"))
# No background traffic of Chromium's own (component updates, sync, first-run pages).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(os.environ.get("LOCI_TEST_ARTIFACTS") or ROOT / "test-artifacts")


def require_chromium() -> Path:
    """Chromium's path, or the test fails saying how to install it."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: run `make browser` (apt's chromium)")
    return CHROMIUM


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium; each test opens its own contexts in it."""
    executable = require_chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_with_extension(extension: Path, profile: Path) -> Iterator[BrowserContext]:
    """A headless Chromium with the unpacked `extension` loaded, in a persistent context on
    the `profile` folder (Chromium loads extensions only into a persistent profile)."""
    executable = require_chromium()
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(executable),
            headless=True,
            args=[
                *CHROMIUM_ARGS,
                f"--disable-extensions-except={extension}",
                f"--load-extension={extension}",
            ],
        )
        try:
            yield context
        finally:
            context.close()
