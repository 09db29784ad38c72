"""A questions file for evaluating a brain of your own: JSON Lines, one question each.

    {"question": "What is the garage door code?",
     "expect": {"document": "garage.md", "text": "4471"}}

`expect.document` names the document the answer should come from — its file name, title or id,
or a list of them (any one will do); `expect.text` is a phrase a retrieved passage must contain.
Either or both; a question without them (as `--from-feedback` writes) is run and shown but not
judged. Other keys on a line (a `reason`, where it came `from`) are kept for the reader and
ignored. A bad line is refused with its number: a typo in `expect` would otherwise quietly turn
a question into one that cannot fail.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loci.errors import InvalidInput

EXPECT_KEYS = ("document", "text")


@dataclass(frozen=True)
class Expectation:
    documents: tuple[str, ...] = ()  # names, titles or ids (as text); any one passes
    text: str | None = None

    @property
    def empty(self) -> bool:
        return not self.documents and self.text is None


@dataclass(frozen=True)
class Question:
    line: int  # 1-based, for messages that point at the file
    question: str
    expect: Expectation


def load_questions(path: Path) -> list[Question]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror or error}") from None
    questions = []
    for number, data in enumerate(raw.splitlines(), start=1):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"{path.name} line {number}: not UTF-8 text") from None
        if line.strip():
            questions.append(parse_line(line, number, path.name))
    if not questions:
        raise InvalidInput(f"{path.name} has no questions (one JSON object per line)")
    return questions


def parse_line(line: str, number: int, source: str = "questions") -> Question:
    def bad(why: str) -> InvalidInput:
        return InvalidInput(f"{source} line {number}: {why}")

    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        raise bad(f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(item, dict):
        raise bad('expected an object like {"question": ..., "expect": {...}}')
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise bad('"question" must be non-empty text')
    expect = item.get("expect", {})
    if expect is None:
        expect = {}
    if not isinstance(expect, dict):
        raise bad('"expect" must be an object with "document" and/or "text"')
    unknown = sorted(set(expect) - set(EXPECT_KEYS))
    if unknown:
        raise bad(f'unknown key {unknown[0]!r} in "expect" (document, text)')
    return Question(
        number, question.strip(), Expectation(_documents(expect, bad), _text(expect, bad))
    )


def _documents(expect: dict[str, Any], bad: Callable[[str], InvalidInput]) -> tuple[str, ...]:
    value = expect.get("document")
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    names = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, str | int) or not str(v).strip():
            raise bad('"expect.document" must be a document name or id, or a list of them')
        names.append(str(v).strip())
    if not names:
        raise bad('"expect.document" is an empty list')
    return tuple(names)


def _text(expect: dict[str, Any], bad: Callable[[str], InvalidInput]) -> str | None:
    value = expect.get("text")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise bad('"expect.text" must be a non-empty phrase')
    return " ".join(value.split())
