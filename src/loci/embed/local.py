"""all-MiniLM-L6-v2 on ONNX Runtime: the embedder that needs no network, no API key and no PyTorch.

The model file and its tokenizer ship inside the package (`loci/embed/model/`, made once by
`scripts/export_onnx.py`; see `PROVENANCE.md` there). Mean pooling and L2 normalisation are part of
the ONNX graph, so one `run` call returns sentence vectors.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from loci.embed.base import Vectors
from loci.embed.calibration import Calibration, CalibrationCache, cpu_model, file_sha256, measure
from loci.embed.word_counts import WordTokenCounter
from loci.errors import EmbeddingError

log = logging.getLogger(__name__)

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
# The model was trained with (and sentence-transformers runs it at) 256 positions; the 512 in its
# BERT config is the architecture's ceiling, not what the model is good for.
MAX_SEQUENCE = 256
_SPECIAL_TOKENS = 2  # [CLS] ... [SEP]
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
UNKNOWN_TOKEN = "[UNK]"
# The bundled file has Add + LayerNormalization where the BERT fusion would have
# SkipLayerNormalization: ONNX Runtime's CPU kernel for that fused op is several times slower
# than the two it replaces (see scripts/export_onnx.py), so its optimizer must not fuse them back.
_DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]


@dataclass(frozen=True)
class LocalModel:
    """What LocalEmbedder must know of a model beside its two files."""

    model_id: str
    dimensions: int
    max_sequence: int  # positions one call reads, special tokens and prefix included
    unknown_token: str
    # The languages it reads (ISO 639-1), None for any: where the vector leg can be trusted.
    languages: frozenset[str] | None
    # Prepended to what is embedded: models trained with instructions (e5's "query: " and
    # "passage: ") place a text differently depending on which side of a search it is on.
    query_prefix: str = ""
    passage_prefix: str = ""
    # Tokens of max_sequence the text cannot have: the special tokens and the longer prefix.
    reserved_tokens: int = _SPECIAL_TOKENS
    # One tokenizer for counting and embedding (no truncation: _embed cuts), for tokenizers too
    # large to hold twice (e5's 250,002-piece Unigram is about 300 MB in memory).
    one_tokenizer: bool = False


MINILM = LocalModel(
    model_id=MODEL_ID,
    dimensions=DIMENSIONS,
    max_sequence=MAX_SEQUENCE,
    unknown_token=UNKNOWN_TOKEN,
    languages=None,  # the caller's setting decides (loci.config.embedder_languages)
)

# count_tokens cuts long texts into pieces of about this many characters, at whitespace, and
# tokenizes the pieces in parallel: one multi-megabyte `encode` is single-threaded and builds an
# offset table for every token.
_COUNT_PIECE_CHARS = 64_000
_WHITESPACE = (" ", "\n")
# embed() reads at most 254 tokens of a text; a longer text is first cut to this many characters
# (at whitespace) when that head alone already holds enough tokens, so a stray megabyte-long
# "chunk" does not cost a full tokenization.
_EMBED_HEAD_CHARS = 16_000


class LocalEmbedder:
    """Sentence vectors from an ONNX model on ONNX Runtime: the bundled all-MiniLM-L6-v2 unless
    `model` (with `model_path` and `tokenizer_path`) names another.

    The ONNX Runtime session is created on first use (loading takes about a second), so building
    a `LocalEmbedder` is free. One instance may be shared between threads.

    `threads` is how many model calls run at once (default: every core this process may use).
    Each call runs on one core: ONNX Runtime gets one intra-op thread, and `embed()` hands the
    texts of one call to up to `threads` worker threads sharing the session. Per CPU-second one
    thread per call does the most work (splitting one text's matrices over two cores costs 7-10%
    in synchronisation), a query is embedded on one core without waking the others, and
    concurrent callers (the server's searches) run side by side instead of contending.

    `batch_size` is how many texts go through the model in one call. It defaults to 1 because the
    bundled model is int8 with activations quantized per call: in a batch, a text's vector would
    shift slightly with its batch-mates and their padding (mean cosine 0.9956 to itself alone
    even when sorted by length, and SciFact nDCG@10 moving by up to 0.005 between batch sizes).
    One text per call makes a vector a function of its text alone, and is also the fastest at
    Loci's chunk lengths (~175 tokens: batches of 4 do 4-12% less per CPU-second, of 16 17-30%
    less, as a batch's activations outgrow the core's cache); only short texts gain from batches
    (queries of ~22 tokens: 1.7x at 8). With a larger batch size, texts are sorted by length so
    each batch is padded only to its own longest member.

    `model_path` and `tokenizer_path` replace the bundled files (benchmarks use them to compare
    model variants; `loci.embed.e5` points them at the multilingual model). `model` says what
    the files hold: its identity, dimensions, sequence length and prefixes.

    `calibration_dir` is where `chunks_per_s()` keeps the throughput it measured on this machine
    (see `loci.embed.calibration`); None measures once per instance and keeps nothing.
    """

    def __init__(
        self,
        *,
        model: LocalModel = MINILM,
        threads: int | None = None,
        batch_size: int = 1,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        calibration_dir: Path | None = None,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._model = model
        self._threads = threads
        self._batch_size = batch_size
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._input_names: frozenset[str] = frozenset()
        self._truncating: Tokenizer | None = None
        self._counting: Tokenizer | None = None
        self._word_counter: WordTokenCounter | None = None
        self._calibration_dir = calibration_dir
        self._calibration: Calibration | None = None
        self._pool: ThreadPoolExecutor | None = None

    @property
    def model_id(self) -> str:
        return self._model.model_id

    @property
    def dimensions(self) -> int:
        return self._model.dimensions

    @property
    def max_tokens(self) -> int:
        return self._model.max_sequence - self._model.reserved_tokens

    @property
    def languages(self) -> frozenset[str] | None:
        """ISO 639-1 codes of the languages the model reads; None: not known to it."""
        return self._model.languages

    def chunks_per_s(self) -> float:
        """Full-length chunks this instance embeds a second on this machine (wall time).

        Measured on first call, about a second of embedding, and reused from the calibration
        cache afterwards (also by later processes) while the model file, CPU and threads stay
        the same.
        """
        if self._calibration is None:
            model_hash = self._model_sha256()
            threads = self._workers()
            if self._calibration_dir is None:
                self._calibration = measure(self.embed, model_hash, cpu_model(), threads)
            else:
                cache = CalibrationCache(self._calibration_dir)
                self._calibration = cache.rate(model_hash, threads, self.embed)
        return self._calibration.chunks_per_s

    def _model_sha256(self) -> str:
        self._resolve_files()
        if self._model_path is not None:
            return file_sha256(self._model_path)
        resource = resources.files("loci.embed") / "model" / MODEL_FILE
        with resources.as_file(resource) as path:
            return file_sha256(path)

    def count_tokens(self, text: str) -> int:
        counting = self._tokenizers()[1]
        if len(text) <= _COUNT_PIECE_CHARS:
            # What the chunker asks about: summed from memoised word counts (see word_counts).
            assert self._word_counter is not None  # made with the tokenizers
            return self._word_counter.count(text)
        pieces = _split_at_whitespace(text)
        encodings = counting.encode_batch_fast(pieces, add_special_tokens=False)
        return sum(len(encoding.ids) for encoding in encodings)

    def words_in_pieces(self, text: str) -> int | None:
        encoding = self._tokenizers()[1].encode(text, add_special_tokens=False)
        pieces = Counter(word for word in encoding.word_ids if word is not None)
        unknown = {
            word
            for word, token in zip(encoding.word_ids, encoding.tokens, strict=True)
            if token == self._model.unknown_token
        }
        return len({word for word, count in pieces.items() if count > 1} | unknown)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors of passages (what is stored and searched)."""
        return self._embed(texts, self._model.passage_prefix)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries: the same as `embed` unless the model has a query prefix."""
        return self._embed(texts, self._model.query_prefix)

    def question_and_passages(self, question: str, texts: Sequence[str]) -> tuple[Vectors, Vectors]:
        """The question as a query and the texts as passages: one batch when the model reads
        both alike (no prefixes), two when it does not."""
        if self._model.query_prefix == self._model.passage_prefix:
            vectors = self.embed([question, *texts])
            return vectors[0], vectors[1:]
        return self.embed_queries([question])[0], self.embed(texts)

    def _embed(self, texts: Sequence[str], prefix: str) -> Vectors:
        if isinstance(texts, str):
            # A bare string is a Sequence[str] of characters; embedding each letter is never meant.
            raise TypeError("embed() takes a sequence of texts, not a single string")
        out = np.empty((len(texts), self._model.dimensions), dtype=np.float32)
        if not texts:
            return out
        session = self._load_session()
        truncating = self._tokenizers()[0]
        heads = [prefix + self._head(text) for text in texts]
        # The _fast variant skips character offsets, which embedding never looks at.
        limit = self._model.max_sequence
        # A tokenizer shared with counting does not truncate: keep the first tokens and the
        # closing special token, as truncation would (a no-op for an already truncated text).
        encodings = [
            ids if len(ids) <= limit else [*ids[: limit - 1], ids[-1]]
            for ids in (e.ids for e in truncating.encode_batch_fast(heads))
        ]
        lengths = np.fromiter((len(e) for e in encodings), dtype=np.int64, count=len(encodings))
        # Longest first: similar lengths share a batch, so little compute goes to padding, and the
        # workers take the longest texts first, so none is left with a long one at the end.
        order = np.argsort(-lengths, kind="stable")
        batches = [
            order[start : start + self._batch_size]
            for start in range(0, len(order), self._batch_size)
        ]

        def run(batch: np.ndarray) -> Any:
            feed = self._feed([encodings[i] for i in batch], int(lengths[batch].max()))
            try:
                return session.run(None, feed)[0]
            except Exception as exc:  # ORT raises its own unexported exception types
                raise EmbeddingError(f"local embedding model failed: {exc}") from exc

        results: Iterable[Any]
        if len(batches) == 1 or self._workers() == 1:
            results = map(run, batches)
        else:
            # ORT releases the GIL while it computes: each worker's call runs on its own core.
            results = self._worker_pool().map(run, batches)
        for batch, vectors in zip(batches, results, strict=True):
            out[batch] = vectors
        # The graph already normalises; doing it again here keeps the promise of unit vectors to
        # float32 precision whatever model file is loaded.
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def _workers(self) -> int:
        return self._threads or _usable_cores()

    def _worker_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(
                        self._workers(), thread_name_prefix="loci-embed"
                    )
        return self._pool

    def _head(self, text: str) -> str:
        """`text`, or a prefix of it that truncates to exactly the same tokens."""
        if len(text) <= _EMBED_HEAD_CHARS:
            return text
        cut = max(text.rfind(ws, 0, _EMBED_HEAD_CHARS) for ws in _WHITESPACE)
        if cut <= 0:
            return text
        head = text[: cut + 1]
        # Cut at whitespace, the head's tokens are the text's first tokens (see
        # _split_at_whitespace); if there are enough of them, truncation never looks further.
        counting = self._tokenizers()[1]
        if len(counting.encode(head, add_special_tokens=False).ids) > self.max_tokens:
            return head
        return text

    def _feed(self, batch: Sequence[list[int]], width: int) -> dict[str, Any]:
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # 0 is [PAD]
        attention_mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            n = len(ids)
            input_ids[row, :n] = ids
            attention_mask[row, :n] = 1
        feed: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        return feed

    def _resolve_files(self) -> None:
        """Make sure `model_path` and `tokenizer_path` (if set) exist; a hook for models that
        are made on first use (`loci.embed.e5`)."""

    def _load_session(self) -> ort.InferenceSession:
        if self._session is not None:
            return self._session
        self._resolve_files()
        with self._lock:
            if self._session is None:
                options = ort.SessionOptions()
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # One core per call, on the caller's thread: parallelism comes from several
                # calls at once (see the class docstring), not from splitting one.
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                # (With one intra-op thread ORT makes no thread pool, so no idle threads spin
                # after a call and starve the NumPy vector search that follows a query.)
                try:
                    if self._model_path is not None:
                        session = _create_session(self._model_path, options)
                    else:
                        resource = resources.files("loci.embed") / "model" / MODEL_FILE
                        with resources.as_file(resource) as path:
                            session = _create_session(path, options)
                except Exception as exc:
                    raise EmbeddingError(f"cannot load the local embedding model: {exc}") from exc
                self._input_names = frozenset(i.name for i in session.get_inputs())
                log.debug("loaded %s for %d threads", self._model.model_id, self._workers())
                self._session = session
        return self._session

    def _tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        if self._truncating is not None and self._counting is not None:
            return self._truncating, self._counting
        self._resolve_files()
        with self._lock:
            if self._truncating is None or self._counting is None:
                try:
                    if self._tokenizer_path is not None:
                        raw = self._tokenizer_path.read_text(encoding="utf-8")
                    else:
                        resource = resources.files("loci.embed") / "model" / TOKENIZER_FILE
                        raw = resource.read_text(encoding="utf-8")
                    counting = Tokenizer.from_str(raw)
                    truncating = counting
                    if not self._model.one_tokenizer:
                        truncating = Tokenizer.from_str(raw)
                except Exception as exc:
                    raise EmbeddingError(f"cannot load the local tokenizer: {exc}") from exc
                # Two instances because truncation is state on the tokenizer: counting must see
                # every token, embedding must stop where the model's positions end. A model
                # whose tokenizer is large shares one, and _embed cuts the tokens itself.
                counting.no_padding()
                counting.no_truncation()
                if truncating is not counting:
                    truncating.no_padding()
                    truncating.enable_truncation(max_length=self._model.max_sequence)
                self._word_counter = WordTokenCounter(counting)
                self._counting = counting
                self._truncating = truncating
        return self._truncating, self._counting


def _usable_cores() -> int:
    # os.cpu_count() counts the host's cores even where this process is pinned to fewer (as in
    # containers); one ORT thread per unusable core would only contend.
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def _create_session(path: Path, options: ort.SessionOptions) -> ort.InferenceSession:
    return ort.InferenceSession(
        str(path),
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=_DISABLED_OPTIMIZERS,
    )


def _split_at_whitespace(text: str) -> list[str]:
    """Cut `text` into pieces of about `_COUNT_PIECE_CHARS`, each cut just after a space or newline.

    The BERT pre-tokenizer splits on whitespace before WordPiece runs, and the normaliser works
    character by character, so no token spans a cut and the pieces' token counts add up to the
    whole text's. A stretch without whitespace is never cut: splitting a long word would turn its
    one [UNK] into several.
    """
    pieces: list[str] = []
    start = 0
    while len(text) - start > _COUNT_PIECE_CHARS:
        target = start + _COUNT_PIECE_CHARS
        cut = max(text.rfind(ws, start, target) for ws in _WHITESPACE)
        if cut < 0:
            found = [i for i in (text.find(ws, target) for ws in _WHITESPACE) if i >= 0]
            if not found:
                break
            cut = min(found)
        pieces.append(text[start : cut + 1])
        start = cut + 1
    pieces.append(text[start:])
    return pieces
