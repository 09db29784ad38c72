"""The web app in a real Chromium over a live server: a module's browser, a session that watches
what its page did (console errors, CSP violations, requests to other hosts, HTTP errors),
signing in with a token, and scripts run in the page (a drag and drop, the page's overflow)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Response,
    expect,
)

from tests.support.browser import ARTIFACTS, chromium
from tests.support.live_server import LiveServer

INDEXING_TIMEOUT_MS = 120_000

# Chromium logs every 4xx/5xx answer as a console error; those are checked as responses instead.
NETWORK_ERROR = re.compile(r"^Failed to load resource: the server responded with a status of \d+")

# Drag and drop as a person does it: a DataTransfer holding a real File, built in the page from
# the bytes, dispatched as dragenter → dragover → drop on the drop zone.
DROP_FILE = """
([selector, name, type, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const zone = document.querySelector(selector);
  for (const kind of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(
      new DragEvent(kind, { bubbles: true, cancelable: true, dataTransfer: transfer }),
    );
  }
}
"""

REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.lociCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""

HORIZONTAL_OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@dataclass
class Watch:
    """Everything a page did that a test should see: console errors, uncaught exceptions, CSP
    violations, requests to other hosts, and every HTTP error answer (method, path, status)."""

    origin: str
    errors: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    error_responses: list[tuple[str, str, int]] = field(default_factory=list)

    def attach(self, context: BrowserContext) -> None:
        context.expose_function("lociCspViolation", self._csp_violation)
        context.add_init_script(REPORT_CSP_VIOLATIONS)
        context.on("console", self._console)
        context.on("weberror", lambda error: self.errors.append(f"uncaught: {error.error}"))
        context.on("request", self._request)
        context.on("response", self._response)

    def _csp_violation(self, description: str) -> None:
        self.csp_violations.append(description)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and not NETWORK_ERROR.match(message.text):
            self.errors.append(message.text)
        if "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)

    def _request(self, request: Request) -> None:
        url = request.url
        if not (url.startswith(self.origin + "/") or url.startswith(("data:", "blob:"))):
            self.foreign_requests.append(url)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            path = response.url.removeprefix(self.origin)
            self.error_responses.append((response.request.method, path, response.status))

    def assert_clean(self, *expected_errors: tuple[str, str, int]) -> None:
        assert self.errors == [], self.errors
        assert self.csp_violations == [], self.csp_violations
        assert self.foreign_requests == [], self.foreign_requests
        assert sorted(self.error_responses) == sorted(expected_errors)


@dataclass
class Session:
    page: Page
    watch: Watch
    shots: Path

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)


def open_session(
    browser: Browser, server: LiveServer, name: str, **context_options: Any
) -> Session:
    shots = ARTIFACTS / name
    shots.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(**context_options)
    context.set_default_timeout(15_000)
    watch = Watch(server.url)
    watch.attach(context)
    return Session(context.new_page(), watch, shots)


def sign_in(page: Page, token: str) -> None:
    expect(page.locator("#signin")).to_be_visible()
    page.fill("#signin-token", token)
    page.click("#signin-form button[type=submit]")
    expect(page.locator("#workspace")).to_be_visible()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def file_row(page: Page, name: str) -> Any:
    return page.locator(".doc-row", has=page.locator(".doc-name", has_text=name))
