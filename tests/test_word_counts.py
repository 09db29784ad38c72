"""WordTokenCounter: word-by-word counts only where they add up, and a memo that stays bounded."""

from __future__ import annotations

import sys

import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from loci.embed import word_counts
from loci.embed.word_counts import WordTokenCounter
from tests.support import text_files
from tests.support.reference_tokenizer import plain_count, shipped_tokenizer


def test_every_character_python_splits_at_is_probed() -> None:
    every = {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}
    assert every == set(word_counts._SPLIT_CHARS)


def test_the_shipped_tokenizer_counts_by_words() -> None:
    counter = WordTokenCounter(shipped_tokenizer())
    assert counter.by_words


@pytest.mark.parametrize(
    "pre_tokenizer",
    [pre_tokenizers.ByteLevel(), pre_tokenizers.Metaspace(), pre_tokenizers.Whitespace()],
)
def test_tokenizers_whose_words_are_not_independent_are_counted_whole(
    pre_tokenizer: pre_tokenizers.PreTokenizer,
) -> None:
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "ab": 3}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizer
    counter = WordTokenCounter(tokenizer)
    assert not counter.by_words
    for text in ("a b", "ab ab", "a\x0bb", ""):
        assert counter.count(text) == plain_count(tokenizer, text)

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel()
    assert not WordTokenCounter(bpe).by_words


def test_the_memo_stays_bounded_and_counts_stay_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_counts, "_MAX_WORDS", 300)
    tokenizer = shipped_tokenizer()
    counter = WordTokenCounter(tokenizer)
    texts = [text_files.prose(60, seed=seed) + f" token{seed}x{seed * 7919}" for seed in range(400)]
    texts.append("long " + "x" * 500 + " words are counted but not kept")
    for text in texts + texts[::-1]:
        assert counter.count(text) == plain_count(tokenizer, text)
        assert len(counter._memo) <= 300
    assert all(len(word) <= word_counts._MAX_WORD_CHARS for word in counter._memo)
