"""Preflight: what adding these files and URLs would do, worked out without writing anything.

Before a large import a person (or an agent) wants to know what will happen: which items are new,
which are already in the brain (and as what), which will be refused or fail and why, whether OCR
will run, whether a recording will be transcribed (and by which model, or why not), and roughly
how many chunks and how long. An agent reads it as one object with a
`status` (ok | warning | error), `warnings`, `errors` and `existing_rows`; Loci adds the items
and the totals.

Each item follows the same steps as `Library.add_*` and the indexer, minus the writes, from the same
plan (`loci.ingest.plan`): its refusal (the size cap, the empty check), the content hash against
the brain (and against the items before it, as a real add would dedupe a file given twice), its
parser and OCR pages, then parse and chunk with the embedder's own token counter — so chunk counts
are exact for anything that does not need OCR. Nothing is embedded; the time is the measured parse
time plus the chunks at the embedder's measured throughput. URLs get the fetcher's address check
first; a refused address is never connected to. An allowed URL is fetched (a GET, as `add` would)
to see what it holds. A recording is never sent to the transcription service in a dry run: it costs
money and minutes, so its chunks are estimated from its length (a WAV's header; others by size at 1
MB a minute).

An item's `outcome` predicts what `add` reports for it:
  add        stored and indexed
  duplicate  already in the brain (or earlier in this batch): nothing new is stored
  fail       stored, but indexing will fail (a file of no known type is kept and marked failed)
  refuse     not stored at all (too large, empty, unreadable, blocked or unfetchable URL)
"""

from __future__ import annotations

import io
import logging
import math
import mimetypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from loci.errors import FileTooLarge, InvalidInput, LociError
from loci.ingest.chunking import chunk_document
from loci.ingest.indexer import CONTEXT_TOKENS
from loci.ingest.parse_process import ocr_pages, parse_file, pdf_pages
from loci.ingest.parsers import ParseBudgets
from loci.ingest.parsers.audio import NOT_CONFIGURED, wav_seconds
from loci.ingest.plan import FilePlan, plan_file
from loci.ingest.size_cap import over_cap
from loci.ingest.sources import clean_name, page_name
from loci.llm.transcribe import check_size
from loci.models import Document
from loci.store.blobs import sha256_hex

if TYPE_CHECKING:
    from loci.ingest.fetch_page import WebPage

log = logging.getLogger(__name__)

__all__ = [
    "LOCAL_EMBED_CHUNKS_PER_S",
    "ChunkRate",
    "embedding_rate",
    "Preflight",
    "PreflightItem",
    "PreflightSettings",
    "Preflighter",
    "OcrPlan",
    "TranscriptionPlan",
    "ocr_needed",
    "summarize",
]

Outcome = Literal["add", "duplicate", "fail", "refuse"]

# Chunks a second assumed when the embedder cannot say how fast it is (a remote embedder before
# its first request) or its calibration fails. The local model measures itself on the machine it
# runs on (`loci.embed.calibration`); this is its rate on the 2-core machine of
# docs/benchmarks-journal.md ("Embedding"), ~190-token SciFact chunks at a load of about 2.
LOCAL_EMBED_CHUNKS_PER_S = 40.0

# What `PreflightSettings.chunks_per_s` takes: a rate, or a way to get one (asked once, on the
# first estimate: the local model's calibration costs a second, for nothing if nothing is added).
ChunkRate = float | Callable[[], float]

# OCR time a page: 1.58 CPU-s measured per scanned page with Tesseract, two OCR processes on two
# cores → ~1.2 pages/s (docs/benchmarks-journal.md, "Scanned vs text PDF"; an estimate from CPU
# time).
OCR_SECONDS_PER_PAGE = 0.8
# Text on a scanned page, for the chunk estimate: a letter page of ~400 words, as in that bench.
OCR_CHARS_PER_PAGE = 2400
CHARS_PER_TOKEN = 4  # for the OCR estimate only; everything else counts real tokens
# Speech, for a recording's chunk estimate: ~150 words a minute, ~1.3 tokens a word; a length
# from the size where no header says it: 1 MB a minute (128 kbit/s MP3, a typical memo app's AAC).
SPOKEN_TOKENS_PER_MINUTE = 200
AUDIO_BYTES_PER_MINUTE = 1024 * 1024


@dataclass(frozen=True)
class TranscriptionPlan:
    """The configured speech-to-text service, as far as a dry run needs to know it."""

    model: str
    max_bytes: int


@dataclass(frozen=True)
class PreflightSettings:
    max_file_bytes: int
    max_chunks: int
    overlap_tokens: int
    budgets: ParseBudgets
    chunks_per_s: ChunkRate = LOCAL_EMBED_CHUNKS_PER_S
    transcription: TranscriptionPlan | None = None  # None: recordings will fail


@dataclass(frozen=True)
class ExistingRef:
    id: int | None  # None: an earlier item of this same batch, not yet stored
    name: str
    status: str | None = None  # the existing document's: "failed" means add reports a failure
    reason: str | None = None  # … and why it failed

    def retry_hint(self) -> str:
        """For a copy that failed: why, and the command that tries it again (adding the same
        bytes does not: they are already there)."""
        why = f": {self.reason}" if self.reason else ""
        return f"; that copy failed{why} — `loci reprocess {self.id}` tries it again"


@dataclass(frozen=True)
class PreflightItem:
    source: str  # the path or URL as given
    outcome: Outcome
    kind: Literal["file", "web"] = "file"
    name: str | None = None
    size_bytes: int | None = None
    media_type: str | None = None
    parser: str | None = None  # the format the parsers read it as: "pdf", "markdown", …
    duplicate_of: ExistingRef | None = None
    # A file already here from the same path, with other bytes: adding updates that document.
    replaces: ExistingRef | None = None
    over_limit: str | None = None
    ocr: bool = False
    ocr_reason: str | None = None
    transcription: str | None = None  # for a recording: the model its words will come from
    chunks: int = 0
    chunks_exact: bool = True  # False: estimated (OCR'd text cannot be counted before OCR)
    seconds: float = 0.0
    address: str | None = None  # for a URL: the addresses it resolves to, all allowed
    rendered: bool = False  # for a URL: its page is rendered in a browser before indexing
    warnings: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class PreflightTotals:
    items: int = 0
    add: int = 0
    duplicate: int = 0
    fail: int = 0
    refuse: int = 0
    new_bytes: int = 0  # what would be stored: items to add and items that will fail
    chunks: int = 0
    ocr: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Preflight:
    status: Literal["ok", "warning", "error"]
    warnings: list[str]
    errors: list[str]
    existing_rows: int  # distinct documents already in the brain that items duplicate
    items: list[PreflightItem]
    totals: PreflightTotals = field(default_factory=PreflightTotals)


@dataclass(frozen=True)
class OcrPlan:
    pages: int  # images or PDF pages OCR will read; 0: none
    reason: str | None  # why OCR runs, or why text that needs it will not be read


def ocr_needed(data: bytes, name: str = "", budgets: ParseBudgets | None = None) -> OcrPlan:
    """Whether ingesting these bytes (named `name`) will run OCR, on how many pages, and why."""
    return _ocr_plan(plan_file(name, data), budgets or ParseBudgets())


def _ocr_plan(plan: FilePlan, budgets: ParseBudgets) -> OcrPlan:
    """OCR as the plan has it (the parser's own test: an image, or a PDF page with too little
    text for its area and an image on it), so the dry run and the add cannot disagree. Without
    an OCR engine nothing runs, and the reason says so."""
    from loci.ingest.ocr import ocr_available

    targets = ocr_pages(plan, budgets)  # a PDF is opened in a parse process
    if not targets:
        return OcrPlan(0, None)
    image = plan.parser == "image"
    if not ocr_available():
        what = "an image" if image else f"{len(targets)} scanned page(s)"
        return OcrPlan(0, f"{what} needs OCR, but no OCR engine is installed: its text is not read")
    if image:
        return OcrPlan(1, "an image: its text comes from OCR")
    shown = ", ".join(map(str, targets[:10])) + (", …" if len(targets) > 10 else "")
    plural = "s" if len(targets) != 1 else ""
    return OcrPlan(len(targets), f"page{plural} {shown} without a text layer")


# A letter page scanned at 200 dpi, as the PDF parser renders scanned pages for OCR.
_PAGE_PIXELS = int(8.5 * 200) * int(11 * 200)


def _image_pages(data: bytes) -> float:
    """How much of a page of text an image can hold, by its pixel count (header only)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except Exception:  # undecodable: the parser reports it with its own reason
        return 1.0
    return min(1.0, width * height / _PAGE_PIXELS)


class Preflighter:
    """Works out one batch's items; remembers hashes so a file given twice is a duplicate."""

    def __init__(
        self,
        settings: PreflightSettings,
        find_by_hash: Callable[[str], Document | None],
        count_tokens: Callable[[str], int],
        max_tokens: int,
        find_by_path: Callable[[str], Document | None] = lambda _path: None,
    ) -> None:
        self._settings = settings
        self._find_by_hash = find_by_hash
        self._find_by_path = find_by_path
        self._count_tokens = count_tokens
        self._chunk_tokens = max_tokens - CONTEXT_TOKENS  # as the indexer chunks
        self._seen: dict[str, str] = {}  # content hash -> name, for this batch
        rate = settings.chunks_per_s
        self._rate: float | None = None if callable(rate) else rate

    def _embed_seconds(self, chunks: int) -> float:
        """How long embedding `chunks` chunks takes; the rate is asked for on the first need."""
        if not chunks:
            return 0.0
        if self._rate is None:
            rate = self._settings.chunks_per_s
            assert callable(rate)  # a number was kept in __init__
            self._rate = rate()
        return chunks / self._rate

    def file(self, path: Path) -> PreflightItem:
        item = PreflightItem(str(path), "refuse", name=clean_name(path.name))
        try:
            size = path.stat().st_size
            # As add_file: refused by its size before it is read.
            refusal = over_cap(item.name or "untitled", size, self._settings.max_file_bytes)
            if refusal is not None:
                return _refused(replace(item, size_bytes=size), refusal)
            data = path.read_bytes()
        except OSError as error:
            return replace(item, error=f"cannot read: {error.strerror}")
        found = self.data(str(path), path.name, data)
        earlier = self._find_by_path(str(path.resolve()))
        if earlier is not None and found.outcome in ("add", "fail"):  # as add_file: updated
            return replace(found, replaces=ExistingRef(earlier.id, earlier.name, earlier.status))
        return found

    def data(
        self,
        source: str,
        name: str,
        data: bytes,
        *,
        kind: Literal["file", "web"] = "file",
        media_type: str | None = None,
        url: str | None = None,
        address: str | None = None,
        rendered: bool = False,
    ) -> PreflightItem:
        name = clean_name(name)
        # The plan `add_bytes` refuses by and the indexer parses by.
        plan = plan_file(
            name,
            data,
            kind=kind,
            mime_type=media_type,
            source_url=url,
            max_bytes=self._settings.max_file_bytes,
        )
        item = PreflightItem(
            source,
            "refuse",
            kind=kind,
            name=name,
            size_bytes=len(data),
            media_type=media_type or mimetypes.guess_type(name)[0],
            address=address,
            rendered=rendered,
        )
        if plan.refusal is not None:
            return _refused(item, plan.refusal)
        digest = sha256_hex(data)
        existing = self._find_by_hash(digest)
        if existing is not None:
            ref = ExistingRef(existing.id, existing.name, existing.status, existing.status_reason)
        elif digest in self._seen:
            ref = ExistingRef(None, self._seen[digest])
        else:
            self._seen[digest] = name
            return self._parsed(item, plan)
        return replace(item, outcome="duplicate", duplicate_of=ref, parser=plan.parser)

    def web(self, source: str, page: WebPage, address: str | None) -> PreflightItem:
        fetched = page.page
        return self.data(
            source,
            page_name(fetched.url, fetched.content_type),
            fetched.body,
            kind="web",
            media_type=fetched.content_type,
            url=fetched.url,
            address=address,
            rendered=page.rendered,
        )

    def upload(
        self, name: str, data: bytes, size: int, media_type: str | None = None
    ) -> PreflightItem:
        """An uploaded file whose `data` may stop past the cap (not read to its end for memory):
        its whole `size` is checked against the cap as `Library.add_upload` checks it."""
        refusal = over_cap(clean_name(name), size, self._settings.max_file_bytes)
        if refusal is not None:
            item = PreflightItem(name, "refuse", name=clean_name(name), size_bytes=size)
            return _refused(item, refusal)
        return self.data(name, name, data, media_type=media_type)

    def _parsed(self, item: PreflightItem, plan: FilePlan) -> PreflightItem:
        stored = replace(item, outcome="fail")  # a parse failure is stored and marked failed
        if plan.failure is not None:
            return replace(stored, error=plan.failure.message)
        stored = replace(stored, parser=plan.parser)
        if plan.transcribes:
            return self._audio(stored, plan.data)
        started = time.monotonic()
        try:
            ocr = _ocr_plan(plan, self._settings.budgets)
            stored = replace(stored, ocr=ocr.pages > 0, ocr_reason=ocr.reason)
            if ocr.pages:
                return self._ocr_estimate(replace(stored, outcome="add"), plan.data, ocr.pages)
            # In a parse process, as the worker reads it (`loci.ingest.parse_process`).
            parsed = parse_file(plan, self._settings.budgets)
        except LociError as error:  # what the worker would record as the failure
            return replace(stored, error=error.message)
        result = chunk_document(
            parsed,
            self._count_tokens,
            max_tokens=self._chunk_tokens,
            overlap_tokens=self._settings.overlap_tokens,
            max_chunks=self._settings.max_chunks,
        )
        chunks = len(result.chunks)
        warnings = list(parsed.warnings)
        if result.truncated:
            warnings.append(f"only the first {self._settings.max_chunks} chunks will be indexed")
        if not chunks:
            warnings.append("no text found in this file")
        seconds = time.monotonic() - started + self._embed_seconds(chunks)
        return replace(
            stored,
            outcome="add",
            chunks=chunks,
            seconds=round(seconds, 2),
            warnings=tuple(warnings),
        )

    def _audio(self, item: PreflightItem, data: bytes) -> PreflightItem:
        plan = self._settings.transcription
        if plan is None:
            return replace(item, error=NOT_CONFIGURED)
        try:
            check_size(len(data), plan.max_bytes)
        except LociError as error:
            return replace(item, error=error.message)
        seconds = wav_seconds(data)
        minutes = seconds / 60 if seconds is not None else len(data) / AUDIO_BYTES_PER_MINUTE
        tokens = minutes * SPOKEN_TOKENS_PER_MINUTE
        chunks = min(self._settings.max_chunks, max(1, math.ceil(tokens / self._chunk_tokens)))
        length = f"{seconds / 60:.1f} min" if seconds is not None else "length unknown"
        warning = (
            f"a recording ({length}): its words come from the transcription service"
            f" ({plan.model}); chunks and time are estimates, transcription time not included"
        )
        return replace(
            item,
            outcome="add",
            transcription=plan.model,
            chunks=chunks,
            chunks_exact=False,
            seconds=round(self._embed_seconds(chunks), 2),
            warnings=(warning,),
        )

    def _ocr_estimate(self, item: PreflightItem, data: bytes, ocr_pages: int) -> PreflightItem:
        # Parsing would run the OCR itself, so nothing is parsed: every PDF page is counted as a
        # full page of text (text-layer pages too), which errs on the high side; an image as
        # the share of a page its pixels make.
        if item.parser == "pdf":
            pages = float(max(ocr_pages, pdf_pages(data, self._settings.budgets)))
        else:
            pages = _image_pages(data)
        tokens = pages * OCR_CHARS_PER_PAGE / CHARS_PER_TOKEN
        chunks = min(self._settings.max_chunks, max(1, math.ceil(tokens / self._chunk_tokens)))
        seconds = ocr_pages * OCR_SECONDS_PER_PAGE + self._embed_seconds(chunks)
        plural = "s" if ocr_pages != 1 else ""
        warning = f"OCR of {ocr_pages} page{plural}: chunks and time are estimates"
        return replace(
            item,
            chunks=chunks,
            chunks_exact=False,
            seconds=round(seconds, 2),
            warnings=(warning,),
        )


def embedding_rate(embedder: object) -> float:
    """The embedder's own measured rate (`chunks_per_s()`, if it has one and it works), else
    `LOCAL_EMBED_CHUNKS_PER_S`: an estimate must never be the reason a dry run fails."""
    measured = getattr(embedder, "chunks_per_s", None)
    if not callable(measured):
        return LOCAL_EMBED_CHUNKS_PER_S
    try:
        rate = measured()
    except LociError as error:
        log.warning(
            "cannot measure the embedder's speed (%s); estimating at %.0f chunks/s",
            error.message,
            LOCAL_EMBED_CHUNKS_PER_S,
        )
        return LOCAL_EMBED_CHUNKS_PER_S
    if isinstance(rate, int | float) and 0 < rate < math.inf:
        return float(rate)
    return LOCAL_EMBED_CHUNKS_PER_S


def _refused(item: PreflightItem, refusal: InvalidInput) -> PreflightItem:
    """Not stored at all, with the very error `add` raises; over the cap, it is `over_limit`."""
    over = refusal.message if isinstance(refusal, FileTooLarge) else None
    return replace(item, outcome="refuse", over_limit=over, error=refusal.message)


def summarize(items: Sequence[PreflightItem]) -> Preflight:
    """The preflight object over the items: an item that will be refused or fail is an
    error (the others still go ahead, as with `add`); duplicates and item warnings are warnings."""
    errors = [f"{item.source}: {item.error}" for item in items if item.error]
    warnings: list[str] = []
    existing: set[int] = set()
    for item in items:
        ref = item.duplicate_of
        if ref is not None:
            if ref.id is not None:
                existing.add(ref.id)
                if ref.status == "failed":
                    state = ref.retry_hint()
                else:
                    state = f" ({ref.status})" if ref.status not in (None, "ready") else ""
                warnings.append(
                    f"{item.source}: already in this brain as #{ref.id} {ref.name}{state}"
                )
            else:
                warnings.append(
                    f"{item.source}: the same content as {ref.name} earlier in this batch"
                )
        warnings.extend(f"{item.source}: {warning}" for warning in item.warnings)
    adding = [item for item in items if item.outcome == "add"]
    stored = [item for item in items if item.outcome in ("add", "fail")]
    totals = PreflightTotals(
        items=len(items),
        add=len(adding),
        duplicate=sum(item.outcome == "duplicate" for item in items),
        fail=sum(item.outcome == "fail" for item in items),
        refuse=sum(item.outcome == "refuse" for item in items),
        new_bytes=sum(item.size_bytes or 0 for item in stored),
        chunks=sum(item.chunks for item in adding),
        ocr=sum(item.ocr for item in adding),
        seconds=round(sum(item.seconds for item in adding), 2),
    )
    status: Literal["ok", "warning", "error"] = (
        "error" if errors else "warning" if warnings else "ok"
    )
    return Preflight(status, warnings, errors, len(existing), list(items), totals)
