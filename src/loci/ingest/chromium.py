"""A headless Chromium for one page: its own profile and process group, DevTools on loopback.

Playwright's own `launch` hides the browser's process, and a page whose script loops for ever
blocks every Playwright call that waits on it; so Chromium is started here, Playwright connects to
it over the DevTools protocol, and the caller can kill the whole process group at a deadline.

The DevTools port is on 127.0.0.1 and chosen by Chromium. Another local process could find it
while the render runs; it would gain nothing it lacks (it can already open connections itself),
and the browser lives for one page. The flags below keep the browser from reaching the network
on its own: it can resolve no host, so only what Loci fulfils through routing gets in.

WebRTC is the exception the resolver rules do not cover: its STUN and TURN packets go to IP
literals over UDP from the browser's own P2P sockets, outside routing. So the profile is written
with WebRTC's IP handling policy at `disable_non_proxied_udp` (the preference Chromium's privacy
settings and enterprise policy set) and the same policy is given as a switch; with no proxy,
WebRTC then has no transport at all. QUIC is off, so nothing speaks UDP (HTTP/3, WebTransport).
The page's scripts lose these APIs too (`browser_channels`); the flags hold even in a frame
where that init script has not run.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from loci.errors import FetchError

__all__ = ["Chromium"]

_DEVTOOLS_LINE = re.compile(r"DevTools listening on (ws://\S+)")
_STARTUP_S = 15.0  # Chromium's own start (not counted against a slow page's budget)
_KILL_GRACE_S = 5.0
_NO_UDP_WEBRTC = "disable_non_proxied_udp"
# Read by Chromium from a fresh profile. (`--force-webrtc-ip-handling-policy`, which Loci used to
# pass, is not a switch current Chromium knows: STUN went out to loopback regardless.)
_PREFERENCES = {"webrtc": {"ip_handling_policy": _NO_UDP_WEBRTC}}


class Chromium:
    """A headless Chromium in its own process group, reachable over DevTools on loopback."""

    def __init__(self, executable: str) -> None:
        self._executable = executable
        self._profile = tempfile.mkdtemp(prefix="loci-chromium-")
        self._process: subprocess.Popen[str] | None = None
        self.ws_url = ""

    def __enter__(self) -> Chromium:
        args = [
            self._executable,
            "--headless",
            "--remote-debugging-port=0",
            f"--user-data-dir={self._profile}",
            # Nothing leaves the browser except through routing (see the module docstring).
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--webrtc-ip-handling-policy={_NO_UDP_WEBRTC}",
            "--disable-quic",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-gpu",
            "--no-first-run",
            "--mute-audio",
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # Chromium refuses to start as root with its sandbox on; the routing above still
            # bounds what a page can reach.
            args.insert(1, "--no-sandbox")
        try:
            self._write_preferences()
            self._process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,  # its own process group: killed as one, renderers too
            )
        except OSError as exc:
            self._cleanup()
            raise FetchError(f"could not start Chromium ({self._executable}): {exc}") from exc
        self.ws_url = self._await_devtools()
        return self

    def _write_preferences(self) -> None:
        default = os.path.join(self._profile, "Default")
        os.mkdir(default)
        with open(os.path.join(default, "Preferences"), "w", encoding="utf-8") as file:
            json.dump(_PREFERENCES, file)

    def _await_devtools(self) -> str:
        assert self._process is not None and self._process.stderr is not None
        lines: queue.Queue[str | None] = queue.Queue()
        stderr = self._process.stderr

        def drain() -> None:
            # Chromium keeps logging to stderr; the pipe must be emptied or it blocks.
            for line in stderr:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=drain, name="loci-chromium-stderr", daemon=True).start()
        ends = time.monotonic() + _STARTUP_S
        tail: list[str] = []
        while True:
            try:
                line = lines.get(timeout=max(0.0, ends - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise FetchError(f"Chromium did not start within {_STARTUP_S:g} s") from None
            if line is None:
                self.kill()
                detail = " ".join(tail[-3:]).strip() or "no output"
                raise FetchError(f"Chromium exited at start: {detail}")
            match = _DEVTOOLS_LINE.search(line)
            if match:
                return match.group(1)
            tail.append(line.strip())

    def kill(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(_KILL_GRACE_S)

    def __exit__(self, *exc: object) -> None:
        self.kill()
        self._cleanup()

    def _cleanup(self) -> None:
        shutil.rmtree(self._profile, ignore_errors=True)
