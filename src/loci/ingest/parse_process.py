"""Files are read in separate processes whose memory is capped, so no file takes the server down.

A file's bytes are untrusted, and what a parser allocates for them is not proportional to their
size: a 330 KB Word file of one-letter paragraphs, under every budget, grew the process parsing
it by 394 MB, mostly in lxml's C code where no Python limit reaches
(docs/benchmarks-journal.md, "Parse memory"). The budgets on sizes and element counts catch the
known shapes; this bounds the rest.
Every parse of an untrusted file (`parse_file`, and the dry run's looks inside a PDF,
`ocr_pages` and `pdf_pages`) runs in a parse process (`loci.ingest.parse_child`) whose memory is
capped at `ParseBudgets.max_memory_mb` (`LOCI_PARSE_MEMORY_MB`). A file that needs more fails
alone, saying so; its process exits and a new one reads the next file. A process that says
nothing for the parse's time budget (plus the OCR time of the pages it may hold, plus a grace)
is killed, so a parser stuck inside a C call cannot hold a worker either; one that crashes
fails its file only. What comes back is cut to the budgets' `max_text_chars` and `max_blocks`
(`loci.ingest.parsers.trimmed`): that is all of a file the server ever holds.

The processes are started when first needed (an interpreter and the parser modules a file
needs: 0.3–0.6 s of CPU; `prestart` overlaps it with other work), kept and reused: a small file
costs a round trip over a socket, about 1 ms, not a new interpreter. At most `MAX_PROCESSES`
run at once per server process (the worker's two lanes and a dry run), so together they stay
under that many times the cap. They are started with `subprocess` (fork and exec at once), never
by forking the server: it holds threads and ONNX Runtime's pools, which a fork without exec
would copy half-locked. They get the server's environment without Loci's settings.

Recordings are the exception: their words come from the speech-to-text service over HTTP, and
nothing here parses them but their header, so they are transcribed in the calling process.
OCR runs in the parse process: Tesseract as its subprocess (under the same cap), RapidOCR in it.

Answers come back pickled and are unpickled with an allow-list (`loci.models`' parsed document
and builtin values), so a parse process that a hostile file took over still cannot make the
server build arbitrary objects.
"""

from __future__ import annotations

import atexit
import builtins
import io
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import loci
from loci import errors
from loci.errors import BudgetExceeded, LociError, ParseError
from loci.ingest.parse_child import recv_frame, send_frame
from loci.ingest.parsers import ParseBudgets
from loci.ingest.progress import report
from loci.models import ParsedDocument

if TYPE_CHECKING:
    from loci.ingest.plan import FilePlan
    from loci.llm.transcribe import Transcriber

__all__ = [
    "MAX_PROCESSES",
    "ParseProcesses",
    "ocr_pages",
    "parse_file",
    "pdf_pages",
    "prestart",
    "shared_processes",
]

MAX_PROCESSES = 3  # parse processes at once per server process: the worker's two lanes + one
GRACE_S = 10.0  # beyond the parse's own time budget, before its silent process is killed
_STOPPED_FROM_OUTSIDE = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)


def parse_file(
    plan: FilePlan, budgets: ParseBudgets, transcriber: Transcriber | None = None
) -> ParsedDocument:
    """`plan.parse(budgets, transcriber)`, read in a parse process capped at the budget's
    `max_memory_mb` (0: in this process, uncapped)."""
    pool = shared_processes(budgets.max_memory_mb)
    if pool is None or plan.refusal is not None or plan.failure is not None or plan.transcribes:
        return plan.parse(budgets, transcriber)  # raises the refusal, or transcribes
    return pool.parse(plan, budgets)


def ocr_pages(plan: FilePlan, budgets: ParseBudgets) -> tuple[int, ...]:
    """`plan.ocr_pages` (a PDF is opened for it), found in a parse process."""
    pool = shared_processes(budgets.max_memory_mb)
    if pool is None or plan.parser != "pdf":
        return plan.ocr_pages
    return pool.ocr_pages(plan, budgets)


def pdf_pages(data: bytes, budgets: ParseBudgets) -> int:
    """How many pages a PDF has (1 if it cannot be opened), found in a parse process."""
    from loci.ingest.ocr_preview import pdf_page_count

    pool = shared_processes(budgets.max_memory_mb)
    if pool is None:
        return pdf_page_count(data)
    return pool.pdf_pages(data, budgets)


def prestart(budgets: ParseBudgets) -> None:
    """Start a parse process now if none is idle, without waiting for it: its interpreter and
    imports (some 0.3 s of CPU) then overlap with what the caller does before its first parse
    (`loci add` loads the embedder's tokenizer), instead of delaying that parse."""
    pool = shared_processes(budgets.max_memory_mb)
    if pool is not None:
        pool.prestart()


def _fresh(plan: FilePlan) -> FilePlan:
    return replace(plan)  # without what was worked out already (`ocr_pages`): sent smaller


class _Stalled(Exception):
    """The parse process said nothing for the whole allowance."""


class _Ended(Exception):
    """The parse process ended before it answered."""

    def __init__(self, returncode: int | None) -> None:
        super().__init__(returncode)
        self.returncode = returncode


class _Answers(pickle.Unpickler):
    """Unpickles what a parse process answers: builtin values and a parsed document only."""

    _ALLOWED = frozenset(
        [("loci.models", n) for n in ("ParsedDocument", "Block", "Location", "Region")]
        + [("loci.models", "Attachment")]
        + [("datetime", n) for n in ("date", "datetime", "time", "timedelta", "timezone")]
    )

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a parse process may not answer with {module}.{name}")


class _Process:
    """One parse process and its end of the socket; used by one caller at a time."""

    def __init__(self, memory_mb: int) -> None:
        ours, theirs = socket.socketpair()
        root = str(Path(loci.__file__).resolve().parent.parent)  # this very copy of Loci
        level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
        bootstrap = (
            "import sys; sys.path.insert(0, sys.argv[1]);"
            " from loci.ingest.parse_child import main; sys.exit(main(sys.argv[2:]))"
        )
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    bootstrap,
                    root,
                    str(theirs.fileno()),
                    str(memory_mb),
                    level,
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # stdout may be a wire (`loci mcp`, `--json`)
                env=_environment(),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.socket = ours
        self.max_answer = max(memory_mb, 1) * 1024 * 1024  # it cannot build a larger one

    def call(
        self, operation: str, arguments: tuple[Any, ...], allowance_s: float
    ) -> tuple[Any, ...]:
        """Send a request, pass its progress on, and return its answer tuple."""
        self.socket.settimeout(allowance_s)
        try:
            send_frame(self.socket, pickle.dumps((operation, arguments), protocol=5))
            while True:
                frame = recv_frame(self.socket, self.max_answer)
                if frame is None:
                    raise _Ended(self._exit_code())
                with io.BytesIO(frame) as stream:
                    answer = _Answers(stream).load()
                del frame
                if answer[0] != "progress":
                    return tuple(answer)
                report(*answer[1:])  # a page done: the allowance starts again
        except TimeoutError:
            raise _Stalled() from None
        except (BrokenPipeError, ConnectionResetError):
            raise _Ended(self._exit_code()) from None

    def _exit_code(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """Kill the process (if it still runs) and wait for it: nothing is left behind."""
        self.socket.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        """Let an idle process exit by itself (it reads the end of its socket), else kill it."""
        self.socket.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.stop()


def _environment() -> dict[str, str]:
    """The parse process's environment: this one's without Loci's settings (API keys among
    them: reading files needs none, and a process a hostile file took over gets none)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("LOCI_")}
    # glibc gives each thread (OCR's, ONNX Runtime's) an arena of its own: two are plenty, and
    # leave the cap for what a file needs.
    return {**kept, "MALLOC_ARENA_MAX": "2"}


class ParseProcesses:
    """Parse processes with one memory cap: started when needed, reused while healthy, replaced
    when one runs out of memory, is stopped for time, crashes or retires."""

    def __init__(
        self, memory_mb: int, processes: int = MAX_PROCESSES, grace_s: float = GRACE_S
    ) -> None:
        self.memory_mb = memory_mb
        self.grace_s = grace_s
        self._processes = processes
        self._slots = threading.BoundedSemaphore(processes)
        self._lock = threading.Lock()
        self._idle: list[_Process] = []
        self._busy: set[_Process] = set()
        self.started = 0  # processes started so far (tests and benches read it)

    def parse(self, plan: FilePlan, budgets: ParseBudgets) -> ParsedDocument:
        """`plan.parse(budgets)` in a parse process; the plan must neither refuse nor fail."""
        # OCR extends a parse's budget page by page (`Deadline.extend`); a process reports each
        # page it finishes, and the pages still being read when it goes quiet are at most
        # `ocr_processes`.
        ocr = budgets.ocr_seconds_per_page * max(1, budgets.ocr_processes)
        allowance = budgets.timeout_s + (ocr if plan.parser in ("image", "pdf") else 0.0)
        parsed: ParsedDocument = self._run("parse", (_fresh(plan), budgets), allowance)
        return parsed

    def ocr_pages(self, plan: FilePlan, budgets: ParseBudgets) -> tuple[int, ...]:
        pages: tuple[int, ...] = self._run("ocr_pages", (_fresh(plan),), budgets.timeout_s)
        return pages

    def pdf_pages(self, data: bytes, budgets: ParseBudgets) -> int:
        count: int = self._run("pdf_pages", (data,), budgets.timeout_s)
        return count

    def prestart(self) -> None:
        """Start a process if none is idle and there is room: it boots while the caller works."""
        with self._lock:
            if self._idle or len(self._busy) >= self._processes:
                return
            self._idle.append(_Process(self.memory_mb))
            self.started += 1

    def pids(self) -> list[int]:
        """The process ids of the parse processes running now, idle or busy."""
        with self._lock:
            return [p.process.pid for p in [*self._idle, *self._busy]]

    def _run(self, operation: str, arguments: tuple[Any, ...], allowance_s: float) -> Any:
        """The operation's value, computed in a parse process; raises what the parse raised,
        or `BudgetExceeded` when the process ran out of memory or time."""
        with self._slots:
            process = self._take()
            try:
                answer = process.call(operation, arguments, allowance_s + self.grace_s)
            except _Stalled:
                self._drop(process, kill=True)
                raise BudgetExceeded(
                    f"reading this file took longer than its {allowance_s:g} s budget; the"
                    " process reading it was stopped"
                ) from None
            except _Ended as ended:
                self._drop(process, kill=True)
                raise _ended_error(ended.returncode) from None
            except BaseException:
                self._drop(process, kill=True)  # half a conversation: it cannot be reused
                raise
            kind = answer[0]
            if kind == "memory" or answer[-1]:  # it exits after this answer: replaced
                self._drop(process, kill=False)
            else:
                self._give_back(process)
        if kind == "memory":
            raise BudgetExceeded(
                f"reading this file needed more than {self.memory_mb} MB of memory, the"
                " server's limit for one file (LOCI_PARSE_MEMORY_MB); split it into smaller"
                " files, or raise the limit and reprocess it"
            )
        if kind == "error":
            raise _error(answer[1], answer[2])
        return answer[1]

    def close(self) -> None:
        """End every process: idle ones exit, busy ones are killed (their callers fail)."""
        with self._lock:
            idle, busy = self._idle, list(self._busy)
            self._idle, self._busy = [], set()
        for process in idle:
            process.close()
        for process in busy:
            process.stop()

    def _take(self) -> _Process:
        with self._lock:
            while self._idle:
                process = self._idle.pop()
                if process.process.poll() is None:
                    break
                process.stop()  # ended while idle (killed from outside): replaced
            else:
                process = _Process(self.memory_mb)
                self.started += 1
            self._busy.add(process)
            return process

    def _give_back(self, process: _Process) -> None:
        with self._lock:
            self._busy.discard(process)
            self._idle.append(process)

    def _drop(self, process: _Process, *, kill: bool) -> None:
        with self._lock:
            self._busy.discard(process)
        if kill:
            process.stop()
        else:
            process.close()


def _ended_error(returncode: int | None) -> Exception:
    if returncode is not None and returncode < 0:
        number = -returncode
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        if number in _STOPPED_FROM_OUTSIDE:  # not the file's doing, maybe: tried again later
            return ChildProcessError(
                f"the process reading this file was stopped from outside ({name}; the system"
                " may have run out of memory)"
            )
        return ParseError(
            f"the file crashed the program reading it ({name}); open it on your computer to"
            " check it, then add a good copy"
        )
    return ParseError(
        f"the process reading this file ended without an answer (exit status {returncode})"
    )


def _error(name: str, message: str) -> Exception:
    """The exception a parse process reported, rebuilt by name: Loci's own errors keep their
    class (and so their code, and whether a retry may help); builtin ones theirs."""
    found = getattr(errors, name, None)
    if isinstance(found, type) and issubclass(found, LociError):
        try:
            return found(message)
        except TypeError:  # one that takes more than a message: never a parser's
            return LociError(message)
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        return builtin(message)
    return RuntimeError(f"{name}: {message}")


# One set of parse processes per cap for this whole server process: every service, worker lane
# and dry run in it shares them (a test suite builds hundreds of services, a server one).
_pools: dict[int, ParseProcesses] = {}
_pools_lock = threading.Lock()


def shared_processes(memory_mb: int) -> ParseProcesses | None:
    """The parse processes this process uses for `memory_mb` (None: it parses in-process)."""
    if memory_mb <= 0 or os.name != "posix":  # pass_fds and the cap are POSIX's
        return None
    with _pools_lock:
        pool = _pools.get(memory_mb)
        if pool is None:
            pool = _pools[memory_mb] = ParseProcesses(memory_mb)
        return pool


@atexit.register
def _close_all() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


def _forget_after_fork() -> None:
    # A forked copy of this process must not talk to its parent's parse processes.
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
