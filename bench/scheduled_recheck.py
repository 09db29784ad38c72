"""A scheduled re-check of followed places that have not changed: what it costs in requests and
time, and that nothing is parsed or embedded again (docs/benchmarks-journal.md, "Scheduled
sources").

    python bench/scheduled_recheck.py [--entries 1000] [--pages 1000] [--database-url URL]

1. A web site on 127.0.0.1 serves a feed of `--entries` entries, each with its whole text
   (~1,500 characters), and `--pages` pages, all with ETag and Last-Modified.
2. The feed is followed and run once (every entry added, its index job queued), and so is a
   source of the `--pages` pages. Nothing is indexed: the re-check is measured by the jobs
   it queues, and a job never queued is a document never parsed nor embedded again.
3. The re-check: each source run again, unchanged. For the feed that is one conditional
   request answered 304; for the pages, one conditional request each, answered 304. Reported:
   requests made, seconds (median of 3), and the index jobs queued by the re-check (must be 0).
4. The same pages served without validators (a server that sends the page again): one request
   each, the same bytes, so again nothing is queued; its seconds too.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tests.support.feeds import HTML, FeedSite, page, rss

from loci.app import service_settings
from loci.config import Settings
from loci.embed.local import LocalEmbedder
from loci.models import Brain
from loci.service import Loci
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore

# A garden's words, from which each entry's and page's text is drawn.
VOCABULARY = (
    "garden hive compost mulch tomato garlic leek bean seed frost water shed rota pollen swarm"
    " queen comb bark spade hoe trellis greenhouse soil worm leaf root"
)
WORDS = VOCABULARY.split()


def text(i: int) -> str:
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(220)]
    return f"Entry {i}: " + " ".join(words)


def service(home: Path, database_url: str | None) -> Loci:
    settings = Settings(home=home, fetch_allowed_networks=["127.0.0.1/32"])
    home.mkdir(parents=True, exist_ok=True)
    store: Store
    if database_url:
        from loci.store.postgres import PostgresStore

        store = PostgresStore(database_url)
    else:
        store = SqliteStore(home / "loci.db")
    return Loci(
        store=store,
        blobs=BlobStore(settings.blob_dir),
        embedder=LocalEmbedder,  # built on first use: never, here
        settings=service_settings(settings),
    )


def jobs(loci: Loci, brain: Brain) -> int:
    return len(loci.store.list_jobs(brain.id, 1_000_000))


def recheck(loci: Loci, brain: Brain, source_id: int, site: FeedSite) -> tuple[float, int, int]:
    """Seconds (median of 3), requests per re-check, jobs queued by the re-checks."""
    before_jobs = jobs(loci, brain)
    times, requests = [], []
    for _ in range(3):
        asked = len(site.requests)
        started = time.perf_counter()
        result = loci.scheduled.run_now(brain, source_id, "bench")
        times.append(time.perf_counter() - started)
        requests.append(len(site.requests) - asked)
        assert result.unreachable is None and not result.failed, result
        assert result.added == result.updated == result.removed == 0, result
    return statistics.median(times), max(requests), jobs(loci, brain) - before_jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, FeedSite() as site:
        loci = service(Path(scratch) / "home", args.database_url)
        brain = loci.brain("bench")
        entries = [(f"e{i}", f"Entry {i}", f"<p>{text(i)}</p>") for i in range(args.entries)]
        site.put("/feed.xml", rss(entries))
        for i in range(args.pages):
            site.put(f"/p/{i}", page(f"Page {i}", text(i + args.entries)), HTML)
        feed = loci.scheduled.add(brain, site.url("/feed.xml"), 3600, kind="feed")
        urls = [site.url(f"/p/{i}") for i in range(1, args.pages)]
        pages = loci.scheduled.add(
            brain, site.url("/p/0"), 3600, kind="page", options={"urls": urls}
        )
        started = time.perf_counter()
        first_feed = loci.scheduled.run_now(brain, feed.id, "bench")
        first_pages = loci.scheduled.run_now(brain, pages.id, "bench")
        first_s = time.perf_counter() - started
        print(f"first run        {first_feed.added} entries, {first_pages.added} pages in"
              f" {first_s:.1f} s ({jobs(loci, brain)} index jobs queued)")  # fmt: skip

        seconds, requests, new_jobs = recheck(loci, brain, feed.id, site)
        print(f"feed recheck     {args.entries} entries: {requests} request (304),"
              f" {seconds * 1000:.1f} ms, {new_jobs} jobs queued")  # fmt: skip
        seconds, requests, new_jobs = recheck(loci, brain, pages.id, site)
        answered = site.requests[-requests:]
        not_modified = sum(1 for r in answered if r.status == 304)
        print(f"pages recheck    {args.pages} pages: {requests} requests ({not_modified} 304),"
              f" {seconds:.2f} s, {new_jobs} jobs queued")  # fmt: skip
        for i in range(args.pages):  # the same pages from a server without validators
            site.put(f"/p/{i}", page(f"Page {i}", text(i + args.entries)), HTML, False)
        seconds, requests, new_jobs = recheck(loci, brain, pages.id, site)
        print(f"pages no-etag    {args.pages} pages: {requests} requests (200, same bytes),"
              f" {seconds:.2f} s, {new_jobs} jobs queued")  # fmt: skip
        loci.store.close()


if __name__ == "__main__":
    main()
