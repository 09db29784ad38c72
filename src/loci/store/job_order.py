"""The order the job queue hands out jobs in: the same on both backends.

1. Stage first. The "text" stage of every due job (parse, chunk, write the chunks and their
   text index: the document is found by its words) comes before any "vectors" stage
   (embedding), so a folder of new files is searchable by words before the embedder gets to
   any of them, and a file added while a big one is being embedded waits for at most one
   slice of that embedding (about a second, see `loci.service.index_jobs`). A claim takes jobs
   of one stage only.
2. Then `priority`, the time the job entered its stage plus its estimated cost in seconds
   (smaller first): for the text stage the file's size at `TEXT_BYTES_PER_S`, for the vectors
   stage its chunks still to embed at the embedder's measured rate. Small files therefore go
   ahead of a big one queued at the same time, but not forever: a job that entered its stage
   after the big one's priority goes behind it, so the big one waits at most about its own cost
   (no starvation). A job put back after a slice of embedding keeps its priority.
3. Then the id (first come, first served).

Stage first would let a stream of new files that never ends keep every embedding waiting: the
worker bounds that itself (`WorkerSettings.vectors_wait_s`), taking a batch of due embedding
after a few seconds of reading text in a row.

Short jobs also have a lane of their own (`quick_jobs`): a worker's second thread takes only
index jobs whose stage is short (the text of a small file, the vectors of a document of few
chunks), so a note added while the main lane OCRs a 100-page scan or transcribes an hour of
audio (minutes of one text stage that cannot be cut) is searchable within a second.
"""

from __future__ import annotations

# The stages in the order a claim takes them (1. above).
STAGES = ("text", "vectors")


def claim_order(stage: str | None) -> tuple[str, ...]:
    """The stages a claim looks at, in turn: `stage` alone, or all in order."""
    return STAGES if stage is None else (stage,)


# How fast the text stage is assumed to read a file, only to rank jobs by their cost: text
# PDFs parse at ~280 pages/s (~5 MB/s of a typical report), scans and Office files slower.
TEXT_BYTES_PER_S = 2_000_000.0


def queue_order(table: str = "") -> str:
    """SQL of the order within one stage (`jobs_queued`, migration 32, holds the queued jobs
    so); `table` qualifies the columns ("j." for jobs aliased j)."""
    return f"{table}priority, {table}id"


# The indexing jobs: a document queued when it was added or its content changed, and one
# queued by `loci reindex`, which reads every passage afresh (an edit's unchanged passages keep
# the language they were found in; a reindex detects it again).
INDEX_JOB = "index"
REINDEX_JOB = "reindex"

# The quick lane's jobs: a text stage of at most about half a second (by the file's size, as
# above), a vectors stage of a document of at most this many chunks (about a second of
# embedding at the ~40 chunks/s of the bundled model on two cores).
QUICK_TEXT_BYTES = 1_000_000
QUICK_VECTOR_CHUNKS = 32


def quick_jobs(table: str) -> str:
    """SQL true for a job the quick lane takes: an indexing job whose stage is short, judged by
    its document's size (text) or chunks (vectors). `table` qualifies the job's columns ("j.",
    "jobs."): the documents table has a `kind` of its own."""
    return (
        f"{table}kind IN ('{INDEX_JOB}', '{REINDEX_JOB}') AND EXISTS (SELECT 1 FROM documents d"
        f" WHERE d.id = {table}document_id AND CASE WHEN {table}stage = 'text'"
        f" THEN d.size_bytes <= {QUICK_TEXT_BYTES} ELSE d.chunk_count <= {QUICK_VECTOR_CHUNKS} END)"
    )
