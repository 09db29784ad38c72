"""What reading small files in a parse process costs: N short notes added and read until searchable.

    PYTHONPATH=src .venv/bin/python bench/parse_overhead.py [--files 200] [--cap 1024]

A fresh data directory; the service built as `loci serve` builds it (`loci.app.build_service`,
`LOCI_PARSE_MEMORY_MB` from `--cap`, 0 parsing in this process); N notes of 60-120 words, half
Markdown and half plain text, each its own words, added with `Library.add_bytes` and indexed to
the end of their text stage (`wait_for(until="searchable")`: parse, chunk, write; no
embedding). Prints the seconds from the first add to the last document searchable, and per file.
Run it under an outside timer, paired against an older checkout (`PYTHONPATH=OLD/src`), for the
whole-process cost, start-up of the parse process included. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from loci.app import build_service
from loci.config import Settings

_WORDS = [
    "keeper",
    "lamp",
    "tide",
    "harbour",
    "weather",
    "boiler",
    "loft",
    "ledger",
    "invoice",
    "garden",
    "glass",
    "meeting",
    "minutes",
    "budget",
    "roof",
    "gutter",
    "kettle",
    "recipe",
    "damson",
    "orchard",
    "ferry",
    "timetable",
    "winter",
    "spring",
    "signal",
]


def _notes(count: int) -> list[tuple[str, bytes]]:
    pick = random.Random(200)
    notes = []
    for i in range(count):
        words = " ".join(pick.choices(_WORDS, k=pick.randint(60, 120)))
        if i % 2:
            notes.append((f"note-{i}.txt", f"Note {i}\n\n{words}\n".encode()))
        else:
            notes.append((f"note-{i}.md", f"# Note {i}\n\n{words}\n".encode()))
    return notes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--cap", type=int, default=1024, help="LOCI_PARSE_MEMORY_MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        loci = build_service(Settings(home=Path(home), parse_memory_mb=args.cap))
        brain = loci.brain("bench")
        loci.embedder.count_tokens("warm")  # the tokenizer is loaded before the clock starts
        started = time.perf_counter()
        ids = [loci.library.add_bytes(brain, n, d).document.id for n, d in _notes(args.files)]
        loci.library.wait_for(brain, ids, until="searchable")
        seconds = time.perf_counter() - started
        loci.store.close()
    per_file = seconds / args.files * 1000
    print(f"{args.files} files searchable in {seconds:.2f} s: {per_file:.2f} ms a file")


if __name__ == "__main__":
    main()
