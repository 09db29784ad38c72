"""How long a command that queued indexing waits before it returns, the same for every command
(`add`, `note`, `sync`, `reprocess`, `reindex`, `versions restore`, the `brain` writes):

- by default, until its documents are found by their words when a worker runs on this
  database (`loci serve`, `loci worker`: it writes their vectors), and until they are fully
  indexed when none does (this process embeds them too);
- `--wait`: until they are fully indexed (ready, or failed) even with a worker running; this
  process then shares the embedding with it;
- `--no-wait`: at once; a worker indexes them later.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated

import typer

from loci.cli.context import service
from loci.cli.output import err
from loci.models import Brain, Document, WaitUntil

WaitOption = Annotated[
    bool | None,
    typer.Option(
        "--wait/--no-wait",
        help="--wait: return once fully indexed, vectors too; --no-wait: return at once (a "
        "worker indexes later). Default: once searchable by words when `loci serve` or `loci "
        "worker` runs (it writes the vectors), else fully indexed.",
        show_default=False,
    ),
]

PENDING_NOTE = "vectors pending: the running worker embeds them (`loci list` shows progress)"


def wait_until(wait: bool | None) -> WaitUntil | None:
    """How far to wait (None: not at all) for what `--wait`/`--no-wait` said, or neither."""
    if wait is False:
        return None
    if wait is True:
        return "ready"
    return "searchable" if service().library.workers_running() else "ready"


def index_now(
    brain: Brain,
    document_ids: Sequence[int],
    wait: bool | None,
    on_progress: Callable[[list[Document]], None] | None = None,
) -> list[Document] | None:
    """Index the documents in this process as far as `wait` says; their rows as they are
    then, or None when there was nothing to wait for. Says on stderr when vectors are left to
    the running worker."""
    until = wait_until(wait)
    if until is None or not document_ids:
        return None
    docs = service().library.wait_for(brain, document_ids, on_progress, until=until)
    if until == "searchable" and any(d.vectors_pending for d in docs):
        err.print(PENDING_NOTE)
    return docs
