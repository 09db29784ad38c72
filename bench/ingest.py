"""Ingest end to end on real documents, with the time broken down, and how soon a file is found.

    PYTHONPATH=src .venv/bin/python bench/ingest.py                  # the three sets + latency
    PYTHONPATH=src .venv/bin/python bench/ingest.py --sets scifact --abstracts 300
    PYTHONPATH=src .venv/bin/python bench/ingest.py --sets none --latency --rounds 5

Three sets, each added as files (as `loci add FOLDER` adds them) to a fresh data directory and
indexed by the worker in this process (`Library.wait_for`, as the CLI does without a server):

- scifact: the first N SciFact abstracts (`../shared/datasets/scifact`), one Markdown file each
  (`# title`, then the abstract);
- pdfs: text PDFs generated here (~400 words a page, the shape of a report, each its own words),
  of 5 to 60 pages;
- vault: a Markdown vault built here, Obsidian style: frontmatter with tags, a title, three
  sections each holding a SciFact abstract (from the end of the corpus: no overlap with the
  first set) and [[links]] to other notes.

For each set: documents and chunks; seconds until every document is searchable by words (text
stage) and until every one is ready; chunks per wall second and per CPU-second of the process
(all threads); and where the time went, from the indexer's own timers (`IndexTimings`): parse,
chunk, embed, write, and the rest (queue claims, reading rows back, Python between the steps).
The embedding model is loaded before the clock starts.

`--latency` measures the target of issue 21, a 50-page PDF searchable by words within 2 s of
`loci add` returning:
- in process: `add_bytes` returns, then the worker's text stage; the time until a text search
  finds it;
- against a running `loci serve` (a subprocess on a fresh data directory) busy embedding a
  backlog (the scifact set's abstracts, queued with `loci add --no-wait` first): `loci add
  --no-wait report.pdf` (its own wall time too), then the time from its return until a text
  search in this process finds the PDF; and plain `loci add report.pdf`, which returns once the
  words are indexed when a worker is running (its wall time, and whether vectors were pending).
A different PDF each round, medians printed with the range.

`--plain` only adds and indexes each set, timed from outside (wall and CPU seconds of the whole
add and index): it runs on older checkouts too, so the cost of a change to ingest is measured
before and after in one sitting, alternately:
`PYTHONPATH=OLD/src python bench/ingest.py --plain --sets scifact` and the same with `src`.

Prints figures only; nothing is asserted. The load average and CPU model are printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # for tests.support, the PDF generator

from tests.support.pdf_files import make_pdf, text_lines  # noqa: E402
from tests.support.text_files import prose, wrap  # noqa: E402

from loci.app import build_service  # noqa: E402
from loci.config import Settings  # noqa: E402
from loci.embed.calibration import cpu_model  # noqa: E402
from loci.models import SearchFilters  # noqa: E402
from loci.search.lexical import query_terms  # noqa: E402
from loci.service import Loci  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"
PDF_PAGES = (5, 8, 12, 20, 30, 40, 50, 60)


def report_pdf(pages: int, seed: int) -> bytes:
    """A text PDF like tests/support/pdf_files.py's `text_pdf` (~400 words a page), its prose
    drawn from `seed`: two seeds give two different files, each page's words its own."""
    drawn = []
    for page in range(pages):
        lines: list[str] = []
        for para in range(4):
            text = prose(100, seed=seed * 100_003 + page * 7 + para)
            lines.extend(wrap(text, width=95))
            lines.append("")
        drawn.append(text_lines(lines, top=760, size=10, leading=12.5))
    return make_pdf(drawn, title=f"Report {seed}", compress=True)


def page_words(seed: int, page: int = 25) -> str:
    """Words from the middle of a page of `report_pdf(…, seed)`."""
    return " ".join(prose(100, seed=seed * 100_003 + page * 7 + 1).split()[10:18])


def abstracts(dataset: Path) -> list[tuple[str, str]]:
    with open(dataset / "corpus.jsonl", encoding="utf-8") as f:
        return [(row["title"], row["text"]) for row in map(json.loads, f) if row["text"].strip()]


def scifact_files(folder: Path, entries: list[tuple[str, str]]) -> list[Path]:
    paths = []
    for n, (title, text) in enumerate(entries):
        path = folder / f"abstract-{n:05d}.md"
        path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        paths.append(path)
    return paths


def pdf_files(folder: Path, count: int) -> list[Path]:
    paths = []
    for n in range(count):
        pages = PDF_PAGES[n % len(PDF_PAGES)]
        path = folder / f"report-{n:03d}-{pages}p.pdf"
        path.write_bytes(report_pdf(pages, seed=n))
        paths.append(path)
    return paths


def vault_files(folder: Path, entries: list[tuple[str, str]], notes: int) -> list[Path]:
    rng = random.Random(21)
    tags = ["biology", "medicine", "methods", "reading", "review", "genetics", "cells"]
    titles = [f"Note {n:04d}" for n in range(notes)]
    paths = []
    for n, title in enumerate(titles):
        sections = entries[3 * n : 3 * n + 3]
        links = " ".join(f"[[{t}]]" for t in rng.sample(titles, k=min(3, len(titles))))
        body = "\n\n".join(f"## {head}\n\n{text}" for head, text in sections)
        chosen = ", ".join(rng.sample(tags, k=2))
        path = folder / f"{title}.md"
        path.write_text(
            f"---\ntitle: {title}\ntags: [{chosen}]\n---\n# {title}\n\nSee also {links}.\n\n"
            f"{body}\n",
            encoding="utf-8",
        )
        paths.append(path)
    return paths


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its parse processes, which read the files
    (`loci.ingest.parse_process`): those still running from /proc, those ended as children."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime + ended.ru_utime + ended.ru_stime
    try:
        from loci.ingest.parse_process import shared_processes
    except ImportError:  # a checkout from before parse processes (--plain): all in this one
        return total
    processes = shared_processes(Settings().parse_memory_mb)
    for pid in processes.pids() if processes is not None else []:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile: counted with the children once reaped
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def service(home: Path) -> Loci:
    return build_service(Settings(home=home))


def warm(loci: Loci) -> None:
    """Load the model (and the tokenizer) before any clock starts."""
    embedder = loci.library._embedder()
    embedder.embed(["warm up the model"])
    embedder.count_tokens("warm up the tokenizer")


@dataclass
class SetResult:
    name: str
    documents: int
    chunks: int
    add_s: float
    searchable_s: float
    ready_s: float
    cpu_s: float
    steps: dict[str, float]
    embedded: int

    def lines(self) -> list[str]:
        total = self.ready_s
        known = sum(self.steps.values())
        rows = [
            f"{self.name}: {self.documents} documents, {self.chunks} chunks"
            f" ({self.embedded} embedded)",
            f"  add (blobs, rows, jobs)  {self.add_s:7.2f} s",
            f"  all searchable by words {self.searchable_s:7.2f} s after the adds",
            f"  all ready               {total:7.2f} s after the adds",
            f"  chunks/s (wall, ready)  {self.chunks / total:7.1f}",
            f"  chunks per CPU-second   {self.chunks / self.cpu_s:7.1f}",
            "  where the time went (share of the time to ready):",
        ]
        for step, seconds in [*self.steps.items(), ("other", max(total - known, 0.0))]:
            rows.append(f"    {step:<7} {seconds:7.2f} s  {100 * seconds / total:5.1f}%")
        return rows


def plain_ingest(name: str, paths: list[Path], home: Path) -> str:
    """Add and index, timed from outside only: runs on checkouts from before the two stages
    and the timers (`PYTHONPATH=OLD/src … --plain`), for a before/after in one sitting."""
    loci = service(home)
    try:
        warm(loci)
        brain = loci.brain("bench")
        cpu, started = cpu_seconds(), time.perf_counter()
        ids = [loci.library.add_file(brain, path).document.id for path in paths]
        docs = loci.library.wait_for(brain, ids)
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    finally:
        loci.store.close()
    chunks = sum(d.chunk_count for d in docs)
    return (
        f"{name} (plain): {len(docs)} documents, {chunks} chunks, added and ready in {wall:.2f} s:"
        f" {chunks / wall:.1f} chunks/s, {chunks / cpu:.1f} per CPU-second"
    )


def ingest(name: str, paths: list[Path], home: Path) -> SetResult:
    from loci.ingest.timings import STEPS  # not in checkouts before the timers (see --plain)

    loci = service(home)
    try:
        warm(loci)
        brain = loci.brain("bench")
        loci.library.index_timings.reset()
        started = time.perf_counter()
        ids = [loci.library.add_file(brain, path).document.id for path in paths]
        added = time.perf_counter()
        cpu = cpu_seconds()
        loci.library.wait_for(brain, ids, until="searchable")
        searchable = time.perf_counter()
        docs = loci.library.wait_for(brain, ids)
        ready = time.perf_counter()
        cpu = cpu_seconds() - cpu
        timings = loci.library.index_timings
        failed = [d.name for d in docs if d.status != "ready"]
        if failed:
            print(f"  ({len(failed)} not ready: {failed[:3]})")
        return SetResult(
            name,
            len(docs),
            sum(d.chunk_count for d in docs),
            added - started,
            searchable - added,
            ready - added,
            cpu,
            {step: timings.seconds[step] for step in STEPS},
            timings.embedded,
        )
    finally:
        loci.store.close()


def found_by_words(loci: Loci, brain_name: str, words: str, name: str) -> bool:
    brain = loci.store.get_brain(brain_name)
    hits = loci.store.text_search(brain.id, query_terms(words), 5, SearchFilters())
    rows = loci.store.chunks_with_documents([i for i, _ in hits])
    return any(document.name == name for _, document in rows.values())


def median_range(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"


def in_process_latency(rounds: int, folder: Path) -> list[str]:
    loci = service(folder / "in-process")
    times: list[float] = []
    try:
        warm(loci)
        brain = loci.brain("bench")
        for n in range(rounds):
            seed = 1000 + n
            name = f"report-{n}.pdf"
            doc = loci.library.add_bytes(brain, name, report_pdf(50, seed)).document
            returned = time.perf_counter()
            loci.library.wait_for(brain, [doc.id], until="searchable")
            assert found_by_words(loci, "bench", page_words(seed), name)
            times.append(time.perf_counter() - returned)
            loci.library.wait_for(brain, [doc.id])  # embed it before the next round
    finally:
        loci.store.close()
    return [f"50-page PDF, in process: searchable by words {median_range(times)} after the add"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOCI_HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(
        [sys.executable, "-m", "loci", *args], env=env, capture_output=True, text=True, check=True
    )


@contextmanager
def server(home: Path, settings: dict[str, str] | None = None) -> Iterator[None]:
    """`loci serve` on a fresh port over `home` (with `settings` as LOCI_* variables), until
    the block ends."""
    port = free_port()
    env = {**os.environ, "LOCI_HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    env.update(settings or {})
    log = (home.parent / "serve.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "loci", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v1/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"loci serve did not start; see {log.name}")
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def wait(until: Callable[[], bool], timeout_s: float = 120.0, poll_s: float = 0.02) -> float:
    started = time.perf_counter()
    while not until():
        if time.perf_counter() - started > timeout_s:
            raise TimeoutError("not found in time")
        time.sleep(poll_s)
    return time.perf_counter() - started


def server_latency(rounds: int, folder: Path, backlog: Callable[[int], list[Path]]) -> list[str]:
    home = folder / "served" / "home"
    home.mkdir(parents=True)
    cli(home, "brains", "create", "bench")
    reader = service(home)
    no_wait_s, after_s, add_s, pending = [], [], [], []
    try:
        with server(home):
            time.sleep(2.0)  # its worker says it is alive (every 5 s, the first at once)
            for n in range(rounds):
                queued = backlog(n)
                if queued:  # keep the server's worker busy embedding
                    cli(home, "add", "--no-wait", "--brain", "bench", *map(str, queued))
                seed = 2000 + 2 * n
                path = folder / f"served-{n}.pdf"
                path.write_bytes(report_pdf(50, seed))
                started = time.perf_counter()
                cli(home, "add", "--no-wait", "--brain", "bench", str(path))
                returned = time.perf_counter()
                no_wait_s.append(returned - started)
                found = partial(found_by_words, reader, "bench", page_words(seed), path.name)
                after_s.append(wait(found))
                other = folder / f"served-wait-{n}.pdf"
                other.write_bytes(report_pdf(50, seed + 1))
                started = time.perf_counter()
                added = json.loads(cli(home, "add", "--json", "-b", "bench", str(other)).stdout)
                add_s.append(time.perf_counter() - started)
                pending.append(bool(added[0]["document"]["vectors_pending"]))
                if not found_by_words(reader, "bench", page_words(seed + 1), other.name):
                    raise AssertionError("loci add returned before the words were indexed")
    finally:
        reader.store.close()
    size = len(backlog(0))
    busy = f", the server embedding a backlog of {size} new files each round" if size else ""
    return [
        f"50-page PDF against a running loci serve{busy}:",
        f"  loci add --no-wait returns after {median_range(no_wait_s)}",
        f"  then searchable by words {median_range(after_s)} after it returned",
        f"  loci add (waits for the words) returns after {median_range(add_s)},"
        f" vectors pending in {sum(pending)} of {len(pending)}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--sets", default="scifact,pdfs,vault", help="comma-separated, or none")
    parser.add_argument("--abstracts", type=int, default=300)
    parser.add_argument("--pdfs", type=int, default=8)
    parser.add_argument("--vault", type=int, default=100, help="notes in the vault")
    parser.add_argument("--latency", action="store_true", help="also the 50-page PDF latency")
    parser.add_argument("--rounds", type=int, default=3, help="latency rounds")
    parser.add_argument("--backlog", type=int, default=100, help="abstracts queued first")
    parser.add_argument(
        "--plain", action="store_true", help="only add and index, timed from outside"
    )
    args = parser.parse_args()

    load = os.getloadavg()
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load {load[0]:.2f} {load[1]:.2f}")
    entries = abstracts(args.dataset)
    sets = [s for s in args.sets.split(",") if s and s != "none"]
    with tempfile.TemporaryDirectory(prefix="loci-bench-ingest-") as tmp:
        root = Path(tmp)
        for name in sets:
            folder = root / f"{name}-files"
            folder.mkdir()
            if name == "scifact":
                paths = scifact_files(folder, entries[: args.abstracts])
            elif name == "pdfs":
                paths = pdf_files(folder, args.pdfs)
            elif name == "vault":
                paths = vault_files(folder, entries[-3 * args.vault :], args.vault)
            else:
                raise SystemExit(f"unknown set {name!r} (scifact, pdfs, vault)")
            if args.plain:
                print(plain_ingest(name, paths, root / f"{name}-home"), flush=True)
                continue
            result = ingest(name, paths, root / f"{name}-home")
            print("\n".join(result.lines()), flush=True)
        if args.latency:
            for line in in_process_latency(args.rounds, root):
                print(line, flush=True)

            def backlog(n: int) -> list[Path]:
                folder = root / f"backlog-{n}"
                folder.mkdir(exist_ok=True)
                start = 1000 + n * args.backlog
                return scifact_files(folder, entries[start : start + args.backlog])

            for line in server_latency(args.rounds, root, backlog):
                print(line, flush=True)
    load = os.getloadavg()
    print(f"load at the end {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
