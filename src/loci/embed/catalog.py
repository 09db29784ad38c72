"""The local embedding models Loci knows, by the name settings use: constants only, so that
reading them (settings, `embedder_languages`) loads neither ONNX Runtime nor a model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loci.language import LATIN_SCRIPT

MINILM_NAME = "all-MiniLM-L6-v2"
E5_NAME = "multilingual-e5-small"
E5_MODEL_ID = "intfloat/multilingual-e5-small"

# The languages of XLM-RoBERTa's training data (CC-100), which multilingual-e5-small inherits,
# as ISO 639-1 codes (Norwegian also as nb and nn, the codes language detection gives).
E5_LANGUAGES = frozenset(
    (
        "af",
        "am",
        "ar",
        "as",
        "az",
        "be",
        "bg",
        "bn",
        "br",
        "bs",
        "ca",
        "cs",
        "cy",
        "da",
        "de",
        "el",
        "en",
        "eo",
        "es",
        "et",
        "eu",
        "fa",
        "fi",
        "fr",
        "fy",
        "ga",
        "gd",
        "gl",
        "gu",
        "ha",
        "he",
        "hi",
        "hr",
        "hu",
        "hy",
        "id",
        "is",
        "it",
        "ja",
        "jv",
        "ka",
        "kk",
        "km",
        "kn",
        "ko",
        "ku",
        "ky",
        "la",
        "lo",
        "lt",
        "lv",
        "mg",
        "mk",
        "ml",
        "mn",
        "mr",
        "ms",
        "my",
        "nb",
        "ne",
        "nl",
        "nn",
        "no",
        "om",
        "or",
        "pa",
        "pl",
        "ps",
        "pt",
        "ro",
        "ru",
        "sa",
        "sd",
        "si",
        "sk",
        "sl",
        "so",
        "sq",
        "sr",
        "su",
        "sv",
        "sw",
        "ta",
        "te",
        "th",
        "tl",
        "tr",
        "ug",
        "uk",
        "ur",
        "uz",
        "vi",
        "xh",
        "yi",
        "zh",
    )
)


# The local models as `loci models list` shows them and a brain names them -----------------

MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class CatalogModel:
    """A local embedding model Loci can run: its name (as settings and `--model` use it), the
    identity a brain records for its vectors, its size of vector, and the languages whose
    passages it places by meaning (ISO 639-1; None: every language)."""

    name: str
    model_id: str
    dimensions: int
    languages: frozenset[str] | None
    what: str
    # The package extra that brings what it needs (`pip install 'loci[EXTRA]'`); None: it
    # ships with Loci.
    extra: str | None = None


LOCAL_MODELS: tuple[CatalogModel, ...] = (
    CatalogModel(
        MINILM_NAME,
        MINILM_MODEL_ID,
        384,
        LATIN_SCRIPT,
        "English, 6 layers: fast, ships with Loci (its words split badly in other scripts)",
    ),
    CatalogModel(
        E5_NAME,
        E5_MODEL_ID,
        384,
        E5_LANGUAGES,
        "about 100 languages, 12 layers: about half MiniLM's speed, +300 MB of memory",
        extra="multilingual",
    ),
)


def all_models(models_dir: Path | None = None) -> list[CatalogModel]:
    """The models that ship with Loci, then those added from the hub into `models_dir`."""
    if models_dir is None:
        return list(LOCAL_MODELS)
    from loci.embed.hub import added_models

    return [*LOCAL_MODELS, *(m.catalog() for m in added_models(models_dir))]


def model_named(name: str, models_dir: Path | None = None) -> CatalogModel | None:
    return next((m for m in all_models(models_dir) if m.name == name), None)


def model_of_identity(model_id: str, models_dir: Path | None = None) -> CatalogModel | None:
    return next((m for m in all_models(models_dir) if m.model_id == model_id), None)
