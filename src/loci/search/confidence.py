"""How far to trust each search leg for this question: a number in [0, 1] per leg, which
fusion multiplies the leg's weight by (`loci.search.fusion.fuse`'s `confidences`).

The vector leg is trusted as far as its best passage stands above chance in this brain. The
brain's own vectors say what chance is (`loci.store.vector_background`): the query's cosine to
its passages has a mean and a spread, and the best of D documents drawn from that background
would, under a normal model, stay below the best passage found with probability Φ(z)^D, z being
how many spreads the best passage stands above the mean. That probability is the trust. An
English model reading English stands its best passage well clear (SciFact: 5.3 spreads, trust
≈ 1); the same model reading a script it cannot read (Arabic; a letter-substituted SciFact in
docs/benchmarks-journal.md) scores every passage alike, its best only 2.7 spreads up, where
thousands of unrelated passages would reach — trust ≈ 0, and fusion follows the words alone. D
counts documents, not passages: a document's passages share its title line and topic, so they
are not independent draws.

The text leg is trusted as far as the question's most specific word is specific in this
brain: BM25 finds a passage through its rare words, and a question whose every word is common
here ("Who produced the most films?" in a brain of film abstracts) matches thousands of
passages alike, ranked by how often and in how short a passage the common words fall — a
ranking that says little. The trust is the best matching term's idf over the idf of a word in
one passage (the most specific a word can be here): maxIDF, the classic pre-retrieval
predictor of how well a query will do (He and Ounis, "Inferring Query Performance Using
Pre-retrieval Predictors", SPIRE 2004), on the brain's own scale.

One question leaves the words less than their tuned share: a question with nothing specific in
it, neither for the embedder nor for the brain. A word the embedder reads only in pieces (split
into subword tokens, or unknown to its vocabulary: a name like "Turturro", a code like "ww1", a
term like "legionella") is one it approximates and BM25 matches exactly; a question whose every
word is one token of the embedder's vocabulary, and whose rarest word is common in this brain
("Which monarchs of the United Kingdom were married to a German?" among encyclopedia
abstracts), is one the embedder reads as written, where BM25 adds the passages that share its
common words: lists of monarchs, the House of Hanover. The words keep 0.4 of their share for
that question: 0.2 of the fusion instead of 0.5 (`text_share`). Both limits were chosen over
three BEIR sets and two vaults (docs/benchmarks-journal.md, "A question with nothing specific
in it"); the signals are the embedder's own vocabulary and the brain's own counts.

Nothing in the trusts is fitted to a data set: the mean and spread come from the brain, the
rest from the normal model; the idfs from the brain's own counts. Other signals — whether the
embedder reads the question's language at all — multiply into the same number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from loci.embed.base import Vectors
from loci.models import TextCeiling
from loci.store.lexical_index import idf
from loci.store.vector_background import MIN_VECTORS, VectorBackground

# The words' trust from which a question's rarest word counts as specific in this brain: its idf
# 0.65 of a one-passage word's, i.e. in fewer than about N^0.35 of N passages (~25 of 10,000).
SPECIFIC_WORD_TRUST = 0.65


def vector_trust(
    ranked: Sequence[tuple[int, float]], background: VectorBackground | None, query: Vectors
) -> float:
    """Trust in the vector leg for this query: P(chance would not reach its best cosine)."""
    if not ranked or background is None:
        return 1.0  # nothing to judge by: the leg keeps its weight
    mean, spread = background.similarity(query)
    if spread <= 1e-6:
        return 1.0
    z = (ranked[0][1] - mean) / spread
    return math.exp(max(background.documents, 1) * _log_normal_cdf(z))


def _log_normal_cdf(z: float) -> float:
    """log Φ(z), accurate in both tails."""
    value = 0.5 * math.erfc(-z / math.sqrt(2.0))
    return math.log(value) if value > 0 else -math.inf


def text_trust(ceiling: TextCeiling | None) -> float:
    """Trust in the text leg for this query: its most specific matching term's idf over that of
    a term found in one passage of the brain, in [0, 1]; 1 when the brain cannot say."""
    if ceiling is None or ceiling.score <= 0:
        return 1.0  # no statistics, or nothing matched: the leg has nothing to weigh anyway
    if ceiling.rows < MIN_VECTORS:
        # As for the vector leg's background: a brain of a few passages says too little to
        # call a word common (in a note and the saved answer about it, every word of the
        # question is in every passage), and the words keep their weight.
        return 1.0
    rarest = idf(ceiling.rows, 1)
    return min(max(ceiling.best_idf / rarest, 0.0), 1.0)


def text_share(
    share: float, unspecific_words: float, words_in_pieces: int | None, trust_in_words: float
) -> float:
    """The text leg's share of fusion for this question: `share`, times `unspecific_words` when
    nothing in the question is specific: the embedder reads every word whole (`words_in_pieces`
    0) and the words' trust (`text_trust`) is under SPECIFIC_WORD_TRUST. `words_in_pieces`
    None: the embedder cannot say (its tokenizer is not at hand), and the share stays."""
    if words_in_pieces == 0 and trust_in_words < SPECIFIC_WORD_TRUST:
        return share * unspecific_words
    return share
