"""Following a folder at scale: first sync, indexing, a rescan with nothing changed, and 100 files
edited at once while a watcher and a worker run (docs/benchmarks-journal.md, "Watched folders").

    python bench/sync.py [--files 10000] [--index-docs 1000] [--edits 100] [--checkout 1000]
                         [--database-url URL] [--steps sync,index,rescan,edit,checkout]

1. A generated folder of N files: 70 % Markdown notes of three sections (each its own chunk),
   25 % plain text, 5 % one-page PDFs; words drawn from a fixed vocabulary, every file unique.
2. First sync (`Sources.sync`: walk, read, keep the originals, queue each file's indexing):
   files/s, and the peak resident memory of the process over its baseline (sampled every
   20 ms; the embedding model is not loaded yet).
3. Indexing what it queued — parse, chunk, embed (the shipped local model), index — for the
   first `--index-docs` documents (all with 0): documents and chunks per second.
4. A rescan with nothing changed (`Sources.sync` again): median of 5.
5. `--edits` indexed notes edited at once (the middle section of each rewritten) while a
   `FolderWatcher` and a worker run in threads, as in `loci serve` (the worker takes only the
   edited notes' jobs, not what step 3 left in the queue): the seconds from the
   writes until every one is found by its new words (text search: its text stage done), and
   until every one is fully indexed (ready, its changed passage embedded), against the time
   the embedder takes for their changed chunks alone (the same texts embedded again,
   directly), and how many texts the embedder was asked for during the update (it must be
   the changed chunks only: an unchanged chunk keeps its vector).
6. A `git checkout` that changes `--checkout` files of a repository (a folder of its own) while
   a watcher runs: the seconds until every file is its document again, and the updates the
   watcher made (one per changed file, nothing else).

Steps left out of `--steps` are skipped (`edit` needs `index`; everything needs `sync`).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from loci.app import service_settings
from loci.config import Settings
from loci.embed.base import Embedder, Vectors
from loci.embed.calibration import cpu_model
from loci.embed.local import LocalEmbedder
from loci.models import Brain, Document
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.sources import SourceSync
from loci.service.watching import FolderWatcher, WatchSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore

WORDS = (
    "garden", "kitchen", "meeting", "budget", "report", "invoice", "holiday", "doctor", "school",
    "project", "river", "mountain", "window", "letter", "contract", "supplier", "heating",
    "boiler", "insurance", "tenant", "landlord", "recipe", "lentil", "onion", "cumin", "lemon",
    "harvest", "tulip", "frost", "piano", "lesson", "violin", "concert", "train", "ticket",
    "passport", "museum", "library", "archive", "weekly", "monthly", "annual", "review", "plan",
    "decision", "summary", "draft", "final", "revised", "urgent", "quiet", "careful", "simple",
    "broken", "repaired", "delivered", "ordered", "paid", "overdue", "scheduled", "cancelled",
    "moved", "agreed", "noted", "checked", "morning", "evening", "Tuesday", "Friday", "spring",
    "autumn", "winter", "summer", "north", "south", "harbour", "bridge", "tower", "market",
    "bakery", "pharmacy", "clinic", "office", "studio", "workshop", "cellar", "attic",
)  # fmt: skip


class CountingEmbedder:
    """The real embedder, counting the texts it is asked for (to see what an update costs)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def words_in_pieces(self, text: str) -> int | None:
        return self.inner.words_in_pieces(text)

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return self.inner.embed(texts)


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng, rng.randint(8, 16)) for _ in range(sentences))


def tiny_pdf(lines: Sequence[str]) -> bytes:
    """A one-page PDF with these lines of text (Helvetica), written by hand."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    content = "BT /F1 10 Tf 56 780 Td 13 TL " + " ".join(f"({escape(x)}) '" for x in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
        " /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return out


def note(rng: random.Random, i: int, middle: str | None = None) -> str:
    sections = [paragraph(rng, 6), middle or paragraph(rng, 6), paragraph(rng, 6)]
    heads = ("Context", "Details", "Next steps")
    body = "\n\n".join(f"## {h}\n\n{s}" for h, s in zip(heads, sections, strict=True))
    return f"# Note {i}\n\n{body}\n"


def generate(folder: Path, files: int, seed: int = 11) -> list[Path]:
    """The folder's files; the Markdown notes (the ones the edit step rewrites) first."""
    rng = random.Random(seed)
    notes: list[Path] = []
    for i in range(files):
        where = folder / f"area-{i // 50 % 20:02}" / f"week-{i % 7}"
        where.mkdir(parents=True, exist_ok=True)
        kind = i % 20
        if kind == 0:  # 5 %: PDFs
            lines = [sentence(rng, 10) for _ in range(12)] + [f"Reference {i}."]
            (where / f"scan-{i:05}.pdf").write_bytes(tiny_pdf(lines))
        elif kind <= 5:  # 25 %: plain text
            (where / f"log-{i:05}.txt").write_text(f"Log {i}\n\n{paragraph(rng, 8)}\n")
        else:  # 70 %: Markdown notes
            path = where / f"note-{i:05}.md"
            path.write_text(note(rng, i))
            notes.append(path)
    return notes


def resident() -> int:
    """The process's resident memory in bytes (Linux: /proc/self/statm)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakMemory:
    """The process's resident memory, sampled in a thread: its peak over the start."""

    def __init__(self) -> None:
        self.base = resident()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, resident())

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, resident())


def open_store(home: Path, database_url: str | None) -> Store:
    if database_url:
        from loci.store.postgres import PostgresStore

        return PostgresStore(database_url, pool_size=4)
    return SqliteStore(home / "loci.db")


def mb(n_bytes: float) -> str:
    return f"{n_bytes / 1048576:.0f} MB"


def first_sync(loci: Loci, brain: Brain) -> SourceSync:
    with PeakMemory() as memory:
        started = time.perf_counter()
        (first,) = loci.sources.sync(brain).sources
        elapsed = time.perf_counter() - started
    print(
        f"first sync: {first.added} added, {len(first.failed)} failed in {elapsed:.1f} s —"
        f" {first.added / elapsed:.0f} files/s; peak memory {mb(memory.peak)}"
        f" ({mb(memory.peak - memory.base)} over the {mb(memory.base)} before)",
        flush=True,
    )
    return first


def index(loci: Loci, brain: Brain, queued: list[int]) -> list[Document]:
    with PeakMemory() as memory:
        started = time.perf_counter()
        done = loci.library.wait_for(brain, queued)
        elapsed = time.perf_counter() - started
    chunks = sum(d.chunk_count for d in done)
    print(
        f"indexing {len(done)} of them: {elapsed:.1f} s — {len(done) / elapsed:.1f} docs/s,"
        f" {chunks / elapsed:.1f} chunks/s ({chunks} chunks, embedder loaded in this step);"
        f" {sum(d.status == 'failed' for d in done)} failed; peak memory {mb(memory.peak)}",
        flush=True,
    )
    return done


def rescan(loci: Loci, brain: Brain, files: int, documents: int) -> None:
    rescans = []
    for _ in range(5):
        started = time.perf_counter()
        (again,) = loci.sources.sync(brain).sources
        rescans.append(time.perf_counter() - started)
        assert again.unchanged == documents and not again.queued, again.as_report()
    print(
        f"rescan, nothing changed, {files} files: median {statistics.median(rescans):.2f} s"
        f" (min {min(rescans):.2f}, max {max(rescans):.2f})",
        flush=True,
    )


def edit(
    loci: Loci, brain: Brain, embedder: CountingEmbedder, edited: list[Path], ids: dict[str, int]
) -> None:
    before = {
        ids[str(p)]: {c.text for c in loci.store.list_chunks(brain.id, ids[str(p)])} for p in edited
    }
    # The worker takes only the edited notes' jobs: with `--index-docs` short of all, the rest
    # of the first sync's queue would otherwise come first and be timed with the edits.
    stop = threading.Event()
    only = [ids[str(p)] for p in edited]

    def work() -> None:  # the worker's main lane, as `loci serve` runs it, on these notes only
        runner = loci.library.worker()
        # Idle as `Worker._idle` is (a store without the wait, as before it had one: a poll).
        wait = getattr(loci.store, "wait_for_jobs", None)
        while not stop.is_set():
            if not runner.run_batch(only):
                if wait is not None:
                    wait(runner.settings.idle_sleep_s, stop)
                else:
                    stop.wait(runner.settings.idle_sleep_s)

    worker = threading.Thread(target=work)
    watcher = FolderWatcher(loci.sources, loci.store, WatchSettings(mode="events")).start()
    worker.start()
    time.sleep(3)  # the watcher's first rescan (nothing to do) is over
    rng = random.Random(99)
    old_hashes = {d.id: d.content_hash for d in loci.store.get_documents(brain.id, only)}
    embedder.texts = 0
    started = time.perf_counter()
    for i, path in enumerate(edited):
        middle = f"Edited {i}: the marker zq{i}x is new here. {paragraph(rng, 5)}"
        head, tail = path.read_text().split("## Details", 1)
        rest = tail.split("## Next steps", 1)[1]
        path.write_text(f"{head}## Details\n\n{middle}\n\n## Next steps{rest}")

    # Each note is found by its new words once its text stage is done, and fully indexed
    # (ready: its changed passage embedded too) after its vectors stage. Polled cheaply, as the
    # worker shares this process: a note's state says its new text is indexed (a new content
    # hash, no longer waiting for its text stage) in the same transaction that writes its text
    # index, and each poll reads states only up to the first note still waiting (a note once
    # done stays done), then all of them, in one query, for readiness. Each note is searched
    # for by its new words once, after, to confirm it (a search per note at every poll would
    # take the worker's time and be measured as its own).
    def new_text_indexed(state: Document) -> bool:
        return state.content_hash != old_hashes[state.id] and (
            state.status != "processing" or state.vectors_pending
        )

    waiting = list(only)  # for their new text
    pending = set(only)  # to be ready
    words_at = 0.0
    while pending:
        while waiting and new_text_indexed(loci.store.get_document(brain.id, waiting[0])):
            waiting.pop(0)
        if not waiting:
            words_at = words_at or time.perf_counter() - started
            states = loci.store.get_documents(brain.id, list(pending))
            pending -= {d.id for d in states if d.status == "ready"}
        time.sleep(0.02)
    searchable = time.perf_counter() - started
    missed = [
        i
        for i, path in enumerate(edited)
        if not any(
            h.citation.document_id == ids[str(path)]
            for h in loci.searching.search(brain, SearchRequest(f"zq{i}x", mode="text", limit=3))
        )
    ]
    assert not missed, f"notes not found by their new words: {missed}"
    asked = embedder.texts
    watcher.stop()
    stop.set()
    worker.join()

    changed = [
        c.text
        for doc_id, old in before.items()
        for c in loci.store.list_chunks(brain.id, doc_id)
        if c.text not in old
    ]
    unchanged = sum(
        len(old & {c.text for c in loci.store.list_chunks(brain.id, doc_id)})
        for doc_id, old in before.items()
    )
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        for start in range(0, len(changed), 16):  # the worker's batches
            np.asarray(embedder.inner.embed(changed[start : start + 16]))
        timings.append(time.perf_counter() - started)
    print(
        f"{len(edited)} notes edited at once: all found by their new words after"
        f" {words_at:.2f} s, all fully indexed (ready) after {searchable:.2f} s; embedding"
        f" their {len(changed)} changed chunks alone:"
        f" {statistics.median(timings):.2f} s (median of 3); the embedder was asked for"
        f" {asked} texts during the update; {unchanged} unchanged chunks kept their vectors",
        flush=True,
    )


def checkout(loci: Loci, scratch: Path, count: int) -> None:
    repo = scratch / "repo"
    rng = random.Random(5)
    paths = []
    for i in range(count * 2):
        path = repo / f"part-{i % 10}" / f"page-{i:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note(rng, i))
        paths.append(path)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@example.org", *args],
            cwd=repo, check=True, capture_output=True,
        )  # fmt: skip

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    git("checkout", "-q", "-b", "two")
    for path in paths[:count]:
        path.write_text(path.read_text() + "\nA line added on branch two.\n")
    git("commit", "-q", "-am", "two")
    git("checkout", "-q", "main")
    brain = loci.brain("checkout")
    loci.sources.add(brain, repo)
    watcher = FolderWatcher(loci.sources, loci.store, WatchSettings(mode="events")).start()
    try:
        while watcher.totals["added"] < len(paths):
            time.sleep(0.1)
        started = time.perf_counter()
        git("checkout", "-q", "two")
        checked_out = time.perf_counter() - started
        digests = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
        while {d.source_path: d.content_hash for d in loci.store.documents_under(
            brain.id, str(repo)
        )} != digests:  # fmt: skip
            time.sleep(0.1)
        in_step = time.perf_counter() - started
        time.sleep(3)  # anything later would be a second update
        totals = dict(watcher.totals)
    finally:
        watcher.stop()
    print(
        f"git checkout changing {count} of {len(paths)} files ({checked_out:.1f} s for git):"
        f" every file its document again after {in_step:.1f} s; the watcher made"
        f" {totals['updated']} updates, {totals['added'] - len(paths)} additions,"
        f" {totals['removed']} removals, {totals['failed']} failures",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--index-docs", type=int, default=1000, help="0: index every document")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--checkout", type=int, default=1000)
    parser.add_argument("--database-url", default=None, help="PostgreSQL (default: SQLite)")
    parser.add_argument("--steps", default="sync,index,rescan,edit,checkout")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()},"
        f" {len(os.sched_getaffinity(0))} usable cores; load {os.getloadavg()[0]:.2f};"
        f" {'PostgreSQL' if args.database_url else 'SQLite'}",
        flush=True,
    )
    scratch = Path(tempfile.mkdtemp(prefix="loci-sync-bench-"))
    home = scratch / "home"
    home.mkdir()
    settings = Settings(home=home)
    embedder = CountingEmbedder(LocalEmbedder())
    loci = Loci(
        store=open_store(home, args.database_url),
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: embedder,
        settings=service_settings(settings),
    )
    try:
        if "checkout" in steps:
            checkout(loci, scratch, args.checkout)
        if "sync" not in steps:
            return
        folder = scratch / "folder"
        started = time.perf_counter()
        notes = generate(folder, args.files)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"generated {args.files} files ({mb(size)}) in {time.perf_counter() - started:.1f} s")
        brain = loci.brain("bench")
        loci.sources.add(brain, folder)
        first = first_sync(loci, brain)
        done: list[Document] = []
        if "index" in steps:
            queued = first.queued if args.index_docs == 0 else first.queued[: args.index_docs]
            done = index(loci, brain, queued)
        if "rescan" in steps:
            rescan(loci, brain, args.files, first.added)
        if "edit" in steps and done:
            ids = {
                str(d.source_path): d.id for d in loci.store.documents_under(brain.id, str(folder))
            }
            ready = {d.id for d in done if d.status == "ready" and d.name.endswith(".md")}
            edited = [p for p in notes if ids[str(p)] in ready][: args.edits]
            edit(loci, brain, embedder, edited, ids)
    finally:
        loci.store.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
