"""The brain's embedder identity: vectors of two models live in unrelated spaces."""

from __future__ import annotations

from loci.embed.base import Embedder
from loci.errors import EmbedderMismatch
from loci.models import Brain


def check_identity(brain: Brain, embedder: Embedder) -> None:
    """Refuse to mix vector spaces: the brain's recorded embedder must be the configured one."""
    if brain.embedder_model is None:
        return
    if (brain.embedder_model, brain.embedder_dims) != (embedder.model_id, embedder.dimensions):
        raise EmbedderMismatch(
            f"brain {brain.name!r} was indexed with {brain.embedder_model} "
            f"({brain.embedder_dims} dims) but the configured embedder is {embedder.model_id} "
            f"({embedder.dimensions} dims); run `loci reindex --embeddings` to migrate"
        )
