"""Turning text into vectors: the `Embedder` seam and its two implementations.

`LocalEmbedder` runs the bundled all-MiniLM-L6-v2 on ONNX Runtime (offline, the default);
`OpenAICompatibleEmbedder` calls any OpenAI-compatible `/embeddings` endpoint.
"""

from loci.embed.base import Embedder, Vectors
from loci.embed.local import LocalEmbedder
from loci.embed.openai_compat import OpenAICompatibleEmbedder

__all__ = ["Embedder", "LocalEmbedder", "OpenAICompatibleEmbedder", "Vectors"]
