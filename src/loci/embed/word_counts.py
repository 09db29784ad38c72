"""Exact token counts of short texts, summed from memoised counts of their words.

The chunker asks for the token count of every block, sentence and overlap it considers, and with
the tokenizer doing all of that work it was half the time of parsing + chunking a text PDF. A
WordPiece tokenizer behind BERT's normaliser and pre-tokenizer never lets a token span
whitespace: the normaliser works character by character (whitespace becomes a space), the
pre-tokenizer splits at spaces before anything else, and WordPiece works inside what is left. So
a text's count is the sum of the counts of its whitespace-separated words, and prose repeats the
same few thousand words: after the first pages almost every word is a dictionary hit.

Two things are checked, once, rather than assumed:

* the tokenizer really is that kind (a BPE tokenizer glues a space to the word after it, and a
  SentencePiece one marks it, so their words are not independent); otherwise every text is
  tokenized whole.
* which characters `str.split()` cuts at are whitespace to the tokenizer too. BERT's normaliser
  deletes vertical tab, form feed, U+001C-U+001F and U+0085 as control characters, which glues
  the words either side together; a text holding such a character is tokenized whole.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from itertools import accumulate

from tokenizers import Tokenizer
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

__all__ = ["WordTokenCounter"]

# Every character str.split() cuts at lies below U+3001 (U+3000, the ideographic space, is the
# last); a test scans the whole Unicode range to keep this true.
_SPLIT_CHARS = tuple(c for c in map(chr, range(0x3001)) if c.isspace())
# Bounds the memo: at most this many words, each at most this long (longer "words" are URLs,
# hashes and base64, which rarely come back), so a few tens of megabytes at worst.
_MAX_WORDS = 200_000
_MAX_WORD_CHARS = 48


class WordTokenCounter:
    """`count(text)` = the number of tokens `tokenizer` gives `text` without special tokens.

    `tokenizer` must not truncate or pad. Safe to share between threads: the memo only ever
    gains correct entries (or is emptied), and each count is summed from a private snapshot.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._memo: dict[str, int] = {}
        self._lock = threading.Lock()
        self._unsplittable = _unsplittable(tokenizer)

    @property
    def by_words(self) -> bool:
        """False when this tokenizer is not word-additive and every text is tokenized whole."""
        return self._unsplittable is not None

    def count(self, text: str) -> int:
        if self._unsplittable is None or self._unsplittable.search(text):
            return self._whole(text)
        words = text.split()
        memo = self._memo
        try:
            return sum(map(memo.__getitem__, words))
        except KeyError:  # a word seen for the first time (or the memo was just emptied)
            return self._count_new(words)

    def _count_new(self, words: list[str]) -> int:
        known: dict[str, int] = {}
        missing: list[str] = []
        for word in set(words):
            tokens = self._memo.get(word)
            if tokens is None:
                missing.append(word)
            else:
                known[word] = tokens
        fresh = dict(zip(missing, self._count_each(missing), strict=True))
        known.update(fresh)
        with self._lock:
            if len(self._memo) + len(fresh) > _MAX_WORDS:
                self._memo.clear()  # crude, but a document's vocabulary comes back in pages
            self._memo.update((w, n) for w, n in fresh.items() if len(w) <= _MAX_WORD_CHARS)
        return sum(map(known.__getitem__, words))

    def _count_each(self, words: list[str]) -> list[int]:
        """Token counts of `words` from one tokenization of them joined by spaces, each token
        going to the word its first character is in. The tokenizer's cost per text (an Encoding
        object each) is about that of a dozen words' worth of characters, so this is nearly
        twice as fast as a batch of one-word texts."""
        if not words:
            return []
        starts = list(accumulate((len(word) + 1 for word in words[:-1]), initial=0))
        counts = [0] * len(words)
        encoding = self._tokenizer.encode(" ".join(words), add_special_tokens=False)
        for first, _ in encoding.offsets:
            counts[bisect_right(starts, first) - 1] += 1
        return counts

    def _whole(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


def _unsplittable(tokenizer: Tokenizer) -> re.Pattern[str] | None:
    """The characters str.split() cuts at that do not separate words for `tokenizer`, as a
    pattern; None when its counts do not add up over words at all."""
    if not (
        isinstance(tokenizer.model, WordPiece)
        and isinstance(tokenizer.pre_tokenizer, BertPreTokenizer)
        and isinstance(tokenizer.normalizer, BertNormalizer | None)
    ):
        return None
    probes = [f"a{c}a" for c in _SPLIT_CHARS]
    encodings = tokenizer.encode_batch(probes, add_special_tokens=False)
    apart = tokenizer.encode("a a", add_special_tokens=False).tokens
    glued = [c for c, e in zip(_SPLIT_CHARS, encodings, strict=True) if e.tokens != apart]
    if len(glued) == len(_SPLIT_CHARS):
        return None
    # An empty class never matches; "[^\s\S]" says so in a way re accepts.
    return re.compile("[" + "".join(re.escape(c) for c in glued) + "]" if glued else r"[^\s\S]")
