"""The web app's load time on a large brain: first paint, time until the Files list can be used,
and the brain graph drawn and settled — in Debian's Chromium, over a real server, on this machine.

    python bench/web_load.py [--documents 10000] [--pages 3000] [--runs 5]

Builds a brain of N documents (names of every format, each with one indexed passage) and P
graph pages linking to each other, directly through the store; then serves it (no worker: nothing
is left to index) and opens the app in a fresh browser context per run, signed in, cache empty:
- first paint: the browser's first-contentful-paint;
- Files usable: the first page of the list (50 rows, newest first) shown with its count — the
  moment a person can read, sort, filter or open a row;
- a filter: time from choosing "PDF" to the list showing only PDFs;
- graph: from clicking "Graph" to the P pages drawn, then to the layout settled, and the
  longest main-thread task meanwhile (what the page feels like while it settles).
Also the list's API call on its own (GET …/files, 50 rows, newest first) as the server sees it.
Prints medians of the runs; docs/benchmarks-journal.md records them.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM_ARGS, require_chromium  # noqa: E402
from tests.support.live_server import LiveServer  # noqa: E402

from loci.app import service_settings  # noqa: E402
from loci.config import Settings  # noqa: E402
from loci.embed.local import LocalEmbedder  # noqa: E402
from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument  # noqa: E402
from loci.service import Loci  # noqa: E402
from loci.store.blobs import BlobStore  # noqa: E402
from loci.store.sqlite import SqliteStore  # noqa: E402

BRAIN = "bench"
EXTENSIONS = [".pdf", ".docx", ".md", ".txt", ".png", ".html", ".xlsx", ".m4a"]
TYPES = ["person", "project", "concept", "company", "meeting"]


def service(home: Path, embedder: LocalEmbedder) -> Loci:
    settings = Settings(home=home)
    home.mkdir(parents=True, exist_ok=True)
    return Loci(
        SqliteStore(settings.database_path),
        BlobStore(settings.blob_dir),
        lambda: embedder,
        service_settings(settings),
    )


def build_documents(loci: Loci, count: int) -> None:
    store = loci.store
    assert isinstance(store, SqliteStore)
    brain = loci.brain(BRAIN)
    model = loci.embedder.model_id
    store.set_brain_embedder(brain.id, model, loci.embedder.dimensions)
    rng = np.random.default_rng(3)
    for n in range(count):
        name = f"document-{n:05}{EXTENSIONS[n % len(EXTENSIONS)]}"
        digest = hashlib.sha256(name.encode()).hexdigest()
        new = NewDocument("file", name, f"Document {n}", None, None, 1000 + n, digest)
        doc = store.create_document(brain.id, new, "none")
        text = f"Passage of document {n}."
        vector = rng.standard_normal(384).astype(np.float32)
        vector /= np.linalg.norm(vector)
        chunk = IndexedChunk(
            ChunkDraft(0, text, (), Location(None, 1, 1, 0, len(text)), 6, digest), digest
        )
        store.replace_index(doc.id, [chunk], {digest: vector}, model, text, None, None)
    store.db.execute("DELETE FROM jobs")


def build_pages(loci: Loci, count: int) -> None:
    brain = loci.brain(BRAIN)
    rng = np.random.default_rng(5)
    for n in range(count):
        targets = {int(t) for t in rng.integers(0, count, size=3)} - {n}
        links = " ".join(f"[[page:page-{t:05}|P{t}]]" for t in sorted(targets))
        loci.graph.create(
            brain,
            actor="bench",
            doc_type=TYPES[n % len(TYPES)],
            title=f"Page {n:05}",
            doc_id=f"page-{n:05}",
            folder=f"area-{n % 12}",
            text=f"About page {n}. {links}",
        )
    store = loci.store
    assert isinstance(store, SqliteStore)
    store.db.execute("DELETE FROM jobs")


def api_latency(server: LiveServer, runs: int) -> list[float]:
    times = []
    with server.client() as api:
        for _ in range(runs):
            start = time.perf_counter()
            answer = api.get(
                f"/brains/{BRAIN}/files",
                params={"kind": "file,web,note", "sort": "added", "order": "desc", "limit": 50},
            )
            times.append((time.perf_counter() - start) * 1000)
            assert answer.status_code == 200 and len(answer.json()) == 50
    return times


LONGTASKS = """
window.lociLongest = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    window.lociLongest = Math.max(window.lociLongest, entry.duration);
  }
}).observe({ type: "longtask", buffered: true });
"""


def one_run(browser: Any, server: LiveServer, cookie: str, pages: int) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "loci_session", "value": cookie, "url": server.url}])
    context.add_init_script(LONGTASKS)
    page = context.new_page()
    page.set_default_timeout(300_000)
    try:
        page.goto(server.url)
        page.wait_for_function(
            "() => document.querySelectorAll('#file-list .doc-row').length >= 50"
            " && document.querySelector('#files-summary').textContent.startsWith('Showing 50')"
        )
        usable = page.evaluate("performance.now()")
        paint = page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"
        )
        before = page.evaluate("performance.now()")
        page.select_option("#files-format", "pdf")
        page.wait_for_function(
            "() => { const rows = [...document.querySelectorAll('#file-list .doc-row')];"
            " return rows.length > 0 && rows.every((r) => r.dataset.format === 'pdf'); }"
        )
        filtered = page.evaluate("performance.now()") - before
        page.select_option("#files-format", "")
        page.click(".tab[data-panel=brain]")
        page.wait_for_function("() => document.querySelectorAll('.graph-item').length > 0")
        page.evaluate("window.lociLongest = 0")
        before = page.evaluate("performance.now()")
        page.click("#graph-show-graph")
        page.wait_for_function(
            f"() => document.querySelector('#graph-canvas').dataset.nodes === '{pages}'"
        )
        drawn = page.evaluate("performance.now()") - before
        page.wait_for_function(
            "() => document.querySelector('#graph-canvas').dataset.settled === 'true'"
        )
        settled = page.evaluate("performance.now()") - before
        longest = page.evaluate("window.lociLongest")
        return {
            "first paint": paint,
            "Files usable": usable,
            "filter to PDF": filtered,
            "graph drawn": drawn,
            "graph settled": settled,
            "longest task while drawing": longest,
        }
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    # A fresh data directory each time: the server bootstraps its owner account in it.
    home = Path(tempfile.mkdtemp(prefix="loci-web-bench-"))
    loci = service(home, LocalEmbedder())
    start = time.perf_counter()
    build_documents(loci, args.documents)
    print(f"built {args.documents} documents in {time.perf_counter() - start:.0f} s", flush=True)
    start = time.perf_counter()
    build_pages(loci, args.pages)
    print(f"built {args.pages} graph pages in {time.perf_counter() - start:.0f} s", flush=True)
    server = LiveServer(loci, run_worker=False).start()
    from playwright.sync_api import sync_playwright

    try:
        with httpx.Client(base_url=server.url + "/api/v1") as web:
            web.post("/session", json={"token": server.owner_token}).raise_for_status()
            cookie = web.cookies["loci_session"]
        api = api_latency(server, args.runs * 4)
        print(
            f"GET …/files (50 of {args.documents}, newest first):"
            f" median {statistics.median(api):.0f} ms"
        )
        results: dict[str, list[float]] = {}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(require_chromium()), args=CHROMIUM_ARGS
            )
            for run in range(args.runs):
                for key, value in one_run(browser, server, cookie, args.pages).items():
                    results.setdefault(key, []).append(value)
                print(
                    f"run {run + 1}: "
                    + ", ".join(f"{k} {v[-1]:.0f} ms" for k, v in results.items()),
                    flush=True,
                )
            browser.close()
        for key, values in results.items():
            print(
                f"{key:28} median {statistics.median(values):6.0f} ms"
                f"  (min {min(values):.0f}, max {max(values):.0f})"
            )
    finally:
        server.stop()
        loci.store.close()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
