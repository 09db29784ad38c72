"""Answers graded on a labelled set: does `loci ask` state the facts asked for and cite the file
that states them — and refuse what the files cannot answer?

    python bench/answer_quality.py                          # every corpus of bench/answers/
    python bench/answer_quality.py --split test             # the held-out half, once per change
    python bench/answer_quality.py --corpus bench/answers/notes --language de --json
    python bench/answer_quality.py --split test --summary   # the figures as one JSON object
    python bench/answer_quality.py --model http://127.0.0.1:11434/v1 --model-name qwen3:8b
    python bench/answer_quality.py --vault bench/data/foam-vault      # a vault's answers.jsonl
    python bench/answer_quality.py --vault bench/data/nushell-book/ja \
        --questions bench/vaults/nushell-answers.jsonl --language ja

A corpus is a folder with `docs/` (the files, added to a brain of their own as `loci add docs/`
adds them, and indexed) and `questions.jsonl` (bench/answers/README.md describes a question:
its language, the kind of answer it asks for, the file that states it and the facts an answer
must say, each as a list of acceptable spellings, or `"document": null` when the files cannot
answer it). Each question is asked as `loci ask` asks it: with no model configured (rule routing,
grading by closeness, the extractive answer), or through the model at `--model`.

Each question ends one of four ways:
- **correct**: answered, every fact said (case, whitespace and Markdown's `*` and backticks
  aside) and the file cited;
- **wrong**: answered, but a fact is missing, the file is not cited, or the files cannot answer
  it at all;
- **refused wrongly**: "nothing relevant" (`no_relevant_sources`) although the files answer it;
- **refused rightly**: refused, and the files cannot answer it.
It prints those per language and per kind, the goals' three shares (correct of the answerable,
wrong of all, refused of the unanswerable) and the latency of an ask (p50, p95).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loci.answer.events import final_answer
from loci.app import build_service
from loci.config import load_settings
from loci.service import Loci

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "answers"
_JOINS = r"[0-9A-Za-z\u00c0-\u024f]"  # what continues a Latin word
Outcome = Literal["correct", "wrong", "refused wrongly", "refused rightly"]
OUTCOMES: tuple[Outcome, ...] = ("correct", "wrong", "refused wrongly", "refused rightly")


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    language: str
    kind: str
    document: str | None  # None: the files do not answer it
    facts: tuple[tuple[str, ...], ...]  # each fact: its acceptable spellings
    split: str


@dataclass(frozen=True)
class Graded:
    question: Question
    outcome: Outcome
    why: str  # for a wrong answer: what was missing
    answer: str
    cited: tuple[str, ...]
    ms: float


def load_questions(path: Path) -> list[Question]:
    """The questions of a JSON Lines file: this set's format, or the older vaults' (`answer`:
    the spellings of one fact)."""
    questions = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        facts = row.get("facts")
        if facts is None:
            facts = [row["answer"]] if row.get("answer") else []
        questions.append(
            Question(
                id=row.get("id", f"{path.parent.name}-{number}"),
                text=row["question"],
                language=row.get("language", "en"),
                kind=row.get("kind", "none" if row["document"] is None else "fact"),
                document=row["document"],
                facts=tuple(tuple(spellings) for spellings in facts),
                split=row.get("split", "dev"),
            )
        )
    return questions


def plain(text: str) -> str:
    """Text as compared: lower case, one space, without Markdown's emphasis and code marks."""
    return " ".join(re.sub(r"[*`]", "", text).lower().split())


def says(text: str, spellings: Sequence[str]) -> bool:
    """Whether `text` says one of `spellings`, as whole words ("2" is not found in "2025"). A
    Latin letter or a digit beside it joins a word; a Japanese or Chinese character does not."""
    flat = plain(text)
    return any(
        re.search(rf"(?<!{_JOINS}){re.escape(plain(s))}(?!{_JOINS})", flat) for s in spellings
    )


def outcome_of(
    question: Question, refused: bool, answer: str, cited: set[str]
) -> tuple[Outcome, str]:
    if refused:
        return ("refused rightly", "") if question.document is None else ("refused wrongly", "")
    if question.document is None:
        return "wrong", "answered what the files cannot answer"
    missing = [spellings[0] for spellings in question.facts if not says(answer, spellings)]
    if missing:
        return "wrong", "missing " + "; ".join(missing)
    if question.document not in cited:
        return "wrong", f"does not cite {question.document}"
    return "correct", ""


@contextmanager
def scratch_service(keep: Path | None, model: str | None, model_name: str | None) -> Iterator[Loci]:
    """Loci over `keep`, or over a scratch data directory removed afterwards; with `model`, its
    answers written by the OpenAI-compatible model there (key: LOCI_LLM_API_KEY)."""
    llm = {}
    if model:
        llm = {
            "llm_base_url": model,
            "llm_model": model_name or "default",
            "llm_api_key": os.environ.get("LOCI_LLM_API_KEY"),
        }
    with tempfile.TemporaryDirectory(prefix="loci-answers-") as scratch:
        loci = build_service(load_settings(home=keep or Path(scratch), **llm))
        try:
            yield loci
        finally:
            loci.store.close()


def add_files(loci: Loci, brain_name: str, folder: Path) -> dict[int, str]:
    """Every file under `folder` added to the brain as `loci add` adds a folder, and indexed;
    document id -> its path under `folder` (a document made from a file's attachment takes the
    path of the file it came in)."""
    brain = loci.brain(brain_name)
    path_of: dict[int, str] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        added = loci.library.add_file(brain, path)
        path_of[added.document.id] = path.relative_to(folder).as_posix()
    loci.library.wait_for(brain, list(path_of))
    for document in loci.library.documents(brain):  # attachments, added beside their file
        parent = document.metadata.get("attached_to")
        if document.id not in path_of and isinstance(parent, int) and parent in path_of:
            path_of[document.id] = path_of[parent]
    return path_of


def ask(loci: Loci, brain_name: str, path_of: dict[int, str], question: Question) -> Graded:
    brain = loci.brain(brain_name)
    started = time.perf_counter()
    done = final_answer(loci.answers.ask(brain, question.text))
    ms = (time.perf_counter() - started) * 1000
    cited = tuple(dict.fromkeys(path_of.get(c.document_id, "?") for c in done.citations))
    refused = done.decision == "no_relevant_sources"
    outcome, why = outcome_of(question, refused, done.answer, set(cited))
    return Graded(question, outcome, why, done.answer, cited, ms)


def table(graded: Sequence[Graded], by: str) -> list[dict[str, object]]:
    groups: dict[str, list[Graded]] = defaultdict(list)
    for g in graded:
        groups[getattr(g.question, by)].append(g)
    rows = []
    for key in sorted(groups):
        rows.append({by: key, "n": len(groups[key]), **counts(groups[key])})
    return rows


def counts(graded: Sequence[Graded]) -> dict[str, int]:
    return {o: sum(g.outcome == o for g in graded) for o in OUTCOMES}


def summary(graded: Sequence[Graded]) -> dict[str, object]:
    answerable = [g for g in graded if g.question.document is not None]
    unanswerable = [g for g in graded if g.question.document is None]
    got = counts(graded)
    ms = sorted(g.ms for g in graded)

    def share(part: int, whole: int) -> float:
        return round(part / whole, 3) if whole else 0.0

    return {
        "questions": len(graded),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        **got,
        "correct of answerable": share(got["correct"], len(answerable)),
        "wrong of all": share(got["wrong"], len(graded)),
        "refused of unanswerable": share(got["refused rightly"], len(unanswerable)),
        "p50 ms": round(statistics.median(ms), 1) if ms else 0.0,
        "p95 ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1) if ms else 0.0,
    }


def print_table(rows: Sequence[dict[str, object]]) -> None:
    if not rows:
        return
    columns = list(rows[0])
    widths = [max(len(str(c)), *(len(str(r[c])) for r in rows)) for c in columns]
    print("  ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)))
    for row in rows:
        print("  ".join(str(row[c]).ljust(w) for c, w in zip(columns, widths, strict=True)))
    print()


def corpora(args: argparse.Namespace) -> list[tuple[str, Path, list[Question]]]:
    """(brain name, folder of files, questions) of each corpus asked."""
    if args.vault is not None:
        folder = args.vault / "notes" if (args.vault / "notes").is_dir() else args.vault
        questions = load_questions(args.questions or args.vault / "answers.jsonl")
        return [("vault", folder, questions)]
    found = []
    for corpus in args.corpus or sorted(p.parent for p in ANSWERS.glob("*/questions.jsonl")):
        found.append((corpus.name, corpus / "docs", load_questions(corpus / "questions.jsonl")))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", type=Path, action="append", help="default: all of bench/answers"
    )
    parser.add_argument("--vault", type=Path, help="a Markdown vault with its answers.jsonl")
    parser.add_argument("--questions", type=Path, help="with --vault: another questions file")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all")
    parser.add_argument("--language", help="only the questions in this language (ISO 639-1)")
    parser.add_argument("--model", help="an OpenAI-compatible base URL: answers by that model")
    parser.add_argument("--model-name", help="with --model: the model to ask")
    parser.add_argument("--keep", type=Path, help="reuse/keep the data directory here")
    parser.add_argument("--json", action="store_true", help="each question's outcome as JSON")
    parser.add_argument(
        "--summary", action="store_true", help="only the figures, as one JSON object"
    )
    args = parser.parse_args()

    graded: list[Graded] = []
    with scratch_service(args.keep, args.model, args.model_name) as loci:
        for brain_name, folder, questions in corpora(args):
            asked = [
                q
                for q in questions
                if args.split in ("all", q.split) and args.language in (None, q.language)
            ]
            if not asked:
                continue
            path_of = add_files(loci, brain_name, folder)
            graded += [ask(loci, brain_name, path_of, q) for q in asked]
    if args.json:
        for g in graded:
            print(
                json.dumps(
                    {"id": g.question.id, "question": g.question.text, "outcome": g.outcome,
                     "why": g.why, "cited": g.cited, "ms": round(g.ms, 1), "answer": g.answer},
                    ensure_ascii=False,
                )
            )  # fmt: skip
    figures = summary(graded)
    if args.summary:
        by = {"by language": table(graded, "language"), "by kind": table(graded, "kind")}
        print(json.dumps({**figures, **by}, indent=2))
        return
    print_table(table(graded, "language"))
    print_table(table(graded, "kind"))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
