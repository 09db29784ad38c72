"""`loci quiz` and `loci flashcards`: study what a brain (or one topic in it) holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, out

if TYPE_CHECKING:
    from loci.answer.study import QuizQuestion

TopicArgument = Annotated[
    str | None, typer.Argument(help="A topic to study (default: recent documents).")
]


def register(app: typer.Typer) -> None:
    app.command("quiz")(exits_cleanly(quiz))
    app.command("flashcards")(exits_cleanly(flashcards))


def _plain(question: QuizQuestion) -> dict[str, object]:
    return {
        "question": question.question,
        "choices": list(question.choices),
        "answer": question.answer,
        "explanation": question.explanation,
    }


def quiz(
    topic: TopicArgument = None,
    count: Annotated[int, typer.Option("--count", "-n", help="Questions (1–30).")] = 5,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Multiple-choice questions from your documents, each with its source.

    The answers come at the end."""
    loci = service()
    questions = loci.answers.quiz(existing_brain(brain), topic, count)
    if json_:
        emit_json([{**_plain(q), "source": q.source.citation()} for q in questions])
        return
    if not questions:
        out.print("not enough material for a quiz yet — add documents or try another topic")
        return
    for i, q in enumerate(questions, start=1):
        out.print(f"\n[bold]{i}. {escape(q.question)}[/bold]")
        for letter, choice in zip("abcd", q.choices, strict=False):
            out.print(f"   {letter}) {escape(choice)}")
    out.print("\n[bold]Answers[/bold]")
    for i, q in enumerate(questions, start=1):
        where = q.source.label()
        out.print(f"  {i}. {'abcd'[q.answer]}) {escape(q.choices[q.answer])} — {escape(where)}")


def flashcards(
    topic: TopicArgument = None,
    count: Annotated[int, typer.Option("--count", "-n", help="Cards (1–30).")] = 10,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Flashcards (front, back, source) from your documents."""
    loci = service()
    cards = loci.answers.flashcards(existing_brain(brain), topic, count)
    if json_:
        emit_json(
            [{"front": c.front, "back": c.back, "source": c.source.citation()} for c in cards]
        )
        return
    if not cards:
        out.print("not enough material for flashcards yet — add documents or try another topic")
    for c in cards:
        out.print(f"\n[bold]Q[/bold] {escape(c.front)}")
        out.print(f"[bold]A[/bold] {escape(c.back)}  [dim]({escape(c.source.label())})[/dim]")
