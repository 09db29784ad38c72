"""Rendering a page that needs JavaScript in a headless Chromium, under the fetcher's rules.

Single-page apps send an empty shell and build the article with scripts; only a browser sees it.
A browser is also a far bigger attack surface than `fetch`: the page decides what it requests.
So the browser is kept on the same leash as the plain fetcher:

- Chromium starts with `--host-resolver-rules=MAP * ~NOTFOUND`: it can resolve no name and
  reach no address (IP literals included) by itself, so nothing leaves it unless Loci makes it.
- Every request the page makes (document, scripts, XHR/fetch, images, frames) is intercepted by
  Playwright routing and made by Loci's vetted client (`vetted_transport.vetted_client`):
  http(s) only, every address checked at connect time. Redirects are followed here one hop at a
  time, each hop checked (a redirect Chromium followed itself would not be routed again). A refused
  request is aborted and listed in `RenderedPage.blocked`; a refused main document refuses the
  whole page.
- Service workers are blocked and WebSockets closed: neither goes through routing. Nor do
  WebRTC, WebTransport or raw sockets: their constructors are deleted before the page's scripts
  run (`browser_channels`), and Chromium is started with WebRTC's UDP and QUIC off (`chromium`).
- One deadline covers the render. It is enforced by killing Chromium's process group, because a
  page whose script loops for ever also blocks every Playwright call that waits on it.
- Each response is capped at the policy's `max_bytes`, all of them together at
  `max_total_bytes`, their number at `max_requests`; the rendered HTML at `max_bytes`.

Chromium itself (`loci.ingest.chromium`) is a fresh headless process per page, driven over the
DevTools protocol.

Playwright is an optional dependency (`pip install 'loci[browser]'`) and Chromium comes from the
system (`apt install chromium`); `unavailable_reason` says what is missing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from loci.errors import BlockedAddress, ChallengePage, FetchError, LociError
from loci.ingest.addresses import checked_url
from loci.ingest.browser_channels import CLOSE_CHANNELS_SCRIPT
from loci.ingest.challenge import detect_challenge
from loci.ingest.chromium import Chromium
from loci.ingest.fetch import FetchedPage, _challenge_message, _read_body, _redirect_target
from loci.ingest.fetch_policy import BrowserSettings, FetchPolicy
from loci.ingest.vetted_transport import vetted_client

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Route, WebSocketRoute

__all__ = ["BrowserSettings", "RenderedPage", "find_browser", "render_page", "unavailable_reason"]

log = logging.getLogger(__name__)

_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Headers Loci sets itself (it decodes only gzip/deflate, under its size cap) or that describe
# the hop rather than the content.
_DROPPED_REQUEST_HEADERS = frozenset(
    {"host", "accept-encoding", "connection", "content-length", "transfer-encoding"}
)
_DROPPED_RESPONSE_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)
_KILL_GRACE_S = 5.0
_RENDER_SLOTS = threading.BoundedSemaphore(2)  # renders at once in this process


@dataclass(frozen=True)
class RenderedPage:
    page: FetchedPage  # the rendered DOM as HTML (UTF-8); `url` after redirects
    blocked: tuple[str, ...] = ()  # "url: reason" for every request that was refused


def find_browser(settings: BrowserSettings) -> str | None:
    if settings.executable:
        return settings.executable if os.access(settings.executable, os.X_OK) else None
    for name in _BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def unavailable_reason(settings: BrowserSettings) -> str | None:
    """Why pages cannot be rendered here, phrased as what to do; None when they can."""
    if not settings.enabled:
        return "rendering pages in a browser is turned off (LOCI_BROWSER_RENDER)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "rendering it needs Playwright: pip install 'loci[browser]'"
    if find_browser(settings) is None:
        where = settings.executable or "on PATH"
        return f"rendering it needs Chromium, not found {where} (apt install chromium)"
    return None


def render_page(url: str, policy: FetchPolicy, settings: BrowserSettings) -> RenderedPage:
    """Load `url` in headless Chromium, let its scripts run, and return the rendered HTML.

    Raises BlockedAddress if the page itself (or a redirect of it) is at a forbidden address,
    ChallengePage if what rendered is a bot check or still an empty shell, FetchError for a
    failed load, an error status, a page over the size cap or a render over the time limit.
    """
    problem = unavailable_reason(settings)
    if problem is not None:
        raise FetchError(f"cannot render {url}: {problem}")
    checked_url(url)
    executable = find_browser(settings)
    assert executable is not None
    # Each Chromium takes a few hundred MB; a burst of renders waits rather than piles up.
    if not _RENDER_SLOTS.acquire(timeout=settings.timeout_s):
        raise FetchError(
            f"cannot render {url}: the browser stayed busy for {settings.timeout_s:g} s"
        )
    try:
        return _render_in_chromium(url, policy, settings, executable)
    finally:
        _RENDER_SLOTS.release()


def _render_in_chromium(
    url: str, policy: FetchPolicy, settings: BrowserSettings, executable: str
) -> RenderedPage:
    with Chromium(executable) as chromium:
        deadline = time.monotonic() + settings.timeout_s
        render = _Render(url, policy, settings, deadline, chromium.ws_url)
        # Playwright's sync API runs in the thread that calls it and refuses a thread with a
        # running asyncio loop (an async surface), so the render gets a thread of its own; the
        # caller waits on it with the deadline and kills Chromium if it passes.
        thread = threading.Thread(target=render.run, name="loci-render", daemon=True)
        thread.start()
        thread.join(settings.timeout_s + 1.0)
        if thread.is_alive():
            chromium.kill()
            thread.join(_KILL_GRACE_S)
            raise FetchError(_timed_out(url, settings))
    if render.error is not None:
        raise render.error
    assert render.result is not None
    return render.result


def _timed_out(url: str, settings: BrowserSettings) -> str:
    return f"rendering {url} in the browser took longer than {settings.timeout_s:g} s"


@dataclass
class _Answer:
    url: str  # after redirects
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class _Render:
    url: str
    policy: FetchPolicy
    settings: BrowserSettings
    deadline: float
    ws_url: str
    result: RenderedPage | None = None
    error: LociError | None = None
    blocked: list[str] = field(default_factory=list)
    requests: int = 0
    total_bytes: int = 0
    document: _Answer | None = None  # the main frame's last document
    navigation_error: LociError | None = None
    _client: httpx.Client | None = None

    def run(self) -> None:
        try:
            self.result = self._render()
        except LociError as error:
            self.error = error
        except Exception as error:  # Playwright's errors, a killed browser: one clear reason
            if time.monotonic() >= self.deadline:
                self.error = FetchError(_timed_out(self.url, self.settings))
            else:
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                self.error = FetchError(f"could not render {self.url}: {first or error!r}")
        finally:
            if self._client is not None:
                self._client.close()

    def _left_ms(self) -> float:
        return max(1.0, (self.deadline - time.monotonic()) * 1000)

    def _render(self) -> RenderedPage:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import sync_playwright

        self._client = vetted_client(
            self.policy,
            deadline=self.deadline,
            timeout=httpx.Timeout(
                connect=self.policy.connect_timeout,
                read=self.policy.read_timeout,
                write=self.policy.read_timeout,
                pool=self.policy.connect_timeout,
            ),
            trust_env=False,  # no proxy from the environment: it would connect unchecked
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.connect_over_cdp(self.ws_url, timeout=self._left_ms())
            context = browser.new_context(service_workers="block", accept_downloads=False)
            context.add_init_script(script=CLOSE_CHANNELS_SCRIPT)
            self._guard(context)
            page = context.new_page()
            try:
                page.goto(self.url, wait_until="load", timeout=self._left_ms())
            except PlaywrightTimeout:
                raise FetchError(_timed_out(self.url, self.settings)) from None
            except PlaywrightError:
                if self.navigation_error is not None:
                    raise self.navigation_error from None
                raise
            if self.navigation_error is not None:  # a script navigated somewhere refused
                raise self.navigation_error
            settle = min(self.settings.settle_s * 1000, self._left_ms())
            with contextlib.suppress(PlaywrightTimeout):  # a page that polls for ever is
                page.wait_for_load_state("networkidle", timeout=settle)  # read as it stands
            if self.navigation_error is not None:
                raise self.navigation_error
            html = page.content()
            final_url = page.url
            browser.close()
        return self._finish(html, final_url)

    def _guard(self, context: BrowserContext) -> None:
        context.route("**/*", self._route)

        def refuse_socket(socket: WebSocketRoute) -> None:
            self.blocked.append(f"{socket.url}: WebSockets are not opened while rendering")
            socket.close()

        context.route_web_socket("**/*", refuse_socket)

    def _finish(self, html: str, final_url: str) -> RenderedPage:
        document = self.document
        status = document.status if document is not None else 200
        if document is not None and document.url:
            final_url = document.url
        body = html.encode("utf-8")
        if len(body) > self.policy.max_bytes:
            raise FetchError(f"the rendered page is larger than {self.policy.max_bytes} bytes")
        reason = detect_challenge(status, document.headers if document else {}, html)
        if reason is not None:
            shown = httpx.URL(final_url)
            raise ChallengePage(_challenge_message(shown, reason) + " even after rendering")
        if status >= 400:
            raise FetchError(f"{final_url} answered HTTP {status}")
        return RenderedPage(
            FetchedPage(
                url=final_url,
                status=status,
                content_type="text/html",
                charset="utf-8",
                body=body,
                headers={"content-type": "text/html; charset=utf-8"},
            ),
            tuple(self.blocked),
        )

    # --- every request the page makes ------------------------------------------------------

    def _route(self, route: Route) -> None:
        request = route.request
        main = request.is_navigation_request() and _is_main_frame(request)
        self.requests += 1
        if self.requests > self.settings.max_requests:
            self._refuse(route, request.url, f"over {self.settings.max_requests} requests", main)
            return
        try:
            answer = self._fetch(
                request.method, request.url, request.headers, request.post_data_buffer
            )
        except BlockedAddress as error:
            self._refuse(route, request.url, error.message, main, error)
            return
        except LociError as error:
            if time.monotonic() >= self.deadline and self.navigation_error is None:
                # Cut off by the render's deadline: the page is unfinished, not empty.
                self.navigation_error = FetchError(_timed_out(self.url, self.settings))
            self._refuse(route, request.url, error.message, main, None, blocked=False)
            return
        if main:
            self.document = answer
        route.fulfill(status=answer.status, headers=answer.headers, body=answer.body)

    def _refuse(
        self,
        route: Route,
        url: str,
        reason: str,
        main: bool,
        error: LociError | None = None,
        *,
        blocked: bool = True,
    ) -> None:
        if blocked:
            self.blocked.append(f"{url}: {reason}")
            log.info("blocked a request while rendering: %s (%s)", url, reason)
        if main and self.navigation_error is None:
            self.navigation_error = error or FetchError(f"could not load {url}: {reason}")
        route.abort("blockedbyclient" if blocked else "failed")

    def _fetch(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> _Answer:
        """One request of the page, redirects followed here, each hop address-checked."""
        assert self._client is not None
        current = checked_url(url)
        sent = {k: v for k, v in headers.items() if k.lower() not in _DROPPED_REQUEST_HEADERS}
        sent["accept-encoding"] = "gzip, deflate"
        for _hop in range(self.policy.max_redirects + 1):
            if time.monotonic() >= self.deadline:
                raise FetchError("the render's time limit passed")
            try:
                with self._client.stream(method, current, headers=sent, content=body) as response:
                    if response.status_code in _REDIRECTS:
                        current = _redirect_target(current, response)
                        if response.status_code == 303 or (
                            response.status_code in (301, 302) and method == "POST"
                        ):
                            method, body = "GET", None  # as browsers do
                        continue
                    room = min(
                        self.policy.max_bytes, self.settings.max_total_bytes - self.total_bytes
                    )
                    data = _read_body(response, max(room, 0), truncate=False)
                    self.total_bytes += len(data)
                    return _Answer(str(current), response.status_code, _kept(response), data)
            except BlockedAddress as exc:
                if str(current) != url:  # say where the redirect went, not only the host
                    raise BlockedAddress(f"redirected to {current}: {exc.message}") from exc
                raise
            except httpx.TimeoutException as exc:
                raise FetchError(f"timed out fetching {current}") from exc
            except (httpx.TransportError, httpx.InvalidURL) as exc:
                raise FetchError(f"could not fetch {current}: {exc}") from exc
        raise FetchError(f"too many redirects from {url}")


def _is_main_frame(request: Any) -> bool:
    try:
        return request.frame.parent_frame is None
    except Exception:  # a request without a frame (a worker's): not the page itself
        return False


def _kept(response: httpx.Response) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        key = name.lower()
        if key in _DROPPED_RESPONSE_HEADERS:
            continue
        # Playwright takes one string per header; several Set-Cookie lines go newline-joined.
        joiner = "\n" if key == "set-cookie" else ", "
        headers[key] = f"{headers[key]}{joiner}{value}" if key in headers else value
    return headers
