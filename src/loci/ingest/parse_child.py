"""The parse process's own side: reads files in a process whose memory is capped.

    python -m loci.ingest.parse_child FD MEMORY_MB LOG_LEVEL

`loci.ingest.parse_process` starts this module with one end of a socket pair as FD, and sends it
requests one at a time. The cap is set before any parser is imported, so it bounds the whole
process: the interpreter, the parser libraries and whatever one file makes them allocate (lxml
and PDFium allocate outside Python, where no Python-level limit reaches). It is the kernel's
RLIMIT_DATA: the memory the process can write to (heap and private mappings), which is what a
file can make it allocate, not the address space it merely reserves (RLIMIT_AS counted 1.1 GB
for RapidOCR reading one photo whose resident peak was 550 MB, and so refused it at 1 GB).
Past the cap an allocation fails: Python raises MemoryError, libxml2 reports ERR_NO_MEMORY, and
this process answers that the file needed more, then exits, so the memory it grew to is returned
to the system and a fresh process reads the next file.

The wire is frames: an 8-byte big-endian length, then a pickle. A request is `(operation,
arguments)`; while it runs, `("progress", stage, done, total)` frames may come back, then one
answer: `("ok", value, retiring)`, `("error", class name, message, retiring)` or `("memory",)`.
`retiring` says this process exits after the answer: it still holds more than half its cap once
what was freed is given back (`malloc_trim`), so a fresh process is smaller. One that loaded
RapidOCR (some 350 MB after a photo) is kept, so the next photo does not load its models again.
Replies carry only builtin values and `loci.models` dataclasses: the parent unpickles them with
an allow-list.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import pickle
import signal
import socket
import struct
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

_HEADER = struct.Struct("!Q")
NEAR_CAP = 0.9  # a failure whose resident peak came this close to the cap is the cap's doing


def send_frame(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_HEADER.pack(len(payload)))
    sock.sendall(payload)


def recv_frame(sock: socket.socket, max_bytes: int) -> bytearray | None:
    """The next frame's payload; None at the end of the stream (the other side is gone)."""
    header = _recv_exactly(sock, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > max_bytes:
        raise ValueError(f"a frame of {size} bytes, over the {max_bytes} allowed")
    return _recv_exactly(sock, size)


def _recv_exactly(sock: socket.socket, size: int) -> bytearray | None:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            return None
        got += n
    return buffer


def _cap(memory_mb: int) -> None:
    import resource

    limit = memory_mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    except (ValueError, OSError):  # a system that does not allow it: the time budget alone
        log.warning("cannot cap the parse process's memory at %d MB here", memory_mb)
    # A crash while reading a hostile file leaves no core file of its contents behind.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _still_large(memory_mb: int) -> bool:
    """Whether this process holds more than half its cap, after giving back what glibc keeps
    of freed memory (a parse of a large file leaves hundreds of MB mapped but unused)."""
    limit = (memory_mb or 1024) / 2
    if _resident_mb() <= limit:
        return False
    with contextlib.suppress(OSError, AttributeError):  # not glibc: no trim, just retire
        ctypes.CDLL(None).malloc_trim(0)
    return _resident_mb() > limit


def _resident_mb() -> float:
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    import resource

    return pages * resource.getpagesize() / (1024 * 1024)


def _reset_peak() -> None:
    """Start the resident peak (VmHWM) again from now, so it tells about this request alone."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


def _peak_mb() -> float:
    """The most resident memory this process had since `_reset_peak` (VmHWM)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _near_cap(memory_mb: int) -> bool:
    return memory_mb > 0 and _peak_mb() >= NEAR_CAP * memory_mb


def _out_of_memory(error: BaseException | None) -> bool:
    """Whether the failure came from an allocation the cap refused: a MemoryError anywhere in
    its chain (parsers wrap what they catch), or libxml2's ERR_NO_MEMORY, which lxml raises
    as a syntax error ("unknown error") and a parser reports as a corrupt file."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, MemoryError):
            return True
        entries = getattr(error, "error_log", None) or ()
        if any(getattr(entry, "type_name", "") == "ERR_NO_MEMORY" for entry in entries):
            return True
        error = error.__cause__ or error.__context__
    return False


def _failure(error: Exception, memory_mb: int) -> tuple[Any, ...]:
    from loci.errors import LociError

    # A failure at the cap is taken for the cap's doing (PDFium, say, reports a failed
    # allocation as a broken file): the reason then says what to change.
    if _out_of_memory(error) or _near_cap(memory_mb):
        return ("memory",)
    if isinstance(error, LociError):  # by the class of Loci's error tree it is, for the parent
        tree = next(c for c in type(error).__mro__ if c.__module__ == "loci.errors")
        return ("error", tree.__name__, error.message)
    return ("error", type(error).__name__, str(error)[:1000])


def _parse(plan: Any, budgets: Any) -> Any:
    return plan.parse(budgets)


def _ocr_pages(plan: Any) -> tuple[int, ...]:
    return tuple(plan.ocr_pages)


def _pdf_pages(data: bytes) -> int:
    from loci.ingest.ocr_preview import pdf_page_count

    return pdf_page_count(data)


OPERATIONS: dict[str, Callable[..., Any]] = {
    "parse": _parse,
    "ocr_pages": _ocr_pages,
    "pdf_pages": _pdf_pages,
}


def serve(sock: socket.socket, memory_mb: int) -> None:
    from loci.ingest.progress import reporting

    lock = threading.Lock()  # progress may be told from a parser's side thread

    def progress(stage: str, done: int, total: int) -> None:
        with lock:
            send_frame(sock, pickle.dumps(("progress", stage, done, total)))

    while True:
        request = recv_frame(sock, 1 << 40)
        if request is None:
            return  # the parent closed its end, or is gone
        operation, arguments = pickle.loads(request)
        del request
        _reset_peak()
        answer: tuple[Any, ...]
        try:
            with reporting(progress):
                value = OPERATIONS[operation](*arguments)
            del arguments
            answer = ("ok", value)
        except Exception as error:  # noqa: BLE001 — MemoryError, or a parser's bug: this file alone
            answer = _failure(error, memory_mb)
        memory = answer[0] == "memory"
        retiring = memory or _still_large(memory_mb)
        try:
            payload = pickle.dumps(answer + (() if memory else (retiring,)), protocol=5)
        except MemoryError:  # the text read is too large to send within the cap
            payload, memory, retiring = pickle.dumps(("memory",)), True, True
        del answer
        with lock:
            send_frame(sock, payload)
        if retiring:
            return


def main(argv: list[str]) -> int:
    """`argv`: the socket's file descriptor, the cap in MB (0: none) and the log level."""
    fd, memory_mb, level = int(argv[0]), int(argv[1]), argv[2]
    # Ctrl-C in a terminal reaches the whole process group: the server decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s (parse process): %(message)s"
    )
    if memory_mb > 0:
        _cap(memory_mb)
    sock = socket.socket(fileno=fd)
    try:
        serve(sock, memory_mb)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the parent went away mid-answer: nobody is left to read it
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
