"""Adding an embedding model from the Hugging Face hub (`loci models add REPO`).

A sentence-transformers model of the BERT family (BERT, MiniLM, BGE, E5, XLM-RoBERTa) is
fetched once: the hub's API names the files of a revision with their hashes (SHA-256 for the
large files kept in LFS, the git blob hash for the others), each file is downloaded through the
fetch policy's vetted connections and checked against its hash, then its weights are turned
into an int8 ONNX model with pooling and normalisation in the graph (`loci.embed.encoder_graph`)
beside the model's own `tokenizer.json`, in the data directory's model cache. Nothing of a
failed add is left behind, and without the network the add is refused with the reason.

Added models are listed in `added.json` in that cache (`added_models`) and run by
`LocalEmbedder` like the bundled one.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
import numpy as np

from loci.embed.catalog import CatalogModel
from loci.errors import EmbeddingError, InvalidInput
from loci.ingest.fetch_policy import FetchPolicy

ADDED_FILE = "added.json"
HUB_FOLDER = "hub"
DEFAULT_ENDPOINT = "https://huggingface.co"
REQUIRED = ("config.json", "tokenizer.json", "model.safetensors")
OPTIONAL = ("modules.json", "1_Pooling/config.json", "sentence_bert_config.json")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_ARCHITECTURES = ("bert", "xlm-roberta", "roberta")
_MAX_MODEL_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class AddedModel:
    """A model fetched from the hub, as `added.json` records it."""

    name: str  # the repository, as the person named it
    revision: str  # the commit the files were read at
    dimensions: int
    max_sequence: int
    pooling: Literal["mean", "cls"]
    languages: list[str] | None  # ISO 639-1; None: every language
    folder: str  # under the model cache
    unknown_token: str
    # Instructions the model was trained with (E5: "query: " / "passage: "), prepended to a
    # question and to a passage; and the tokens they and the special tokens take.
    query_prefix: str = ""
    passage_prefix: str = ""
    reserved_tokens: int = 2

    def catalog(self) -> CatalogModel:
        return CatalogModel(
            self.name,
            self.name,
            self.dimensions,
            frozenset(self.languages) if self.languages is not None else None,
            f"added from the Hugging Face hub at {self.revision[:12]}",
        )


def added_models(models_dir: Path) -> list[AddedModel]:
    try:
        rows = json.loads((models_dir / ADDED_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [AddedModel(**row) for row in rows if isinstance(row, dict)]


def add_model(
    repo: str,
    models_dir: Path,
    policy: FetchPolicy,
    *,
    revision: str = "main",
    endpoint: str = DEFAULT_ENDPOINT,
    languages: list[str] | None = None,
    prefixes: tuple[str, str] | None = None,
) -> AddedModel:
    """Fetch, check and convert `repo`. `prefixes`: the query and passage instructions; None:
    E5's ("query: ", "passage: ") for a model named like one, else none."""
    if not _REPO.match(repo) or ".." in repo:
        raise InvalidInput(f"{repo!r} is not a hub repository (owner/name)")
    from loci.embed.catalog import LOCAL_MODELS

    if any(m.name == repo for m in LOCAL_MODELS):
        raise InvalidInput(f"{repo} ships with Loci already")
    models_dir.mkdir(parents=True, exist_ok=True)
    folder = f"{HUB_FOLDER}/{repo.replace('/', '--')}"
    with tempfile.TemporaryDirectory(prefix="loci-hub-", dir=models_dir) as tmp:
        work = Path(tmp)
        commit = _download(repo, revision, endpoint.rstrip("/"), work / "raw", policy)
        if prefixes is None:
            e5 = re.search(r"(^|[/-])e5[-_]", repo.lower()) is not None
            prefixes = ("query: ", "passage: ") if e5 else ("", "")
        added = _convert(repo, commit, work / "raw", work / "model", folder, languages, prefixes)
        target = models_dir / folder
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        (work / "model").replace(target)
    others = [m for m in added_models(models_dir) if m.name != repo]
    (models_dir / ADDED_FILE).write_text(
        json.dumps([asdict(m) for m in [*others, added]], indent=2)
    )
    return added


# fetching -----------------------------------------------------------------------------------


def _download(repo: str, revision: str, endpoint: str, into: Path, policy: FetchPolicy) -> str:
    from loci.ingest.vetted_transport import vetted_client

    deadline = time.monotonic() + 3600
    timeout = httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout)
    into.mkdir(parents=True)
    try:
        with vetted_client(
            policy, deadline=deadline, timeout=timeout, follow_redirects=True,
            headers={"User-Agent": policy.user_agent},
        ) as client:  # fmt: skip
            listing = _get(client, f"{endpoint}/api/models/{repo}/revision/{revision}?blobs=true")
            try:
                info = listing.json()
                commit = str(info["sha"])
                files = {s["rfilename"]: s for s in info["siblings"]}
            except (ValueError, KeyError, TypeError):
                raise EmbeddingError(f"the hub's description of {repo} is not readable") from None
            missing = [f for f in REQUIRED if f not in files]
            if missing:
                raise InvalidInput(
                    f"{repo} has no {', '.join(missing)}: Loci adds sentence-transformers models"
                    " with safetensors weights and a tokenizer.json"
                )
            for name in (*REQUIRED, *(f for f in OPTIONAL if f in files)):
                _fetch_file(client, f"{endpoint}/{repo}/resolve/{commit}/{name}", files[name],
                            into / name)  # fmt: skip
    except httpx.HTTPError as error:
        raise EmbeddingError(
            f"cannot reach the Hugging Face hub at {endpoint} ({error}); adding a model needs"
            " the network once"
        ) from None
    return commit


def _get(client: httpx.Client, url: str) -> httpx.Response:
    response = client.get(url)
    if response.status_code == 404:
        raise InvalidInput(f"the hub has no such model or revision ({url})")
    if response.status_code in (401, 403):
        raise InvalidInput(f"the hub refused access ({response.status_code}): a gated model?")
    if response.status_code != 200:
        raise EmbeddingError(f"the hub answered {response.status_code} for {url}")
    return response


def _fetch_file(client: httpx.Client, url: str, sibling: dict[str, Any], path: Path) -> None:
    lfs = sibling.get("lfs") or {}
    expected_sha256 = lfs.get("sha256")
    expected_blob = sibling.get("blobId")
    path.parent.mkdir(parents=True, exist_ok=True)
    sha256 = hashlib.sha256()
    size = 0
    with client.stream("GET", url) as response, path.open("wb") as out:
        if response.status_code != 200:
            raise EmbeddingError(f"the hub answered {response.status_code} for {url}")
        for block in response.iter_bytes(1024 * 1024):
            size += len(block)
            if size > _MAX_MODEL_BYTES:
                raise InvalidInput(f"{path.name} is over {_MAX_MODEL_BYTES:,} bytes")
            sha256.update(block)
            out.write(block)
    if expected_sha256 is not None:
        if sha256.hexdigest() != expected_sha256:
            raise EmbeddingError(
                f"{path.name} does not match the SHA-256 the hub lists for it; nothing was added"
            )
    elif expected_blob is not None:
        blob = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
        blob.update(path.read_bytes())
        if blob.hexdigest() != expected_blob:
            raise EmbeddingError(
                f"{path.name} does not match the hash the hub lists for it; nothing was added"
            )
    else:
        raise EmbeddingError(f"the hub lists no hash for {path.name}; nothing was added")


# converting ---------------------------------------------------------------------------------

_LAYER = re.compile(r"encoder\.layer\.(\d+)\.(.+)$")
_PARTS = {
    "attention.self.query": "q",
    "attention.self.key": "k",
    "attention.self.value": "v",
    "attention.output.dense": "ao",
    "attention.output.LayerNorm": "aln",
    "intermediate.dense": "fi",
    "output.dense": "fo",
    "output.LayerNorm": "oln",
}
_EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "emb.word",
    "embeddings.position_embeddings.weight": "emb.pos",
    "embeddings.token_type_embeddings.weight": "emb.type",
    "embeddings.LayerNorm.weight": "emb.ln.w",
    "embeddings.LayerNorm.bias": "emb.ln.b",
}


def _convert(
    repo: str,
    commit: str,
    raw: Path,
    out: Path,
    folder: str,
    languages: list[str] | None,
    prefixes: tuple[str, str],
) -> AddedModel:
    from loci.embed.encoder_graph import Encoder, encoder_graph, quantize_dense
    from loci.embed.safetensors_read import read_safetensors

    try:
        import onnx
    except ImportError as exc:
        raise EmbeddingError(
            "turning a model into ONNX needs the onnx package: pip install 'loci[multilingual]'"
        ) from exc
    config = json.loads((raw / "config.json").read_text())
    kind = str(config.get("model_type", ""))
    if kind not in _ARCHITECTURES or config.get("hidden_act", "gelu") != "gelu":
        raise InvalidInput(
            f"{repo} is a {kind or 'unknown'} model; Loci runs encoders of the BERT family"
            " (bert, xlm-roberta) with GELU"
        )
    tensors = _loci_names(read_safetensors(raw / "model.safetensors"))
    hidden = int(config["hidden_size"])
    layers = int(config["num_hidden_layers"])
    missing = [f"l{i}.q.w" for i in range(layers) if f"l{i}.q.w" not in tensors]
    if "emb.word" not in tensors or missing:
        raise InvalidInput(f"{repo}'s weights are not those of a {kind} encoder")
    pooling: Literal["mean", "cls"] = "mean"
    pooling_file = raw / "1_Pooling" / "config.json"
    if pooling_file.is_file() and json.loads(pooling_file.read_text()).get(
        "pooling_mode_cls_token"
    ):
        pooling = "cls"
    positions = int(config.get("max_position_embeddings", 512))
    offset = int(config.get("pad_token_id", 1)) + 1 if kind != "bert" else 0
    sequence = positions - offset
    bert_config = raw / "sentence_bert_config.json"
    if bert_config.is_file():
        sequence = min(sequence, int(json.loads(bert_config.read_text()).get("max_seq_length")
                                     or sequence))  # fmt: skip
    if "emb.type" not in tensors:
        tensors["emb.type"] = np.zeros((1, hidden), dtype=np.float32)
    encoder = Encoder(
        name=repo,
        hidden=hidden,
        layers=layers,
        heads=int(config["num_attention_heads"]),
        feed_forward=int(config["intermediate_size"]),
        epsilon=float(config.get("layer_norm_eps", 1e-12)),
        tensors=tensors,
        position_offset=offset,
        pooling=pooling,
    )
    out.mkdir(parents=True)
    float_model = out / "float.onnx"
    onnx.save(encoder_graph(encoder), str(float_model))
    quantize_dense(float_model, out / "model.onnx")
    float_model.unlink()
    tokenizer = json.loads((raw / "tokenizer.json").read_text())
    # LocalEmbedder pads and truncates itself.
    tokenizer["padding"] = None
    tokenizer["truncation"] = None
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False))
    unknown = (tokenizer.get("model") or {}).get("unk_token") or "[UNK]"
    from tokenizers import Tokenizer

    counting = Tokenizer.from_file(str(out / "tokenizer.json"))
    prefix_tokens = max(
        len(counting.encode(p, add_special_tokens=False).ids) if p else 0 for p in prefixes
    )
    specials = len(counting.encode("", add_special_tokens=True).ids)
    return AddedModel(
        name=repo,
        revision=commit,
        dimensions=hidden,
        max_sequence=min(sequence, 512),
        pooling=pooling,
        languages=languages,
        folder=folder,
        unknown_token=str(unknown),
        query_prefix=prefixes[0],
        passage_prefix=prefixes[1],
        reserved_tokens=specials + prefix_tokens,
    )


def _loci_names(weights: dict[str, Any]) -> dict[str, Any]:
    """The hub's tensor names (with or without a `bert.`/`roberta.` prefix) as Loci's."""
    named: dict[str, Any] = {}
    for raw_name, value in weights.items():
        name = re.sub(r"^(bert|roberta|model|0\.auto_model)\.", "", raw_name)
        if name in _EMBEDDINGS:
            named[_EMBEDDINGS[name]] = value
            continue
        match = _LAYER.match(name)
        if match is None:
            continue
        layer, rest = match.groups()
        part, _, which = rest.rpartition(".")
        short = _PARTS.get(part)
        if short is None:
            continue
        suffix = "w" if which == "weight" else "b"
        named[f"l{layer}.{short}.{suffix}"] = value
    return named
