"""Turning text into vectors: the `Embedder` seam and its two implementations.

`LocalEmbedder` runs the bundled all-MiniLM-L6-v2 on ONNX Runtime (offline, the default);
`OpenAICompatibleEmbedder` calls any OpenAI-compatible `/embeddings` endpoint. Both are imported
on first use: every store imports `loci.embed.base`, and a command that never embeds (`loci
list`) should not pay for ONNX Runtime or an HTTP client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from loci.embed.base import Embedder, Vectors

if TYPE_CHECKING:
    from loci.embed.local import LocalEmbedder
    from loci.embed.openai_compat import OpenAICompatibleEmbedder

_LAZY = {
    "LocalEmbedder": "loci.embed.local",
    "OpenAICompatibleEmbedder": "loci.embed.openai_compat",
}

__all__ = ["Embedder", "LocalEmbedder", "OpenAICompatibleEmbedder", "Vectors"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
