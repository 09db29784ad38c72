"""Files are read in parse processes capped in memory (`loci.ingest.parse_process`): a file that
needs more fails alone with that reason, its process is replaced, and the server's own memory
is untouched. A 330 KB Word file of 495,000 one-letter paragraphs (just under the element
budget) grew the indexing process by 394 MB when it was parsed there (docs/benchmarks-journal.md).

The server's peak is read from the kernel (VmHWM of `loci serve`, reset just before the batch
through /proc/PID/clear_refs), since its parse processes are its children and their memory is
not its own."""

from __future__ import annotations

import io
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from scripts.make_bad_inputs import budget_shapes

from loci.config import Settings
from loci.errors import BudgetExceeded, ParseError
from loci.ingest.parse_process import ParseProcesses, _Answers, parse_file
from loci.ingest.parsers import ParseBudgets, trimmed
from loci.ingest.plan import FilePlan, plan_file
from loci.models import Block, ParsedDocument
from tests.support.cli import run_cli
from tests.support.live_server import free_port
from tests.support.waiting import wait_up

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

CAP_MB = 256  # the parse processes' cap in these tests: the hostile file needs more
SERVER_GROWTH_MB = 128  # what the server may grow by while the batch is indexed


def _hostile() -> bytes:
    """One-letter paragraphs just under the element budget: 330 KB, parsed within the budgets."""
    return budget_shapes(ParseBudgets().max_xml_nodes)["tiny paragraphs at budget"]


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for process {pid}")


def _settled(api: httpx.Client, brain: str, document_id: int) -> dict[str, object]:
    deadline = time.monotonic() + 180
    while True:
        doc: dict[str, object] = api.get(f"/brains/{brain}/files/{document_id}").json()
        if doc["status"] != "processing":
            return doc
        assert time.monotonic() < deadline, f"document {document_id} was never settled"
        time.sleep(0.1)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], httpx.Client]]:
    """`loci serve` in a subprocess of its own, its parse processes capped at CAP_MB."""
    home, port = tmp_path / "home", free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "LOCI_HOME": str(home), "LOCI_PARSE_MEMORY_MB": str(CAP_MB)}
    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "loci", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
    try:
        wait_up(url, process)
        token = (home / "owner-token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url + "/api/v1", headers=headers, timeout=60) as api:
            yield process, api
    finally:
        process.terminate()
        process.wait(timeout=60)


def test_a_file_that_needs_more_memory_fails_alone_and_the_server_stays_small(
    serve: tuple[subprocess.Popen[str], httpx.Client],
) -> None:
    process, api = serve
    assert api.post("/brains", json={"name": "house"}).status_code == 201
    # Warm up: the embedding model and a parse process are loaded before the peak is reset.
    warm = api.post("/brains/house/notes", json={"text": "The boiler is in the loft."})
    assert _settled(api, "house", warm.json()["document"]["id"])["status"] == "ready"
    Path(f"/proc/{process.pid}/clear_refs").write_text("5")  # VmHWM starts again from here
    before = _status_mb(process.pid, "VmRSS")

    files = [
        ("files", ("paragraphs.docx", _hostile())),
        ("files", ("tides.md", b"# Tides\n\nHigh water at the harbour is at six.\n")),
    ]
    results = api.post("/brains/house/files", files=files).json()["results"]
    hostile, note = (_settled(api, "house", r["document"]["id"]) for r in results)

    assert hostile["status"] == "failed"
    assert f"needed more than {CAP_MB} MB of memory" in str(hostile["status_reason"])
    assert "LOCI_PARSE_MEMORY_MB" in str(hostile["status_reason"])
    assert note["status"] == "ready", note["status_reason"]
    hits = api.post("/brains/house/search", json={"query": "high water harbour"}).json()["hits"]
    assert hits and hits[0]["name"] == "tides.md"
    grown = _status_mb(process.pid, "VmHWM") - before
    assert grown < SERVER_GROWTH_MB, f"the server grew by {grown:.0f} MB"
    assert process.poll() is None  # still serving


def test_a_dry_run_reads_the_file_in_a_parse_process_too(tmp_path: Path) -> None:
    path = tmp_path / "paragraphs.docx"
    path.write_bytes(_hostile())
    env = {"LOCI_PARSE_MEMORY_MB": str(CAP_MB)}
    dry = run_cli("add", "--dry-run", str(path), "--json", home=tmp_path / "home", env=env)
    (item,) = json.loads(dry.stdout)["items"]
    assert item["outcome"] == "fail"
    assert f"needed more than {CAP_MB} MB of memory" in item["error"]


def _plan(text: str = "The keeper logs the weather.") -> FilePlan:
    return plan_file("note.md", f"# Log\n\n{text}\n".encode())


def test_a_parse_process_that_says_nothing_is_stopped_and_replaced() -> None:
    processes = ParseProcesses(CAP_MB, grace_s=0.5)
    try:
        budgets = ParseBudgets(timeout_s=0.5)
        assert "keeper" in processes.parse(_plan(), budgets).text
        (stuck,) = processes.pids()
        os.kill(stuck, signal.SIGSTOP)  # as a parser stuck inside a C call: no word, no end
        with pytest.raises(BudgetExceeded, match="took longer than its 0.5 s budget"):
            processes.parse(_plan("lamp"), budgets)
        assert not Path(f"/proc/{stuck}").exists()  # killed and reaped
        assert "tide" in processes.parse(_plan("tide"), budgets).text
        assert processes.pids() != [stuck] and processes.started == 2
    finally:
        processes.close()


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_a_parse_process_that_crashes_fails_its_file_alone() -> None:
    processes = ParseProcesses(1024)
    try:
        budgets = ParseBudgets()
        processes.parse(_plan(), budgets)
        (crashing,) = processes.pids()
        idle = _cpu_ticks(crashing)
        failure: list[BaseException] = []

        def parse() -> None:
            try:  # seconds of work: the crash comes while it is being read
                processes.parse(plan_file("paragraphs.docx", _hostile()), budgets)
            except BaseException as error:  # noqa: BLE001 — kept for the assertion
                failure.append(error)

        reader = threading.Thread(target=parse)
        reader.start()
        deadline = time.monotonic() + 60
        while _cpu_ticks(crashing) == idle:  # it has taken the file up
            assert time.monotonic() < deadline, "the parse process never started reading"
            time.sleep(0.01)
        os.kill(crashing, signal.SIGSEGV)  # as a parser's C code would crash on a hostile file
        reader.join(timeout=60)
        (error,) = failure
        assert isinstance(error, ParseError)
        assert "crashed the program reading it (SIGSEGV)" in str(error)
        assert "tide" in processes.parse(_plan("tide"), budgets).text  # a new process reads on
        assert crashing not in processes.pids()
    finally:
        processes.close()


def test_a_parse_process_answers_with_a_parsed_document_only() -> None:
    parsed = ParsedDocument("Log", (Block("paragraph", "The keeper logs the weather."),))
    assert _Answers(io.BytesIO(pickle.dumps(("ok", parsed, False)))).load()[1] == parsed
    # A parse process a hostile file took over cannot make the server call anything.
    with pytest.raises(pickle.UnpicklingError, match="may not answer with posix.system"):
        _Answers(io.BytesIO(pickle.dumps(("ok", os.system)))).load()


def test_what_a_parse_hands_on_is_cut_to_its_budget_with_a_warning() -> None:
    blocks = tuple(Block("paragraph", f"line {i}") for i in range(10))
    parsed = ParsedDocument(None, blocks, warnings=("kept",))
    assert trimmed(parsed, ParseBudgets()) is parsed
    few = trimmed(parsed, ParseBudgets(max_blocks=3))
    assert few.blocks == blocks[:3]
    assert few.warnings == ("kept", "only its first 3 paragraphs were kept: the file holds more")
    short = trimmed(parsed, ParseBudgets(max_text_chars=18))
    assert short.text == "line 0\n\nline 1\n\nli"  # 18 characters, the third block cut
    assert "only the first 18 characters of its text were kept" in short.warnings[-1]


def test_the_cap_is_a_setting() -> None:
    assert Settings().parse_memory_mb == 1024
    assert Settings(parse_memory_mb=0).parse_memory_mb == 0  # in the server's process
    with pytest.raises(ValueError, match="at least 256 MB"):
        Settings(parse_memory_mb=100)


def test_telling_a_zip_apart_never_reads_a_huge_directory_in_the_server() -> None:
    # Which format a zip is, is decided in the server (adding a file, planning its parse) from
    # its member names: a directory of 100,000 empty members is not read into memory there.
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", b"<Types/>")
        archive.writestr("word/document.xml", b"<w:document/>")
        for i in range(100_000):
            archive.writestr(zipfile.ZipInfo(f"{i:x}"), b"")
    data = buffer.getvalue()
    tracemalloc.start()
    try:
        plan = plan_file("many.docx", data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert plan.parser == "docx"
    assert peak < 8 * 1024 * 1024, f"{peak / 1e6:.0f} MB to tell the format"  # 52 MB before
    with pytest.raises(BudgetExceeded, match="more than 10,000 parts"):
        parse_file(plan, ParseBudgets(max_memory_mb=CAP_MB))
