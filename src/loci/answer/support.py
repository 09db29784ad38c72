"""A model's answer checked against its citations, sentence by sentence (the seed's
"self-reflective answer grading"), and answered once more when a sentence fails.

Each sentence of the answer that states something is held against the passages it cites (all the
answer's sources when it cites none). It is supported when everything specific in it — a number,
a date, a name, a command in backticks or quotes — is in those passages, and its other words are
there too, or the shipped embedder finds a unit of them close to it in meaning (where it reads
their language). Otherwise it is unsupported, with the reason: "“1991” is not in [2]". The
checks are deliberately literal: a model that paraphrases is still supported by the passage's
words and meaning, a model that invents a number or a name is not.

The thresholds were set, not fitted: no model answers here to fit them on (bench/answer_quality.py
--model grades the whole answer when a model is at hand).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass

import numpy as np

from loci.answer import prompts
from loci.answer.events import AskEvent, Checked, Revise, Status, Token
from loci.answer.grading import question_words, text_keys
from loci.answer.quoting import Reader
from loci.answer.sources import CITATION, Source
from loci.answer.units import Unit, units, words
from loci.errors import LLMError
from loci.language import language_of
from loci.llm.client import Chat, Message
from loci.sentences import split_sentences

log = logging.getLogger(__name__)

MIN_WORDS = 4  # shorter: a heading, "In short:", not a claim
WORDS_SUPPORT = 0.6  # share of a claim's content words its passages must hold …
MEANING_SUPPORT = 0.6  # … or the cosine of a unit of them to it
# Specific things a claim says: numbers (with their decimals), code, quoted words, and names —
# a capitalised word that does not start the sentence.
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_CODE = re.compile(r"`([^`\n]+)`|\"([^\"\n]{2,60})\"|“([^”\n]{2,60})”")
_NAME = re.compile(r"(?<=[^\s.!?] )[A-Z][\w'’-]*[\w]")


@dataclass(frozen=True)
class Claim:
    text: str
    sources: tuple[int, ...]  # the numbers it cites
    supported: bool
    reason: str  # why not; "" when supported

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "sources": list(self.sources),
            "supported": self.supported,
            "reason": self.reason,
        }


def check(answer: str, sources: Sequence[Source], reader: Reader) -> list[Claim]:
    """The answer's claims, each held against the passages it cites."""
    by_number = {s.number: s for s in sources}
    claims: list[tuple[str, tuple[int, ...]]] = []
    for line in answer.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
        if not line or line.startswith("#"):
            continue
        for sentence in split_sentences(line, language_of(line)):
            cited = tuple(
                int(n) for mark in CITATION.findall(sentence) for n in re.split(r"\D+", mark) if n
            )
            text = CITATION.sub("", sentence).strip()
            if words(text) >= MIN_WORDS:
                claims.append((text, tuple(n for n in cited if n in by_number)))
    checked: list[Claim] = []
    pending: list[tuple[int, list[str]]] = []  # claims that need the embedder, and their units
    for text, cited in claims:
        passages = [by_number[n] for n in cited] or list(sources)
        where = ", ".join(f"[{n}]" for n in cited) if cited else "its sources"
        held = set().union(*(text_keys(_full(s)) for s in passages)) if passages else set()
        missing = [thing for thing in _specifics(text) if not _said(thing, passages, held)]
        if missing:
            checked.append(Claim(text, cited, False, f"“{missing[0]}” is not in {where}"))
            continue
        asked = question_words(text)
        total = sum(w for _, w in asked)
        share = sum(w for word, w in asked if word & held) / total if total else 1.0
        if share >= WORDS_SUPPORT:
            checked.append(Claim(text, cited, True, ""))
            continue
        checked.append(Claim(text, cited, False, f"its words are not in {where}"))
        if reader.embed is not None and reader.reads(language_of(text)):
            pending.append((len(checked) - 1, [u.text for s in passages for u in _units(s)]))
    _by_meaning(checked, pending, reader)
    return checked


def _by_meaning(checked: list[Claim], pending: list[tuple[int, list[str]]], reader: Reader) -> None:
    """A claim whose words its passages lack, supported after all by a unit close in meaning:
    one batch for every such claim and the units of its passages."""
    if not pending or reader.embed is None:
        return
    texts = [checked[i].text for i, _ in pending]
    spans: list[tuple[int, int]] = []
    for _, found in pending:
        start = len(texts)
        texts += found
        spans.append((start, len(texts)))
    vectors = reader.embed(texts)
    for k, ((i, _), (start, end)) in enumerate(zip(pending, spans, strict=True)):
        if end > start and float(np.max(vectors[start:end] @ vectors[k])) >= MEANING_SUPPORT:
            claim = checked[i]
            checked[i] = Claim(claim.text, claim.sources, True, "")


def unsupported(claims: Sequence[Claim]) -> list[Claim]:
    return [c for c in claims if not c.supported]


def _full(source: Source) -> str:
    c = source.hit.citation
    return " ".join([*c.heading_path, c.title or "", c.name, source.hit.text])


def _units(source: Source) -> list[Unit]:
    return units(source.hit.text, source.hit.citation.heading_path)


def _specifics(text: str) -> list[str]:
    found = [m.group() for m in _NUMBER.finditer(text)]
    found += [next(g for g in m.groups() if g) for m in _CODE.finditer(text)]
    found += [m.group() for m in _NAME.finditer(text)]
    return list(dict.fromkeys(found))


def _said(thing: str, passages: Sequence[Source], held: set[str]) -> bool:
    """Whether the passages say `thing`: verbatim (case and spaces aside), or, for a name, a word
    of theirs a letter off or stemmed alike ("Osei's", "Prof.")."""
    flat = " ".join(thing.lower().split())
    if any(flat in " ".join(_full(s).lower().split()) for s in passages):
        return True
    if _NUMBER.fullmatch(thing):
        return False
    return bool(text_keys(thing) & held)


@dataclass(frozen=True)
class Held:
    """A model's answer after it was held to its citations."""

    text: str  # the answer as it stands, any claim still unsupported marked under it
    claims: tuple[Claim, ...]
    revision_failed: bool  # the second answer broke off: the first one stands


def held_to_citations(
    chat: Chat, messages: Sequence[Message], written: str, sources: Sequence[Source], reader: Reader
) -> Generator[AskEvent, None, Held]:
    """Check the answer `written` to `messages`; if a claim fails, withdraw it (`Revise`) and
    ask once more, naming what failed; mark what still fails. Yields what a reader sees."""
    yield Status("Checking the answer against the passages it cites…")
    claims = check(written, sources, reader)
    failing = unsupported(claims)
    failed = False
    if failing:
        named = "\n".join(f"- {c.text} ({c.reason})" for c in failing)
        yield Status(f"{_sentences(len(failing))} not supported by its sources; asking again…")
        again: list[Message] = [
            *messages,
            {"role": "assistant", "content": written},
            {"role": "user", "content": prompts.REVISE.format(claims=named)},
        ]
        yield Revise(f"{_sentences(len(failing))} not supported by its sources")
        try:
            revised = ""
            for piece in chat.stream(again):
                revised += piece
                yield Token(piece)
        except LLMError as error:  # the first answer stands, its claims marked
            log.info("the second answer failed: %s", error)
            failed = True
            yield Revise("the second answer failed; the first one stands")
            yield Token(written)
        else:
            written = revised
            claims = check(written, sources, reader)
            failing = unsupported(claims)
    yield Checked(tuple(claims))
    if failing:
        marked = "\n\nNot supported by the passages it cites:\n" + "\n".join(
            f"- “{c.text}” ({c.reason})" for c in failing
        )
        yield Token(marked)
        written += marked
    return Held(written, tuple(claims), failed)


def _sentences(n: int) -> str:
    return "1 sentence is" if n == 1 else f"{n} sentences are"
