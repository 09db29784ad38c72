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

A stream of new text-stage work that never ends would keep every embedding waiting; a queue
is a burst (a folder added, a sync), so the vectors follow when it has been read.
"""

from __future__ import annotations

# How fast the text stage is assumed to read a file, only to rank jobs by their cost: text
# PDFs parse at ~280 pages/s (~5 MB/s of a typical report), scans and Office files slower.
TEXT_BYTES_PER_S = 2_000_000.0


def queue_order(table: str = "") -> tuple[str, str]:
    """SQL that ranks a job's stage (false: text, first), and the order within one stage;
    `table` qualifies the columns ("j." for jobs aliased j)."""
    return f"({table}stage <> 'text')", f"{table}priority, {table}id"
