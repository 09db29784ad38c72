"""Which embedding model reads a brain.

A brain records the identity of the model its vectors were made with (`Brain.embedder_model`,
set by its first indexed document, or at `loci brain create --model`). Search, indexing and
evaluation ask `Embedders.for_brain` for that model: the configured default when the brain
records none or the default's own, another local model of the catalog (`loci.embed.catalog`)
when it records that one. Each model is built once, on first use, and shared. A brain that
records a model this installation cannot build gets the default, which the identity gate
(`loci.ingest.indexer.check_identity`) then refuses with its reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from loci.embed.base import Embedder
from loci.embed.catalog import CatalogModel, all_models, model_named, model_of_identity
from loci.errors import InvalidInput
from loci.models import Brain

# Builds a local model of the catalog by its name (`loci.app.build_local_embedder`).
ModelBuilder = Callable[[str], Embedder]


class Embedders:
    def __init__(
        self,
        default: Callable[[], Embedder],
        build: ModelBuilder | None = None,
        *,
        default_id: str | None = None,
        default_languages: frozenset[str] | None = None,
        models_dir: Path | None = None,
    ) -> None:
        """`default`: the configured model (built on first call); `default_id` its identity
        when known without building it; `default_languages`: what it reads, as configured
        (`LOCI_EMBED_LANGUAGES` or the model's own); `models_dir`: where models added from
        the hub are (`loci.embed.hub`)."""
        self.default = default
        self._build = build
        self._default_id = default_id
        self._default_languages = default_languages
        self._models_dir = models_dir
        self._built: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def for_brain(self, brain: Brain) -> Embedder:
        wanted = brain.embedder_model
        if wanted is None or wanted == self._default_id:
            return self.default()
        model = model_of_identity(wanted, self._models_dir)
        if model is None or self._build is None:
            return self.default()
        if self._default_id is None and self.default().model_id == wanted:
            return self.default()
        return self.named(model.name)

    def named(self, name: str) -> Embedder:
        """The local model `name` of the catalog, built once."""
        model = self.catalog_model(name)
        if model.model_id == self._default_id:
            return self.default()
        if self._build is None:
            raise InvalidInput(f"this installation runs only its configured embedder, not {name}")
        with self._lock:
            if name not in self._built:
                self._built[name] = self._build(name)
            return self._built[name]

    def languages(self, brain: Brain) -> frozenset[str] | None:
        """The languages the brain's model reads (None: every one)."""
        wanted = brain.embedder_model
        model = model_of_identity(wanted, self._models_dir) if wanted else None
        if model is None or wanted == self._default_id:
            return self._default_languages
        return model.languages

    def catalog_model(self, name: str) -> CatalogModel:
        model = model_named(name, self._models_dir)
        if model is None:
            known = ", ".join(m.name for m in all_models(self._models_dir))
            raise InvalidInput(
                f"no local embedding model {name!r}; Loci has: {known} (`loci models add"
                " OWNER/NAME` fetches one from the Hugging Face hub)"
            )
        return model
