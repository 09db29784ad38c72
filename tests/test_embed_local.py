"""LocalEmbedder with the real bundled all-MiniLM-L6-v2 ONNX model and tokenizer."""

from __future__ import annotations

import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from tokenizers import Tokenizer

from loci.embed import Embedder, LocalEmbedder
from tests.support import text_files
from tests.support.paths import REPO
from tests.support.reference_tokenizer import plain_count, shipped_tokenizer

MODEL_FILE_PATH = REPO / "src/loci/embed/model/model.onnx"


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture(scope="module")
def reference_tokenizer() -> Tokenizer:
    return shipped_tokenizer()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_identity(embedder: LocalEmbedder) -> None:
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.dimensions == 384
    assert embedder.max_tokens == 254  # 256 positions minus [CLS] and [SEP]
    checked: Embedder = embedder  # satisfies the protocol the rest of Loci uses
    assert checked.dimensions == 384


def test_vectors_are_unit_float32_rows(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed(["The mitochondria is the powerhouse of the cell.", "Hello, world"])
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors[0], vectors[1])


def test_paraphrase_is_closer_than_an_unrelated_sentence(embedder: LocalEmbedder) -> None:
    anchor, paraphrase, unrelated = embedder.embed(
        [
            "How do I reset my account password?",
            "What are the steps to change the password for my login?",
            "Volcanic eruptions release sulfur dioxide into the stratosphere.",
        ]
    )
    assert cosine(anchor, paraphrase) > 0.6
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.4


# Lengths deliberately out of order, so a length sort inside embed() would have to be undone.
MIXED = [
    "short",
    "A considerably longer sentence about protein folding, chaperones and misfolded "
    "aggregates in neurodegenerative disease.",
    "",
    "medium length text about the weather today",
    "x " * 400,
    "Tax law: deductions for home offices",
    "The quarterly report is due on Friday; please send your numbers by Wednesday.",
]


def test_batch_equals_one_by_one_in_input_order(embedder: LocalEmbedder) -> None:
    batched = embedder.embed(MIXED)
    for i, text in enumerate(MIXED):
        # By default every text runs alone, so its vector depends on nothing but the text.
        np.testing.assert_array_equal(batched[i], embedder.embed([text])[0])


def test_texts_spread_over_worker_threads_get_the_vectors_they_get_alone(
    embedder: LocalEmbedder,
) -> None:
    # Each model call runs on one core whichever worker makes it, so spreading the texts of one
    # call over two workers, or embedding from several caller threads at once, changes no bit.
    texts = MIXED * 3
    alone = np.stack([embedder.embed([text])[0] for text in texts])
    spread = LocalEmbedder(threads=2).embed(texts)
    np.testing.assert_array_equal(spread, alone)
    shared = LocalEmbedder(threads=2)
    with ThreadPoolExecutor(4) as callers:
        results = list(callers.map(lambda text: shared.embed([text])[0], texts))
    np.testing.assert_array_equal(np.stack(results), alone)


def test_larger_batches_restore_input_order(embedder: LocalEmbedder) -> None:
    alone = embedder.embed(MIXED)
    batched = LocalEmbedder(batch_size=4, threads=1).embed(MIXED)
    similarity = batched @ alone.T
    for i in range(len(MIXED)):
        # Row i is text i, not a neighbour's vector. It is not bit-identical: the int8 model
        # quantizes activations per call, so batch-mates and padding move it a little.
        assert np.argmax(similarity[i]) == i
        assert similarity[i, i] > 0.95, i  # ~0.99 typically; 0.96 for "" padded to 256
    # Sorted by length, batch-mates are alike: on Loci's chunks the mean cosine to the text
    # alone is 0.9956 at batch 4 (minimum 0.990; bench/embed_throughput.py --check).
    assert np.mean(np.diag(similarity)) > 0.985


def test_the_bundled_model_has_no_fused_skip_layer_norm() -> None:
    # ONNX Runtime's CPU kernel for SkipLayerNormalization is several times slower than Add +
    # LayerNormalization; the export writes the fused op back (scripts/export_onnx.py) and the
    # embedder keeps the optimizer from fusing it again. A re-export that forgot would cost a
    # quarter of the embedding speed with nothing else to show for it.
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(MODEL_FILE_PATH), load_external_data=False)
    ops = [node.op_type for node in model.graph.node]
    assert "SkipLayerNormalization" not in ops
    assert ops.count("LayerNormalization") == 12  # two per layer, six layers
    # Still int8: the 6 QKV projections and the 18 other matrix products of the six layers.
    assert ops.count("QAttention") == 6 and ops.count("MatMulInteger") == 18


def test_long_text_is_truncated_without_error(embedder: LocalEmbedder) -> None:
    head = "Retrieval augmented generation cites the passages it used. " * 40  # > 254 tokens
    first, second = embedder.embed([head + "apples " * 3000, head + "volcanoes " * 3000])
    assert embedder.count_tokens(head) > embedder.max_tokens
    # Everything past the model's 256 positions is cut, so the different tails cannot matter.
    assert cosine(first, second) > 0.9999
    np.testing.assert_allclose(np.linalg.norm(first), 1.0, atol=1e-5)


def test_huge_text_embeds_quickly_as_its_beginning(embedder: LocalEmbedder) -> None:
    opening = "Chapter one. It was a bright cold day in April, and the clocks were striking. "
    huge = opening * 250_000  # 20 MB
    started = time.perf_counter()
    vector = embedder.embed([huge])[0]
    assert time.perf_counter() - started < 10  # a full tokenization alone would take ~10 s
    np.testing.assert_array_equal(vector, embedder.embed([opening * 40])[0])


def test_count_tokens_matches_the_tokenizer(
    embedder: LocalEmbedder, reference_tokenizer: Tokenizer
) -> None:
    samples = [
        "Hello, world!",
        "Ünïcödé, naïve café — and 東京 and emoji 🙂",
        "tab\tand\nnewlines\r\nmixed",
        "supercalifragilisticexpialidocious " + "a" * 150,  # over-long word becomes one [UNK]
    ]
    for text in samples:
        expected = plain_count(reference_tokenizer, text)
        assert embedder.count_tokens(text) == expected, text


def test_count_tokens_of_long_text_is_exact(
    embedder: LocalEmbedder, reference_tokenizer: Tokenizer
) -> None:
    # Long texts are counted piecewise; the sum must equal a single pass over the whole text,
    # including a long stretch without any whitespace.
    paragraph = "Ünïcödé naïve café, 東京 rocks; words-with-hyphens and [brackets].\n"
    text = paragraph * 3000 + "y" * 150_000 + " tail " + paragraph * 10
    expected = plain_count(reference_tokenizer, text)
    assert embedder.count_tokens(text) == expected


def test_count_tokens_of_megabytes_is_fast(embedder: LocalEmbedder) -> None:
    sentence = "An ordinary sentence of English prose, repeated to make a big document. "
    text = sentence * 70_000
    assert len(text) > 5_000_000
    started = time.perf_counter()
    count = embedder.count_tokens(text)
    elapsed = time.perf_counter() - started
    assert count == embedder.count_tokens(sentence) * 70_000
    assert elapsed < 30  # about 2 s on 2 cores; one unsplit encode() takes several times that


def test_empty_inputs(embedder: LocalEmbedder) -> None:
    assert embedder.count_tokens("") == 0
    assert embedder.embed([]).shape == (0, 384)
    vector = embedder.embed([""])
    assert vector.shape == (1, 384)
    np.testing.assert_allclose(np.linalg.norm(vector), 1.0, atol=1e-5)


def test_a_bare_string_is_refused(embedder: LocalEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("not a list")


def test_count_tokens_of_awkward_text_matches_the_tokenizer(
    embedder: LocalEmbedder, reference_tokenizer: Tokenizer
) -> None:
    """Short texts are counted as sums of memoised word counts: exact on every line, paragraph
    and sentence of multilingual notes, and on the whole of them, counted twice (cold, warm)."""
    notes = text_files.MIXED_NOTES
    pieces = [notes, *notes.split("\n\n"), *notes.splitlines(), *notes.split(". ")]
    for _ in range(2):
        for text in pieces:
            expected = plain_count(reference_tokenizer, text)
            assert embedder.count_tokens(text) == expected, text


def test_count_tokens_next_to_every_whitespace_character(
    embedder: LocalEmbedder, reference_tokenizer: Tokenizer
) -> None:
    # Some characters Python splits at are control characters the tokenizer deletes, gluing
    # "ab" and "cd" into one word ("abcd"): those must not be counted as two words.
    for char in (c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()):
        for text in (f"ab{char}cd", f"un{char}believable", f"{char}x{char}"):
            expected = plain_count(reference_tokenizer, text)
            assert embedder.count_tokens(text) == expected, repr(text)


def test_count_tokens_of_random_strings_matches_the_tokenizer(
    embedder: LocalEmbedder, reference_tokenizer: Tokenizer
) -> None:
    spaces = [c for c in map(chr, range(0x3001)) if c.isspace()]
    alphabet = [
        *"abcxyzéüß東京한국,.;:-'\"()[]#@/\u0301\u0303\u200b\u00ad\x00\x07\ufffd🙂",
        *["[MASK]", "[CLS]", "the", "##ing", "un", "q" * 120],
        *spaces,
        *[" "] * 20,
    ]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        expected = plain_count(reference_tokenizer, text)
        assert embedder.count_tokens(text) == expected, repr(text)


def test_words_read_in_pieces_are_the_ones_outside_the_models_vocabulary(
    embedder: LocalEmbedder,
) -> None:
    # Every word of this question is one token of MiniLM's vocabulary (punctuation included).
    assert embedder.words_in_pieces("Which monarchs of the United Kingdom were married?") == 0
    # Names and codes it reads as subword pieces: "turturro" and "coen"; "ww1" and a misspelling.
    assert embedder.words_in_pieces("John Turturro 1991 Coen Brothers film") == 2
    assert embedder.words_in_pieces("why did the us volunterilay enter ww1") == 2
    # A symbol it has no token for at all counts too; case and accents do not ("Café" is "cafe").
    assert embedder.words_in_pieces("Café ☃") == 1
    assert embedder.words_in_pieces("") == 0
