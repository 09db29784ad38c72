"""The indexing process's peak memory while hostile Word files are indexed, parse process or not.

    PYTHONPATH=src .venv/bin/python bench/parse_memory_server.py [--caps 0,1024] [--only TEXT]
    PYTHONPATH=src .venv/bin/python bench/parse_memory_server.py --src OLD/src --caps 0

`--src` runs the indexing process on another checkout's code (an older one parses in-process
whatever the setting: the figure before parse processes).

For each file and each `LOCI_PARSE_MEMORY_MB` value (0: parsed in the indexing process itself,
as before parse processes), a fresh subprocess builds the service as `loci serve` does
(`loci.app.build_service`, a new data directory), indexes a warm-up note (the embedding model and
a parse process are loaded), then resets its peak RSS (`/proc/self/clear_refs`) and adds the file
and a small note together, and indexes both to the end as the worker does (`Library.wait_for`).
Printed per run: how far the process's resident memory rose above where it stood before the add
(VmHWM minus VmRSS), the wall time, and each document's outcome. Parse processes are not counted
in the indexing process's figure; their own cap is the setting.

Files: the shapes of bench/parse_xml_bomb.py just under the element budget (one-letter, empty
and attribute-heavy paragraphs), the 63 MB paragraph bomb, a Word file of long text runs
(scripts/make_bad_inputs.py's `long_runs_docx`: 1.3 MB holding 66 MB of text), and one past
both of what a parse hands on (`ParseBudgets.max_text_chars` and `max_blocks`): 60,000
paragraphs of 160 characters. Prints figures
only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_CHILD = """
import json, sys, time
from pathlib import Path
from loci.app import build_service
from loci.config import Settings

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0

home, path, cap = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
loci = build_service(Settings(home=home, parse_memory_mb=cap))
brain = loci.brain("bench")
warm = loci.library.add_bytes(brain, "warm.md", b"# Warm\\n\\nThe keeper logs the weather.\\n")
loci.library.wait_for(brain, [warm.document.id])
data = path.read_bytes()
Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from here
before = status("VmRSS")
started = time.monotonic()
hostile = loci.library.add_bytes(brain, path.name, data)
note = loci.library.add_bytes(brain, "note.md", b"# Tides\\n\\nHigh water at six.\\n")
del data
done = loci.library.wait_for(brain, [hostile.document.id, note.document.id])
print(json.dumps({
    "grown_mb": status("VmHWM") - before,
    "seconds": time.monotonic() - started,
    "outcomes": [(d.status, (d.status_reason or "")[:90]) for d in done],
}))
"""


def _files(folder: Path) -> dict[str, Path]:
    from scripts.make_bad_inputs import budget_shapes, docx, long_runs_docx

    from loci.ingest.parsers import ParseBudgets

    shapes = budget_shapes(ParseBudgets().max_xml_nodes)
    shapes["long text runs (66 MB of text)"] = long_runs_docx()
    # Past both cuts at once: 60,000 paragraphs of 160 characters, words drawn at random.
    pick = random.Random(160)
    words = [
        "keeper",
        "lamp",
        "tide",
        "harbour",
        "weather",
        "boiler",
        "ledger",
        "garden",
        "minutes",
        "ferry",
    ]
    paragraphs = (
        b"<w:p><w:r><w:t>"
        + " ".join(pick.choices(words, k=40)).encode()[:160]
        + b"</w:t></w:r></w:p>"
        for _ in range(60_000)
    )
    shapes["60,000 paragraphs of 160 characters"] = docx(b"".join(paragraphs))
    paths = {}
    for index, (label, data) in enumerate(shapes.items()):
        path = folder / f"file{index}.docx"
        path.write_bytes(data)
        paths[label] = path
    return paths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--caps", default="0,1024", help="LOCI_PARSE_MEMORY_MB values, in turn")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the Loci code to index with")
    parser.add_argument("--only", default="", help="run only files whose label holds this")
    args = parser.parse_args()
    caps = [int(c) for c in args.caps.split(",")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([args.src, str(ROOT)])}
    load = os.getloadavg()
    from loci.embed.calibration import cpu_model

    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load {load[0]:.2f} {load[1]:.2f}")
    print(f"{time.strftime('%Y-%m-%d')}; LOCI_PARSE_MEMORY_MB in turn: {caps}; code: {args.src}")
    with tempfile.TemporaryDirectory() as folder:
        for label, path in _files(Path(folder)).items():
            if args.only not in label:
                continue
            for cap in caps:
                with tempfile.TemporaryDirectory() as home:
                    out = subprocess.run(
                        [sys.executable, "-c", _CHILD, home, str(path), str(cap)],
                        capture_output=True,
                        text=True,
                        env=env,
                        cwd=ROOT,
                    )
                if out.returncode != 0:
                    print(f"{label:32} cap {cap:5}: failed\n{out.stderr[-2000:]}")
                    continue
                m = json.loads(out.stdout.strip().splitlines()[-1])
                outcome = "; ".join(f"{s} {r}".strip() for s, r in m["outcomes"])
                print(
                    f"{label:32} {path.stat().st_size / 1e6:5.2f} MB  cap {cap:5}"
                    f"  +{m['grown_mb']:5.0f} MB  {m['seconds']:6.1f} s  {outcome}"
                )
    load = os.getloadavg()
    print(f"load at the end {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
