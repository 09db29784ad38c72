"""How fast the local model embeds on this machine, measured once and kept on disk.

The dry run of `add` estimates its time from the embedder's throughput, which depends on the CPU
(its model, its cores) far more than on anything Loci can know in advance: a constant measured on
one machine was off by half on the next. So the first estimate embeds a fixed set of passages of
the length Loci's chunks have (about a second) and keeps the rate under the data directory's
cache folder, keyed by the model file's hash, the CPU model and the thread count: another model
file or another machine measures again. Like the transcripts beside it this is derived data;
deleting it costs one more calibration. Writes go to a temporary name and are renamed into place;
an unreadable entry is ignored and replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loci.private_files import write_json

log = logging.getLogger(__name__)

FORMAT = 2  # 2: passages of the lengths Loci's chunks have (1: all of ~210 tokens)

# 32 passages with the token lengths of Loci's real chunks: the worker's time goes to those, and
# a model call costs more than linearly in its length (attention). Measured with
# bench/embed_throughput.py on SciFact notes, the repository's Markdown and two PDF manuals:
# 160-178 tokens on average (with [CLS]/[SEP]); p10 72-107, median 174-194, p90 213-224. The
# word counts below give 84, 146, 187, 212 and 222 tokens (mean 169 over the 32). Made from one
# fixed paragraph so every machine measures the same work.
_PARAGRAPH = (
    "Retrieval augmented generation pairs a search index with a language model so that answers "
    "cite the passages they came from. Documents are parsed, split into chunks that respect "
    "headings and sentences, embedded into vectors and stored beside a full-text index. A query "
    "runs both legs, fuses the rankings and returns the best passages with their page and line. "
    "Measurements of fifteen patients showed a median reduction of 42% in serum levels after "
    "twelve weeks (p < 0.01), consistent with earlier cohort studies of the same pathway."
)
_WORD_COUNTS = (70, 120, 154, 172, 182)
CALIBRATION_TEXTS = 32


def calibration_texts() -> list[str]:
    words = _PARAGRAPH.split()
    texts = []
    for i in range(CALIBRATION_TEXTS):
        # Rotations of the paragraph: different token sequences of the chosen lengths.
        start = i % len(words)
        rotated = (words[start:] + words[:start]) * 3
        texts.append(" ".join(rotated[: _WORD_COUNTS[i % len(_WORD_COUNTS)]]))
    return texts


def cpu_model() -> str:
    """The CPU's model name (`/proc/cpuinfo` on Linux), or the platform's best description."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Processor", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


@dataclass(frozen=True)
class Calibration:
    chunks_per_s: float
    model_sha256: str
    cpu: str
    threads: int
    measured_at: float  # Unix time


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class CalibrationCache:
    """One JSON file per (model file, CPU, threads) in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_for(self, model_sha256: str, cpu: str, threads: int) -> Path:
        key = f"{FORMAT}\0{model_sha256}\0{cpu}\0{threads}".encode()
        return self.folder / f"{hashlib.sha256(key).hexdigest()[:32]}.json"

    def rate(
        self,
        model_sha256: str,
        threads: int,
        embed: Callable[[Sequence[str]], object],
    ) -> Calibration:
        """The cached rate for this model, CPU and thread count, or a fresh measurement."""
        cpu = cpu_model()
        path = self.path_for(model_sha256, cpu, threads)
        cached = _read(path, model_sha256, cpu, threads)
        if cached is not None:
            return cached
        fresh = measure(embed, model_sha256, cpu, threads)
        try:
            _write(path, fresh)
        except OSError:  # a full or read-only disk: the rate still serves this process
            log.warning(
                "could not keep the embedding calibration in %s", path.parent, exc_info=True
            )
        return fresh


def measure(
    embed: Callable[[Sequence[str]], object], model_sha256: str, cpu: str, threads: int
) -> Calibration:
    texts = calibration_texts()
    embed(texts[:2])  # loads the model: not part of the rate
    started = time.perf_counter()
    embed(texts)
    elapsed = max(time.perf_counter() - started, 1e-6)
    rate = len(texts) / elapsed
    log.info("calibrated the local embedder: %.1f chunks/s on %s (%d threads)", rate, cpu, threads)
    return Calibration(rate, model_sha256, cpu, threads, time.time())


def _read(path: Path, model_sha256: str, cpu: str, threads: int) -> Calibration | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        found = Calibration(
            chunks_per_s=float(raw["chunks_per_s"]),
            model_sha256=str(raw["model_sha256"]),
            cpu=str(raw["cpu"]),
            threads=int(raw["threads"]),
            measured_at=float(raw["measured_at"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        log.warning("ignoring the unreadable embedding calibration %s", path.name)
        return None
    if (found.model_sha256, found.cpu, found.threads) != (model_sha256, cpu, threads):
        return None  # a hash collision on the file name, or a hand-edited file
    if not found.chunks_per_s > 0 or found.chunks_per_s == float("inf"):
        log.warning("ignoring the embedding calibration %s: no usable rate", path.name)
        return None
    return found


def _write(path: Path, calibration: Calibration) -> None:
    write_json(path, calibration.__dict__)
