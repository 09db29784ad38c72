"""How soon a small note is found by its words while the worker OCRs a long scan, with the
worker's quick lane and without it (`LOCI_WORKER_QUICK_LANE`), in one sitting.

    PYTHONPATH=src .venv/bin/python bench/note_during_ocr.py --pages 20 --rounds 3

For each setting, a `loci serve` (a subprocess, as `bench/ingest.py --latency` runs it) on a fresh
data directory. Each round adds a scanned PDF of `--pages` pages (bench/ocr_pdf.py's pages: ~400
words of rendered text each, no text layer, ~5 MB for 20 pages: the main lane's job) from this
process, as `loci add --no-wait` would (the canonical write only); waits until the server's
worker reports OCR under way and `--into` seconds more; then adds a one-paragraph note the same
way and times, from the add's return, until a text search in this process finds it, and until
the note is ready (its vector written). The round ends when the scan is ready. A different scan
and note each round; medians with the range. Also printed: how long the scan's text stage took,
and how many of its pages were read when the note was found.

Prints figures only; nothing is asserted. The load average and CPU model are printed first.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))  # the sibling scripts: a server, a search, scanned pages

from ingest import found_by_words, server, service, wait  # noqa: E402
from ocr_pdf import DPI, page_image  # noqa: E402
from tests.support import text_files  # noqa: E402  (ingest.py put the repository on the path)

from loci.embed.calibration import cpu_model  # noqa: E402
from loci.models import Brain, Document, is_searchable  # noqa: E402
from loci.service import Loci  # noqa: E402


def scan(pages: int, seed: int) -> bytes:
    """A scanned PDF whose pages are drawn from `seed` (another seed: other bytes)."""
    images = [page_image(seed * 1000 + page) for page in range(pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=DPI)
    return buffer.getvalue()


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"


@dataclass
class Round:
    found_s: float  # the note found by its words, after its add returned
    ready_s: float  # the note's vector written, after its add returned
    scan_text_s: float  # the scan found by its words, after its add returned
    pages_read: str  # how far the scan's OCR was when the note was found


def one_round(reader: Loci, brain: Brain, n: int, pages: int, into_s: float) -> Round:
    def document(doc_id: int) -> Document:
        return reader.library.document(brain, doc_id)

    def ocr_started(doc_id: int) -> bool:
        progress = document(doc_id).progress
        return progress is not None and progress.stage == "ocr"

    def ready(doc_id: int) -> bool:
        return document(doc_id).status == "ready"

    added = time.perf_counter()
    big = reader.library.add_bytes(brain, f"scan-{n}.pdf", scan(pages, 7 + n)).document
    wait(partial(ocr_started, big.id), timeout_s=600, poll_s=0.1)
    time.sleep(into_s)
    words = text_files.prose(40, seed=500 + n)
    note = reader.library.add_note(brain, f"Round {n}. {words}").document
    returned = time.perf_counter()
    query = " ".join(words.split()[5:12])
    found = partial(found_by_words, reader, brain.name, query, note.name)
    wait(found, timeout_s=1800, poll_s=0.05)
    found_s = time.perf_counter() - returned
    progress = document(big.id).progress
    read = "all"
    if progress is not None and progress.stage == "ocr":
        read = f"{progress.done}/{progress.total}"
    wait(partial(ready, note.id), timeout_s=1800, poll_s=0.05)
    ready_s = time.perf_counter() - returned
    wait(lambda: is_searchable(document(big.id)), timeout_s=1800, poll_s=0.1)
    scan_text_s = time.perf_counter() - added
    wait(partial(ready, big.id), timeout_s=1800, poll_s=0.1)  # the next round starts idle
    return Round(found_s, ready_s, scan_text_s, read)


def run(quick_lane: bool, rounds: int, pages: int, into_s: float, folder: Path) -> list[str]:
    home = folder / ("quick" if quick_lane else "single") / "home"
    home.mkdir(parents=True)
    reader = service(home)
    brain = reader.brain("bench")
    results: list[Round] = []
    settings = {"LOCI_WORKER_QUICK_LANE": "true" if quick_lane else "false"}
    try:
        with server(home, settings):
            time.sleep(2.0)  # its worker says it is alive
            results = [one_round(reader, brain, n, pages, into_s) for n in range(rounds)]
    finally:
        reader.store.close()
    lane = "with the quick lane" if quick_lane else "one lane (LOCI_WORKER_QUICK_LANE=false)"
    read = ", ".join(r.pages_read for r in results)
    return [
        f"{lane}:",
        f"  note found by its words {spread([r.found_s for r in results])} after its add"
        f" returned (scan pages read by then: {read})",
        f"  note ready (vector written) {spread([r.ready_s for r in results])} after its add",
        f"  the {pages}-page scan searchable by words {spread([r.scan_text_s for r in results])}"
        " after its add",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20, help="pages of each scan")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--into", type=float, default=2.0, help="seconds into the OCR")
    parser.add_argument("--only", choices=("quick", "single"), help="one setting only")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load {load[0]:.2f} {load[1]:.2f}")
    with tempfile.TemporaryDirectory(prefix="loci-bench-lanes-") as tmp:
        for quick_lane in (False, True):
            if args.only and args.only != ("quick" if quick_lane else "single"):
                continue
            for line in run(quick_lane, args.rounds, args.pages, args.into, Path(tmp)):
                print(line, flush=True)
    load = os.getloadavg()
    print(f"load at the end {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
