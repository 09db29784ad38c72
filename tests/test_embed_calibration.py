"""The local embedder's throughput, measured on this machine and kept under the cache folder.

`loci add --dry-run` estimates its time from it: measured on the first estimate (not at start-up,
not for a dry run with nothing to embed), reused while the model file, the CPU and the thread
count stay the same, measured again when any of them changes or the kept file is unreadable.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

from loci.embed.calibration import CalibrationCache, calibration_texts, cpu_model, file_sha256
from loci.embed.local import LocalEmbedder
from loci.embed.openai_compat import OpenAICompatibleEmbedder
from loci.ingest.preflight import LOCAL_EMBED_CHUNKS_PER_S, embedding_rate
from tests.support.cli import run_cli
from tests.support.paths import REPO

MODEL = REPO / "src" / "loci" / "embed" / "model" / "model.onnx"


def _kept(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.exists() else []


def test_the_calibration_embeds_passages_of_the_lengths_real_chunks_have() -> None:
    # The dry run divides real chunks by this rate, so the passages must cost what real chunks
    # cost: Loci's chunks of SciFact, Markdown and PDFs average 160-178 tokens, from under 100
    # (a short section) to a full 256 (bench/embed_throughput.py prints their distribution).
    embedder = LocalEmbedder()
    tokens = [min(embedder.count_tokens(t), embedder.max_tokens) + 2 for t in calibration_texts()]
    assert 160 <= statistics.mean(tokens) <= 180
    assert min(tokens) < 100 and max(tokens) > 200
    assert len(set(calibration_texts())) == len(tokens)  # different passages, not one repeated


def test_a_measured_rate_is_kept_and_reused_by_the_next_process(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = LocalEmbedder(threads=1, calibration_dir=folder)
    rate = first.chunks_per_s()
    assert 1 < rate < 10_000
    (kept,) = _kept(folder)
    saved = json.loads(kept.read_text())
    assert saved["chunks_per_s"] == rate
    assert saved["cpu"] == cpu_model() and saved["threads"] == 1
    assert saved["model_sha256"] == file_sha256(MODEL)

    # A later process reads the kept figure instead of measuring: mark it to tell the two apart.
    kept.write_text(json.dumps({**saved, "chunks_per_s": 123.5}))
    assert LocalEmbedder(threads=1, calibration_dir=folder).chunks_per_s() == 123.5
    # Another thread count is another measurement.
    assert LocalEmbedder(threads=2, calibration_dir=folder).chunks_per_s() != 123.5
    assert len(_kept(folder)) == 2


def test_another_model_file_is_measured_again(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    LocalEmbedder(threads=1, calibration_dir=folder).chunks_per_s()
    (kept,) = _kept(folder)
    kept.write_text(json.dumps({**json.loads(kept.read_text()), "chunks_per_s": 123.5}))

    # The same graph with one more byte of metadata: another file, so another calibration.
    other = tmp_path / "other.onnx"
    shutil.copyfile(MODEL, other)
    with other.open("ab") as f:
        f.write(b"\x32\x01x")  # ModelProto field 6 (doc_string) = "x": the last one counts
    variant = LocalEmbedder(threads=1, model_path=other, calibration_dir=folder)
    assert variant.chunks_per_s() != 123.5
    assert len(_kept(folder)) == 2


def test_an_unreadable_kept_rate_is_ignored_and_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    cache = CalibrationCache(folder)
    path = cache.path_for(file_sha256(MODEL), cpu_model(), 1)
    for junk in ("{not json", '{"chunks_per_s": "fast"}', '{"chunks_per_s": -3}', ""):
        folder.mkdir(exist_ok=True)
        path.write_text(junk)
        rate = LocalEmbedder(threads=1, calibration_dir=folder).chunks_per_s()
        assert rate > 1
        assert json.loads(path.read_text())["chunks_per_s"] == rate


def _dry_run_seconds(stdout: str) -> dict[str, float]:
    items = json.loads(stdout)["items"]
    return {Path(i["source"]).name: i["seconds"] for i in items}


def test_the_dry_run_estimates_with_the_rate_measured_on_the_first_estimate(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    kept = home / "cache" / "embedder"
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    # Nothing to embed (a refused file): nothing is measured.
    run_cli("add", "--dry-run", "--json", str(empty), home=home)
    assert _kept(kept) == []

    notes = tmp_path / "notes.md"
    notes.write_text("\n\n".join(f"Paragraph {i}: " + "kelp grows fast " * 60 for i in range(6)))
    dry = run_cli("add", "--dry-run", "--json", str(notes), home=home)
    assert dry.returncode == 0, dry.stderr
    (calibration,) = _kept(kept)
    chunks = json.loads(dry.stdout)["items"][0]["chunks"]
    assert chunks >= 2

    # The estimate follows the kept rate: at one chunk every 10 s, the chunks alone take 10 s each.
    saved = json.loads(calibration.read_text())
    calibration.write_text(json.dumps({**saved, "chunks_per_s": 0.1}))
    slow = run_cli("add", "--dry-run", "--json", str(notes), home=home)
    assert _dry_run_seconds(slow.stdout)["notes.md"] >= chunks * 10

    # LOCI_INGEST_CHUNKS_PER_S still overrides the measurement.
    fixed = run_cli(
        "add", "--dry-run", "--json", str(notes), home=home, env={"LOCI_INGEST_CHUNKS_PER_S": "1"}
    )
    assert chunks <= _dry_run_seconds(fixed.stdout)["notes.md"] < chunks * 10


def test_an_embedder_that_cannot_measure_itself_gets_the_default_rate(tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not an onnx model")
    local = LocalEmbedder(model_path=broken, calibration_dir=tmp_path / "cache")
    # The dry run still estimates: a model that cannot load fails the add, not the estimate.
    assert embedding_rate(local) == LOCAL_EMBED_CHUNKS_PER_S
    assert _kept(tmp_path / "cache") == []
    remote = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", None, "m", 8)
    with remote:  # nothing measured yet, and nothing is sent to find out
        assert embedding_rate(remote) == LOCAL_EMBED_CHUNKS_PER_S
