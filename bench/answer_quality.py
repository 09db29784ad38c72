"""Answers without a model, graded: does `loci ask` say the fact asked for, and refuse when the
vault does not hold it?

    python bench/answer_quality.py [--vault bench/data/foam-vault] [--keep DIR] [--json]
    python bench/answer_quality.py --vault bench/data/nushell-book/ja \
        --questions bench/vaults/nushell-answers.jsonl --language ja

The vault's notes are added to a scratch brain as `loci add` adds a folder and indexed by the
worker. Each line of the vault's `answers.jsonl` (or of `--questions`, with a `language` each)
is a question with the short spans that answer it (a name, a number, a key, a setting) and the
note that states it, or a question the vault cannot answer (`"document": null`). Each is asked
as `loci ask` asks it with no model configured: rule routing, grading by closeness, the
extractive answer.

Figures, over the answerable questions:
- **says it**: the answer's text holds one of the spans (case, whitespace and Markdown's `*`
  and backticks aside);
- **first line**: the answer's first sentence holds it (what a person reads first);
- **cites the note**: the expected note is among the sources the answer cites;
- **in a cited passage**: a passage the answer cites holds a span; the gap from it to "says
  it" is the choice of sentence within the passages chosen;
- **refused**: answered "nothing relevant" (`no_relevant_sources`) although the vault holds it.
Over the unanswerable ones: **refused**, the honest answer.

The baseline quotes the first four sentences of the best search hit: what choosing sentences
adds over reading the top passage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vault_ranking import add_vault, notes_of, vault_parser, vault_service

from loci.answer.events import Done, Sources, final_answer
from loci.answer.extractive import sentences
from loci.search.engine import SearchRequest
from loci.service import Loci

HERE = Path(__file__).resolve().parent
BASELINE_SENTENCES = 4
_JOINS = r"[0-9A-Za-z\u00c0-\u024f]"  # what continues a Latin word


@dataclass(frozen=True)
class Question:
    text: str
    document: str | None  # None: the vault does not answer it
    spans: tuple[str, ...]


@dataclass(frozen=True)
class Graded:
    question: Question
    says_it: bool
    first_line: bool
    cites_note: bool
    in_sources: bool
    refused: bool
    baseline_says_it: bool
    answer: str


def load_questions(path: Path, language: str | None = None) -> list[Question]:
    """The questions of `path` (JSON Lines); with `language`, those asked in it."""
    rows = [json.loads(line) for line in path.open() if line.strip()]
    if language:
        rows = [row for row in rows if row.get("language", language) == language]
    return [Question(row["question"], row["document"], tuple(row["answer"])) for row in rows]


def plain(text: str) -> str:
    """Text as compared: lower case, one space, without Markdown's emphasis and code marks."""
    return " ".join(re.sub(r"[*`]", "", text).lower().split())


def holds(text: str, spans: Sequence[str]) -> bool:
    """Whether `text` says one of `spans`, as whole words ("2" is not found in "2025"). A
    Latin letter or a digit beside it joins a word; a Japanese or Chinese character does not
    ("PowerShellなど")."""
    flat = plain(text)
    return any(
        re.search(rf"(?<!{_JOINS}){re.escape(plain(span))}(?!{_JOINS})", flat) for span in spans
    )


def answer_lines(answer: str) -> list[str]:
    """The quoted sentences of an extractive answer, in order (its "- … [n]" lines)."""
    return [line for line in answer.splitlines() if line.startswith("- ")]


def grade(loci: Loci, brain_name: str, doc_names: dict[int, str], q: Question) -> Graded:
    brain = loci.brain(brain_name)
    events = list(loci.answers.ask(brain, q.text))
    done: Done = final_answer(events)
    offered = [s["chunk_id"] for e in events if isinstance(e, Sources) for s in e.sources]
    passages = [chunk.text for chunk, _ in loci.store.chunks_with_documents(offered).values()]
    cited = {doc_names.get(c["document_id"]) for c in done.citations}
    hits = loci.searching.search(brain, SearchRequest(q.text, limit=1))
    baseline = " ".join(sentences(hits[0].text)[:BASELINE_SENTENCES]) if hits else ""
    refused = done.decision == "no_relevant_sources"
    # A refusal lists the closest passages as "not an answer": it says nothing, whatever they hold.
    lines = [] if refused else answer_lines(done.answer)
    return Graded(
        question=q,
        says_it=bool(lines) and holds("\n".join(lines), q.spans),
        first_line=bool(lines) and holds(lines[0], q.spans),
        cites_note=q.document in cited,
        in_sources=any(holds(text, q.spans) for text in passages) if q.spans else False,
        refused=refused,
        baseline_says_it=holds(baseline, q.spans) if q.spans else False,
        answer=done.answer,
    )


def report(graded: Sequence[Graded]) -> dict[str, object]:
    answerable = [g for g in graded if g.question.document is not None]
    unanswerable = [g for g in graded if g.question.document is None]

    def count(rows: Sequence[Graded], field: str) -> int:
        return sum(bool(getattr(g, field)) for g in rows)

    return {
        "answerable": len(answerable),
        "says it": count(answerable, "says_it"),
        "first line": count(answerable, "first_line"),
        "cites the note": count(answerable, "cites_note"),
        "in a cited passage": count(answerable, "in_sources"),
        "refused (wrongly)": count(answerable, "refused"),
        "baseline says it": count(answerable, "baseline_says_it"),
        "unanswerable": len(unanswerable),
        "refused (rightly)": count(unanswerable, "refused"),
    }


def main() -> None:
    parser = vault_parser("each question's grades as JSON")
    parser.add_argument("--questions", type=Path, help="default: the vault's answers.jsonl")
    parser.add_argument("--language", help="only the questions in this language (ISO 639-1)")
    args = parser.parse_args()
    questions = load_questions(args.questions or args.vault / "answers.jsonl", args.language)
    with vault_service(args.keep) as loci:
        doc_names = add_vault(loci, notes_of(args.vault))
        graded = [grade(loci, "vault", doc_names, q) for q in questions]
    if args.json:
        for g in graded:
            row = {k: v for k, v in g.__dict__.items() if k != "question"}
            print(json.dumps({"question": g.question.text, **row}, ensure_ascii=False))
    print(json.dumps({"vault": args.vault.name, **report(graded)}, indent=2))


if __name__ == "__main__":
    main()
