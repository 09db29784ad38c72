"""One file's parse cannot take the process down: a Word file of millions of tiny paragraphs
(1.2 MB zipped, 63 MB of XML, under the size and ratio budgets) took 1.4 GB and two minutes to
parse; it now fails at once with the element budget's reason, within 512 MB of the baseline.

Peak memory is measured in a child process (its `ru_maxrss`, after imports and a warm-up
parse), because lxml allocates outside Python's allocator, where tracemalloc cannot see, and
the test process's own peak is set by whatever ran before. The child also limits its address
space, so a regression fails with MemoryError instead of exhausting a shared machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripts.make_bad_inputs import paragraph_bomb_docx

from tests.support.paths import REPO

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md


_CHILD = """
import json, resource, sys, time
from pathlib import Path
from tests.support.paths import REPO
from loci.errors import ParseError
from loci.ingest.parsers import ParseBudgets, parse
from scripts.make_bad_inputs import docx

def vm_bytes():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0

normal = parse(docx(), "normal.docx", ParseBudgets()).text  # imports and first use: baseline
if vm_bytes():
    limit = vm_bytes() + 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
data = Path(sys.argv[1]).read_bytes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    parse(data, "bomb.docx", ParseBudgets())
    reason = None
except ParseError as exc:
    reason = exc.message
except MemoryError:
    reason = "MemoryError"
seconds = time.monotonic() - started
grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"normal": normal, "reason": reason, "grown_mb": grown_kb / 1024,
                  "seconds": seconds}))
"""


def test_a_docx_of_millions_of_tiny_paragraphs_fails_alone_within_the_memory_budget(
    tmp_path: Path,
) -> None:
    bomb = tmp_path / "paragraphs.docx"
    bomb.write_bytes(paragraph_bomb_docx())
    assert bomb.stat().st_size < 2 * 1024 * 1024  # small on disk, under every older budget

    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(bomb)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])},
    )
    assert result.returncode == 0, result.stderr
    measured = json.loads(result.stdout)
    assert measured["normal"] == "The keeper logs the weather."  # a normal DOCX still parses
    assert measured["reason"] is not None, "the bomb parsed"
    assert "more than 2,000,000 XML elements" in measured["reason"]
    assert "Loci reads at most 2,000,000" in measured["reason"]
    assert measured["grown_mb"] < 512, measured
    assert measured["seconds"] < 10, measured
