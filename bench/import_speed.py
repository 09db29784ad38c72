"""Importing a big export of another tool: items per second to imported and to searchable by
words, and the import's peak memory (docs/benchmarks-journal.md, "Importing exports").

    nice python bench/import_speed.py [--items 10000] [--kinds evernote,notion] [--json]
    nice env PYTHONPATH=OLD/src python bench/import_speed.py --import-only   # an older checkout

For each kind, an export of `--items` items is generated here (not timed), then:

1. import: `loci import KIND FILE --no-wait --json -b bench` run as a person runs it, a
   subprocess (a new Python process: its start-up is counted) on a fresh data directory.
   Timed from its start to its exit (polled every 20 ms); its peak resident memory is the
   process's own high-water mark (VmHWM). Its report must add every item (nothing failed).
2. searchable by words: the text stage of every queued document (items and their
   attachments), run in this process by the indexer `loci import` would run without
   `--no-wait` (`Library.wait_for(…, until="searchable")`, as the CLI does without a worker).
   Timed until every document is found by its words; a text search for a word only the last
   item holds must then find it. Vectors are not made (the embedding model is never loaded):
   "searchable by words" is the issue's figure, embedding is `bench/ingest.py`'s.

The exports:
- evernote: one ENEX notebook of `--items` notes, as Evernote writes it (`tests/support/
  evernote_export.py`): ENML with headings, lists, checkboxes and bold, 40 to ~2,500 words a
  note (most short, a few long: a log-normal draw), one to three tags of 60, created and
  updated times, one note in 50 with a resource (a text file, or a one-page text PDF).
- notion: a "Markdown & CSV" export zip of `--items` pages as Notion lays out a big workspace
  (a zip holding `Export-…-Part-1.zip`): 100 top-level pages each with sub-pages in its
  folder, the properties Notion writes under a title, one to three links to other pages, one
  page in 50 with an image or a file, the same text lengths.

Each item's text holds a word no other item holds (the check of step 2). The words are drawn
from a vocabulary of ~5,000 made-up words with a Zipf-like frequency, so the index has the
shape of real prose (a few very common words, a long tail), unlike a 30-word filler.

`--import-only` leaves out step 2, for a before/after of the import itself (run alternately
with `PYTHONPATH=OLD/src` and `src`). Prints the CPU model and load first, then per kind:
items, documents written, the export's size, seconds and items/s to imported and to
searchable, and the import's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # for tests.support, the export builders

from tests.support.evernote_export import Note, Resource, enex  # noqa: E402
from tests.support.notion_export import link  # noqa: E402
from tests.support.pdf_files import text_pdf  # noqa: E402

import loci  # noqa: E402
from loci.app import build_service  # noqa: E402
from loci.config import Settings  # noqa: E402
from loci.embed.calibration import cpu_model  # noqa: E402
from loci.search.engine import SearchRequest  # noqa: E402

_SYLLABLES = [
    "ka",
    "to",
    "ri",
    "mu",
    "se",
    "la",
    "no",
    "vi",
    "de",
    "po",
    "ra",
    "shi",
    "en",
    "al",
    "or",
    "te",
    "ma",
    "lu",
    "be",
    "ni",
    "so",
    "qua",
    "ver",
    "tor",
    "an",
    "il",
    "gar",
    "fen",
    "dro",
    "mel",
    "pas",
    "cor",
    "bri",
    "sta",
    "lin",
    "mon",
]


def vocabulary(size: int = 5000) -> list[str]:
    """Made-up words of two to four syllables, all different, in a fixed order."""
    rng = random.Random(7)
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


WORDS = vocabulary()
# Zipf-like: the k-th word drawn with weight 1/(k+1); cumulative weights for `choices`.
_CUMULATIVE = list(accumulate(1 / (k + 1) for k in range(len(WORDS))))


def unique_word(i: int) -> str:
    """A word only item `i` holds ("xq" and its number in letters: no digit for a tokenizer
    to split on)."""
    letters = ""
    n = i
    while True:
        letters = chr(ord("a") + n % 26) + letters
        n //= 26
        if n == 0:
            break
    return f"xq{letters}zz"


def paragraphs(rng: random.Random, i: int) -> list[str]:
    """An item's prose: 40 to ~2,500 words (log-normal, median ~200), in paragraphs of
    sentences of 6 to 18 words, with its unique word in the first sentence."""
    n = min(2500, max(40, int(rng.lognormvariate(math.log(200), 0.9))))
    drawn = rng.choices(WORDS, cum_weights=_CUMULATIVE, k=n)
    drawn[1] = unique_word(i)
    sentences: list[str] = []
    at = 0
    while at < n:
        length = rng.randint(6, 18)
        words = drawn[at : at + length]
        at += length
        sentences.append(" ".join(words).capitalize() + ".")
    out: list[str] = []
    while sentences:
        take = rng.randint(2, 6)
        out.append(" ".join(sentences[:take]))
        sentences = sentences[take:]
    return out


TAGS = [f"{WORDS[k * 7]}-{WORDS[k * 11 + 1]}" for k in range(60)]
_PDF = text_pdf(1, words_per_page=250)


def _stamp(rng: random.Random) -> str:
    return (
        f"20{rng.randint(15, 24)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        f"T{rng.randint(0, 23):02d}{rng.randint(0, 59):02d}00Z"
    )


def evernote_export(path: Path, items: int) -> int:
    """One notebook of `items` notes; the attachments written."""
    rng = random.Random(11)
    notes: list[Note] = []
    attachments = 0
    for i in range(items):
        paras = paragraphs(rng, i)
        body = [f"<h2>{' '.join(paras[0].split()[:4])}</h2>"]
        for p, text in enumerate(paras):
            if p % 4 == 3:
                words = text.split()
                body.append("<ul>" + "".join(f"<li>{w}</li>" for w in words[:5]) + "</ul>")
            elif p % 5 == 4:
                body.append(f'<div><en-todo checked="true"/>{text}</div>')
            else:
                head, _, rest = text.partition(" ")
                body.append(f"<div><b>{head}</b> {rest}</div>")
        resources: tuple[Resource, ...] = ()
        if i % 50 == 7:
            attachments += 1
            if i % 100 == 7:
                resource = Resource(_PDF, "application/pdf", f"scan-{i}.pdf")
            else:
                resource = Resource(
                    (" ".join(paras[-1].split()[:60]) + f" {i}\n").encode(),
                    "text/plain",
                    f"note-{i}.txt",
                )
            resources = (resource,)
            body.append(f'<div><en-media hash="{resource.hash}" type="{resource.mime}"/></div>')
        created = _stamp(rng)
        notes.append(
            Note(
                title=f"{paras[0].split()[0]} {unique_word(i)} {i}",
                enml_body="".join(body),
                created=created,
                updated=created if i % 3 else _stamp(rng),
                tags=tuple(rng.sample(TAGS, rng.randint(1, 3))),
                resources=resources,
            )
        )
    path.write_text(enex(notes), encoding="utf-8")
    return attachments


_WRAPPER = "Export-5d1c2b3a-4e5f-6a7b-8c9d-0e1f2a3b4c5d"


def _notion_id(i: int) -> str:
    return f"{i:08x}" + "9f3e2d1c" * 3


def notion_export(path: Path, items: int) -> int:
    """A zip of a Part-1 zip of `items` pages, 100 at the top and the rest under them; the
    attachments written."""
    rng = random.Random(13)
    tops = min(100, items)
    titles: list[str] = []
    paths: list[list[str]] = []  # each page's file, as the parts of its path
    for i in range(items):
        title = f"{WORDS[rng.randint(0, 999)].capitalize()} {unique_word(i)}"
        titles.append(title)
        if i < tops:
            paths.append([f"{title} {_notion_id(i)}.md"])
        else:
            parent = i % tops
            folder = f"{titles[parent]} {_notion_id(parent)}"
            paths.append([folder, f"{title} {_notion_id(i)}.md"])
    members: dict[str, bytes] = {}
    attachments = 0
    for i in range(items):
        paras = paragraphs(rng, i)
        lines = [f"# {titles[i]}", ""]
        lines += [
            f"Created: {_notion_date(rng)}",
            f"Last edited time: {_notion_date(rng)}",
            f"Tags: {', '.join(rng.sample(TAGS, rng.randint(1, 3)))}",
            "",
        ]
        for p, text in enumerate(paras):
            lines += [f"## {' '.join(text.split()[:3])}" if p % 4 == 2 else text, ""]
        here = len(paths[i]) - 1  # folders between the page and the export's root
        for target in rng.sample(range(items), rng.randint(1, 3)):
            relative = [".."] * here + paths[target]
            lines.append(f"See [{titles[target]}]({link(*relative)}).")
        if i % 50 == 7:
            attachments += 1
            folder = f"{titles[i]} {_notion_id(i)}"
            name, data = (
                (f"scan-{i}.pdf", _PDF)
                if i % 100 == 7
                else (f"notes-{i}.txt", (" ".join(paras[-1].split()[:60]) + "\n").encode())
            )
            lines += ["", f"[{name}]({link(folder, name)})"]  # beside the page's file
            member = "/".join([*paths[i][:-1], folder, name])
            members[f"{_WRAPPER}/{member}"] = data
        members[f"{_WRAPPER}/{'/'.join(paths[i])}"] = ("\n".join(lines) + "\n").encode()
    part = path.with_name("part.zip")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as outer:
        outer.write(part, f"{_WRAPPER}-Part-1.zip")
    part.unlink()
    return attachments


def _notion_date(rng: random.Random) -> str:
    month = ("January", "March", "June", "September", "November")[rng.randint(0, 4)]
    return f"{month} {rng.randint(1, 28)}, 20{rng.randint(15, 24)} {rng.randint(1, 12)}:15 PM"


@dataclass
class Result:
    kind: str
    items: int
    attachments: int
    export_mb: float
    documents: int
    import_s: float
    searchable_s: float
    import_peak_rss_mb: float
    added: int
    failed: int

    def lines(self) -> list[str]:
        total = self.import_s + self.searchable_s
        lines = [
            f"{self.kind}: {self.items} items ({self.attachments} with an attachment),"
            f" export {self.export_mb:.1f} MB",
            f"  imported        {self.import_s:7.1f} s  {self.items / self.import_s:7.1f}"
            f" items/s  ({self.documents} documents written, {self.added} items added,"
            f" {self.failed} failed)",
        ]
        if not math.isnan(total):
            lines.append(
                f"  searchable      {total:7.1f} s  {self.items / total:7.1f} items/s"
                f"  (text stage {self.searchable_s:.1f} s after the import)"
            )
        return [*lines, f"  import peak RSS {self.import_peak_rss_mb:7.0f} MB"]


def run_import(home: Path, kind: str, export: Path) -> tuple[float, float, dict[str, int]]:
    """`loci import` as a subprocess: seconds, peak RSS in MB, and its counts.

    The peak is the process's own high-water mark (VmHWM in /proc, read every 20 ms until it
    exits): the kernel's maximum RSS of a child (`wait4`, RUSAGE_CHILDREN) counts the memory of
    this process at the fork too, which after a first kind's text stage is hundreds of MB."""
    # The Loci this script runs (PYTHONPATH=OLD/src measures an older checkout the same way).
    source = Path(loci.__file__).resolve().parents[1]
    env = {**os.environ, "LOCI_HOME": str(home), "PYTHONPATH": str(source)}
    command = [sys.executable, "-m", "loci", "import", kind, str(export)]
    command += ["--no-wait", "--json", "-b", "bench"]
    peak_kb = 0
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr)
        status = Path(f"/proc/{process.pid}/status")
        while process.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
            except (OSError, ValueError):
                pass  # ended meanwhile
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"loci import failed ({process.returncode}): {stderr.read()!r}")
        report = json.loads(stdout.read())
    counts = {k: report[k] for k in ("added", "updated", "unchanged", "failed", "skipped")}
    return seconds, peak_kb / 1024, counts


def measure(kind: str, items: int, root: Path, index: bool = True) -> Result:
    export = root / ("export.enex" if kind == "evernote" else "export.zip")
    make = evernote_export if kind == "evernote" else notion_export
    attachments = make(export, items)
    home = root / f"{kind}-home"
    import_s, rss_mb, counts = run_import(home, kind, export)
    loci = build_service(Settings(home=home))
    try:
        brain = loci.brain("bench")
        ids = loci.store.document_ids(brain.id)
        searchable_s = math.nan
        if index:
            started = time.perf_counter()
            loci.library.wait_for(brain, ids, until="searchable")
            searchable_s = time.perf_counter() - started
            word = unique_word(items - 1)
            hits = loci.searching.search(brain, SearchRequest(word, mode="text", limit=3))
            if not hits:
                raise SystemExit(f"{kind}: no text hit for {word!r}, the last item's word")
    finally:
        try:
            loci.store.close()
        except Exception as error:  # the worker's thread still holds it: the process ends
            print(f"  (store left open: {error})", file=sys.stderr)
    return Result(
        kind,
        items,
        attachments,
        export.stat().st_size / 1e6,
        len(ids),
        import_s,
        searchable_s,
        rss_mb,
        counts["added"],
        counts["failed"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--kinds", default="evernote,notion")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="time the import only, not the text stage (a before/after of the import)",
    )
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load {load[0]:.2f} {load[1]:.2f}")
    results = []
    for kind in args.kinds.split(","):
        with tempfile.TemporaryDirectory(
            prefix=f"loci-bench-import-{kind}-", ignore_cleanup_errors=True
        ) as tmp:
            result = measure(kind, args.items, Path(tmp), not args.import_only)
        results.append(result)
        print("\n".join(result.lines()), flush=True)
    load = os.getloadavg()
    print(f"load at the end {load[0]:.2f} {load[1]:.2f}")
    if args.json:
        print(json.dumps([asdict(r) for r in results]))


if __name__ == "__main__":
    main()
