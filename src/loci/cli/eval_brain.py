"""`loci eval --questions` and `--from-feedback`: evaluating a brain you use, with your own
questions (see `loci.eval.brain`), and turning thumbs-down answers into such questions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from loci.cli.context import existing_brain, service
from loci.cli.output import emit_json, out

if TYPE_CHECKING:
    from loci.eval.brain import BrainEvaluation, QuestionResult

MARK = {"pass": "[green]pass[/green]", "fail": "[red]fail[/red]", "unjudged": "[dim]—[/dim]"}


def run_questions(path: Path, brain_name: str | None, k: int, json_: bool) -> None:
    from loci.eval.brain import evaluate_brain
    from loci.eval.questions import load_questions

    questions = load_questions(path)  # a bad line stops here, before anything runs
    brain = existing_brain(brain_name)
    result = evaluate_brain(service(), brain, questions, k)
    if json_:
        emit_json(result)
        return
    table = Table("line", "result", "rank", "question", "top documents", "ms", box=None)
    for r in result.results:
        table.add_row(
            str(r.line),
            MARK[r.verdict],
            str(r.rank) if r.rank else "",
            escape(r.question) + _why(r),
            escape(", ".join(r.top[:3])),
            f"{r.latency_ms:.0f}",
        )
    out.print(table)
    out.print(_summary(result))


def _why(r: QuestionResult) -> str:
    notes = []
    if r.document_found is False:
        notes.append("expected document not in the top hits")
    if r.missing:
        notes.append(f"not in this brain: {', '.join(r.missing)}")
    if r.text_found is False:
        notes.append("no hit contains the phrase")
    return f"\n[dim]{escape('; '.join(notes))}[/dim]" if notes else ""


def _summary(e: BrainEvaluation) -> str:
    lines = [f"\n[bold]{e.brain}[/bold] · {e.questions} questions · top {e.k} passages"]
    if e.pass_rate is None:
        lines.append("no question has an expectation, so none was judged")
    else:
        band = e.confidence
        lines.append(
            f"passed {e.passed} of {e.judged}: {e.pass_rate:.1%}"
            f" (95% Wilson band {band.low:.1%} – {band.high:.1%})"
        )
    if e.recall_at_k is not None and e.mrr is not None:
        lines.append(
            f"over {e.with_document} with an expected document:"
            f" Recall@{e.k} {e.recall_at_k:.3f} · MRR {e.mrr:.3f}"
        )
    lines.append(f"search latency p50 {e.p50_ms:.0f} ms · p95 {e.p95_ms:.0f} ms")
    if e.unjudged:
        lines.append(
            f"[dim]{e.unjudged} question{'s' if e.unjudged > 1 else ''} without an expectation"
            f" {'were' if e.unjudged > 1 else 'was'} run but not judged:"
            ' add "expect": {"document": …} or {"text": …} to judge them[/dim]'
        )
    return "\n".join(lines)


def print_feedback_questions(brain_name: str | None) -> None:
    """The brain's thumbs-down answers as a questions file, one JSON object per line."""
    brain = existing_brain(brain_name)
    from loci.eval.feedback import feedback_questions

    for line in feedback_questions(service().answers.rated_answers(brain, "down")):
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
