"""`loci eval` on a small BEIR folder made here: every mode is measured and finds the answers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

CORPUS = {
    "d1": ("Sea otters", "Sea otters eat sea urchins and so protect kelp forests."),
    "d2": ("Sourdough", "A sourdough starter is a culture of wild yeast and lactic bacteria."),
    "d3": ("Boilers", "A condensing boiler recovers heat from the water vapour in its flue gas."),
    "d4": ("Bees", "Honey bees communicate the direction of flowers with a waggle dance."),
    "d5": ("Glaciers", "Glaciers carve U-shaped valleys as they flow downhill under their weight."),
}
QUERIES = {
    "q1": ("what protects kelp forests from urchins", "d1"),
    "q2": ("how do bees tell each other where flowers are", "d4"),
    "q3": ("wild yeast culture for bread", "d2"),
    "q4": ("why are glacial valleys U shaped", "d5"),
}


def make_beir(folder: Path) -> None:
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as out:
        for doc_id, (title, text) in CORPUS.items():
            out.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as out:
        for query_id, (text, _) in QUERIES.items():
            out.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, (_, d) in QUERIES.items()]
    (folder / "qrels" / "dev.tsv").write_text("\n".join(lines) + "\n")


def test_eval_measures_every_mode(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    make_beir(folder)
    result = run_cli("eval", "--beir", str(folder), "--json", home=tmp_path / "unused")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    by_mode = {r["mode"]: r for r in report["results"]}
    assert set(by_mode) == {"text", "vector", "hybrid"}
    for mode, r in by_mode.items():
        assert r["queries"] == 4
        assert r["ndcg_10"] > 0.8, mode  # each query has one obvious answer
        assert r["recall_100"] == 1.0, mode
        assert 0 < r["p50_ms"] <= r["p95_ms"], mode
    # the scratch index went to a temporary directory, not the user's data directory
    assert not (tmp_path / "unused" / "loci.db").exists()


def test_eval_rejects_a_folder_that_is_not_beir(tmp_path: Path) -> None:
    result = run_cli("eval", "--beir", str(tmp_path), home=tmp_path / "home")
    assert result.returncode == 1 and "not a BEIR folder" in result.stderr
