"""What rendering a JavaScript page in the browser costs, next to the plain fetch.

    .venv/bin/python bench/render_page.py [--rounds 5] [--chromium /usr/bin/chromium]

A loopback site serves an app shell whose script builds a ~2,000-word article. Each round:
the plain fetch of the shell (`fetch_web_page`), then `render_page` (a fresh headless Chromium,
every request routed through the vetted fetcher). Prints the median and worst time of each, and
the peak memory (PSS) of the Chromium processes in one render.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.loopback import Loopback, QuietHandler  # noqa: E402

from loci.ingest.fetch import fetch_web_page  # noqa: E402
from loci.ingest.fetch_browser import BrowserSettings, render_page  # noqa: E402
from loci.ingest.fetch_policy import FetchPolicy  # noqa: E402

SHELL = b"""<!doctype html><html><head><title>Reader</title><script defer src="/app.js"></script>
</head><body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div></body></html>"""
APP = b"""const root = document.getElementById("root");
for (let i = 0; i < 40; i++) {
  const p = document.createElement("p");
  p.textContent = ("Paragraph " + i + " of a page built in the browser. ").repeat(8);
  root.appendChild(p);
}"""


class Handler(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        body, kind = (APP, "text/javascript") if self.path == "/app.js" else (SHELL, "text/html")
        self.send(200, body, kind)


def chromium_pss_kb() -> int:
    """Proportional set size (shared pages split between sharers, so the sum is not inflated)
    of every process whose command line is a Loci render's Chromium."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"loci-chromium-" not in cmdline:
                continue
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    site = Loopback(Handler).start()
    url = site.url("/")
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",))
    browser = BrowserSettings(executable=args.chromium)

    plain: list[float] = []
    rendered: list[float] = []
    peak = 0
    for _ in range(args.rounds):
        started = time.perf_counter()
        page = fetch_web_page(url, policy, javascript_ok=True)
        plain.append(time.perf_counter() - started)
        assert page.needs_javascript is not None

        stop = threading.Event()
        peaks: list[int] = []

        def sample(done: threading.Event = stop, into: list[int] = peaks) -> None:
            while not done.wait(0.05):
                into.append(chromium_pss_kb())

        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.perf_counter()
        result = render_page(url, policy, browser)
        rendered.append(time.perf_counter() - started)
        stop.set()
        sampler.join()
        peak = max([peak, *peaks])
        assert b"Paragraph 39" in result.page.body

    def line(name: str, times: list[float]) -> str:
        return f"{name}: median {statistics.median(times):.3f} s, worst {max(times):.3f} s"

    print(line("plain fetch", plain))
    print(line("browser render (Chromium start included)", rendered))
    print(f"peak Chromium memory (PSS) during a render: {peak / 1024:.0f} MB")
    site.stop()


if __name__ == "__main__":
    main()
