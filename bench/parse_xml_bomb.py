"""Peak memory and time of parsing Word files at and past the XML element budget.

    .venv/bin/python bench/parse_xml_bomb.py

Each file is parsed in a fresh subprocess, whose peak RSS growth over its baseline (after
imports and a warm-up parse) is printed with the parse's time and outcome: the 63 MB paragraph
bomb of scripts/make_bad_inputs.py (refused), and three shapes just under
`ParseBudgets.max_xml_nodes`, each the worst case of its kind: one-letter paragraphs (four
elements each, one block each), empty paragraphs, and paragraphs heavy with attributes. These
are what "any accepted file parses within 512 MB of the baseline" rests on. Nothing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.make_bad_inputs import budget_shapes  # noqa: E402

from loci.ingest.parsers import ParseBudgets  # noqa: E402

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from loci.errors import ParseError
from loci.ingest.parsers import ParseBudgets, parse
from scripts.make_bad_inputs import docx
parse(docx(), "warm.docx", ParseBudgets())
data = Path(sys.argv[1]).read_bytes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    outcome = f"{len(parse(data, 'x.docx', ParseBudgets()).blocks)} blocks"
except ParseError as exc:
    outcome = exc.message[:60]
print(json.dumps({"mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
                  "s": time.monotonic() - started, "outcome": outcome}))
"""


def main() -> None:
    budget = ParseBudgets().max_xml_nodes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    with tempfile.TemporaryDirectory() as folder:
        for label, data in budget_shapes(budget).items():
            path = Path(folder) / "file.docx"
            path.write_bytes(data)
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, str(path)],
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                check=True,
            )
            m = json.loads(out.stdout)
            print(
                f"{label:28} {len(data) / 1e6:6.1f} MB zip  +{m['mb']:6.0f} MB  {m['s']:6.1f} s  "
                f"{m['outcome']}"
            )


if __name__ == "__main__":
    main()
