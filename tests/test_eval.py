"""`loci eval` on a small BEIR folder made here: every mode is measured and finds the answers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli

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
    assert report["split"] == "dev"  # the only split there
    assert report["ndcg_gain"] == "linear"
    assert report["documents"] == 5 and report["chunks"] >= 5 and report["indexing_s"] >= 0
    # the scratch index went beside the data directory, not into it, and is gone afterwards
    assert not (tmp_path / "unused" / "loci.db").exists()
    assert list((tmp_path / "unused" / "eval").iterdir()) == []


def test_eval_prefers_the_test_split_and_names_the_splits_there(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    make_beir(folder)
    only_two = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td4\t1\n"
    (folder / "qrels" / "test.tsv").write_text(only_two)
    home = tmp_path / "home"
    result = run_cli("eval", "--beir", str(folder), "--mode", "text", "--json", home=home)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["split"] == "test" and report["results"][0]["queries"] == 2
    missing = run_cli("eval", "--beir", str(folder), "--split", "train", home=home)
    assert missing.returncode == 1
    assert "no split 'train' in mini; it has dev, test" in missing.stderr


def test_eval_rejects_a_folder_that_is_not_beir(tmp_path: Path) -> None:
    result = run_cli("eval", "--beir", str(tmp_path), home=tmp_path / "home")
    assert result.returncode == 1 and "not a BEIR folder" in result.stderr
