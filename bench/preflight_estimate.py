"""How close `add --dry-run`'s estimates come to the add that follows.

    .venv/bin/python bench/preflight_estimate.py [--docs 120] [--words 900]

Writes a folder of Markdown documents of generated prose (sections of ~150 words under headings)
into a scratch data directory, runs the preflight, then adds the folder and indexes it with the
in-process worker and the shipped local model. Prints the estimated and measured chunk counts and
indexing seconds, and how long the dry run itself took.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from loci.app import build_service
from loci.config import Settings

WORDS = [
    "river",
    "kelp",
    "otter",
    "boiler",
    "pressure",
    "valve",
    "lease",
    "tenant",
    "sourdough",
    "starter",
    "flour",
    "oven",
    "meeting",
    "budget",
    "quarter",
    "garden",
    "tomato",
    "frost",
    "harvest",
    "invoice",
    "supplier",
    "delivery",
    "engine",
    "battery",
    "charge",
    "library",
    "archive",
    "letter",
    "season",
    "morning",
    "evening",
    "window",
    "roof",
    "gutter",
    "ladder",
    "paint",
    "brush",
]


def prose(n_words: int, rng: random.Random) -> str:
    sentences = []
    while n_words > 0:
        length = min(n_words, rng.randint(8, 20))
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(length)).capitalize() + ".")
        n_words -= length
    return " ".join(sentences)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=120)
    parser.add_argument("--words", type=int, default=900)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "docs"
        folder.mkdir()
        for i in range(args.docs):
            sections = [
                f"## Section {s}\n\n{prose(150, rng)}" for s in range(max(1, args.words // 150))
            ]
            (folder / f"doc-{i:04d}.md").write_text(f"# Document {i}\n\n" + "\n\n".join(sections))
        loci = build_service(Settings(home=Path(scratch) / "home"))
        paths = sorted(folder.iterdir())
        loci.embedder.count_tokens("warm up")  # load the model outside both timings

        started = time.perf_counter()
        flight = loci.library.preflight(None, paths=paths)
        dry_s = time.perf_counter() - started

        brain = loci.brain()
        started = time.perf_counter()
        ids = [loci.library.add_file(brain, path).document.id for path in paths]
        documents = loci.library.wait_for(brain, ids)
        real_s = time.perf_counter() - started
        chunks = sum(d.chunk_count for d in documents)

        print(f"{args.docs} documents of ~{args.words} words")
        print(f"chunks: estimated {flight.totals.chunks}, indexed {chunks}")
        print(f"indexing time: estimated {flight.totals.seconds:.1f} s, measured {real_s:.1f} s")
        print(f"the dry run itself: {dry_s:.1f} s")
        loci.store.close()


if __name__ == "__main__":
    main()
