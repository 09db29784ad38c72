"""`loci ask`: an answer from the brain, streamed as it is written, with numbered sources;
`loci conversations`: the conversations `ask` keeps."""

from __future__ import annotations

import sys
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.answer.events import (
    AskEvent,
    Done,
    Graded,
    Queries,
    Revise,
    Rewritten,
    Routed,
    Scoped,
    Token,
    final_answer,
)
from loci.answer.records import Feedback
from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out
from loci.cli.search import Kind
from loci.models import Location, SearchFilters

if TYPE_CHECKING:
    from loci.wire.citation import Citation


def _where(citation: Citation) -> str:
    at = Location(page=citation.page, line_start=citation.line_start, line_end=citation.line_end)
    parts = [citation.name, *at.where("p.", lines=True)]
    if citation.heading_path:
        parts.append(" › ".join(citation.heading_path))
    return " · ".join(parts)


def _note(event: AskEvent) -> str | None:
    """The progress note for a step's event on stderr; None for the others."""
    if isinstance(event, Routed):
        return f"intent {event.intent} ({event.by})"
    if isinstance(event, Scoped):
        return f"searching {', '.join(event.brains)}: {event.description}"
    if isinstance(event, Rewritten):
        return f"searching for: {event.rewritten}"
    if isinstance(event, Queries):
        return f"{len(event.queries)} quer{'y' if len(event.queries) == 1 else 'ies'}"
    if isinstance(event, Graded):
        return f"{event.decision}: {event.relevant} relevant of {event.total} passages"
    return None


class Rating(StrEnum):
    up = "up"
    down = "down"


def _rating_line(feedback: Feedback) -> str:
    return feedback.rating + (f": {feedback.reason}" if feedback.reason else "")


def register(app: typer.Typer) -> None:
    app.command("ask")(exits_cleanly(ask))

    conversations = typer.Typer(help="Conversations kept by `loci ask`.", no_args_is_help=True)
    app.add_typer(conversations, name="conversations")

    conversations.command("list")(exits_cleanly(list_conversations))
    conversations.command("show")(exits_cleanly(show_conversation))
    conversations.command("rate")(exits_cleanly(rate_answer))
    conversations.command("rename")(exits_cleanly(rename_conversation))
    conversations.command("rm")(exits_cleanly(delete_conversation))


def ask(
    question: Annotated[str, typer.Argument(help="Your question, in your own words.")],
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the latest conversation.")
    ] = False,
    conversation: Annotated[
        int | None, typer.Option("--conversation", help="Continue this conversation.")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress notes on stderr.")
    ] = False,
    kind: Annotated[list[Kind], typer.Option("--kind", help="Only documents of these kinds.")] = [],  # noqa: B006
    tag: Annotated[
        list[str], typer.Option("--tag", "-t", help="Only documents with all these tags.")
    ] = [],  # noqa: B006
    name: Annotated[
        str | None, typer.Option("--file", help="Only this file name or title (globs ok).")
    ] = None,
    after: Annotated[
        str | None,
        typer.Option(
            "--after",
            help="Only documents added on or after this date (YYYY-MM-DD). Without "
            "--after/--before, a phrase like 'last month' in the question sets the dates.",
        ),
    ] = None,
    before: Annotated[
        str | None, typer.Option("--before", help="Only documents added before this date.")
    ] = None,
    brains: Annotated[
        list[str],
        typer.Option(
            "--brain",
            "-b",
            help="Brain to ask (default: the default brain); repeat it to ask several — "
            "the conversation is kept in the first, citations name their brain.",
        ),
    ] = [],  # noqa: B006
    save: Annotated[
        bool,
        typer.Option(
            "--save", help="Keep the answer as an analysis page in the brain's research/."
        ),
    ] = False,
    json_: JsonOption = False,
) -> None:
    """Answer from the brain with numbered citations.

    The answer is written by an LLM if LOCI_LLM_* is set; without one, it is the best
    sentences of the best passages."""
    loci = service()
    home = existing_brain(brains[0] if brains else None)
    others = [existing_brain(other) for other in dict.fromkeys(brains[1:])]
    filters = SearchFilters(
        name=name,
        kinds=tuple(k.value for k in kind),
        tags=tuple(tag),
        created_after=after,
        created_before=before,
    )
    events = loci.answers.converse(
        home,
        question,
        conversation_id=conversation,
        continue_latest=continue_,
        filters=filters,
        brains=others,
        may_save=True,  # the local owner: "remember that …" saves
        actor="cli",
        origin="cli",
    )

    def saved_as_page(done: Done) -> Done:
        if not save or done.intent == "save":
            return done
        saved = loci.answers.save_answer(home, *done.kept(), actor="cli")
        return replace(done, saved=saved.page.path)

    if json_:
        emit_json(saved_as_page(final_answer(events)).to_json())
        return
    for event in events:
        if isinstance(event, Token):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, Revise):
            # What was printed is withdrawn: the model answers again below it.
            sys.stdout.write("\n")
            err.print(f"[dim]· answering again: {escape(event.reason)}[/dim]")
        elif isinstance(event, Done):
            done = saved_as_page(event)
            sys.stdout.write("\n")
            if done.citations:
                out.print("\n[bold]Sources[/bold]")
                for c in done.citations:
                    out.print(f"  [{c.number}] {escape(_where(c))}")
            if done.saved is not None:
                out.print(f"\nsaved as {escape(done.saved)}")
            if not quiet:
                err.print(
                    f"[dim]conversation {done.conversation_id} · "
                    f"{done.timings.get('total', 0):.0f} ms[/dim]"
                )
        elif not quiet and (note := _note(event)) is not None:
            err.print(f"[dim]· {escape(note)}[/dim]")


def list_conversations(brain: BrainOption = None, json_: JsonOption = False) -> None:
    """Conversations of this brain, most recent first."""
    loci = service()
    found = loci.answers.conversations(existing_brain(brain))
    if json_:
        emit_json(found)
        return
    table = Table("id", "title", "updated", box=None)
    for c in found:
        table.add_row(str(c.id), escape(c.title), c.updated_at[:16].replace("T", " "))
    out.print(table)


def show_conversation(
    conversation_id: Annotated[int, typer.Argument(help="Conversation id.")],
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """The questions and answers of one conversation."""
    loci = service()
    found, messages = loci.answers.conversation(existing_brain(brain), conversation_id)
    if json_:
        emit_json({"conversation": found, "messages": messages})
        return
    out.print(f"[bold]{escape(found.title)}[/bold]")
    for m in messages:
        who = "you" if m.role == "user" else f"loci #{m.id}"
        out.print(f"\n[bold]{who}[/bold]: {escape(m.content)}")
        if m.feedback is not None:
            out.print(f"[dim]rated {_rating_line(m.feedback)}[/dim]")


def rate_answer(
    conversation_id: Annotated[int, typer.Argument(help="Conversation id.")],
    message_id: Annotated[
        int, typer.Argument(help="The answer's message id (`conversations show` has it).")
    ],
    rating: Annotated[Rating, typer.Argument(help="up or down.")],
    reason: Annotated[
        str | None, typer.Option("--reason", "-r", help="What was right or wrong.")
    ] = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Rate an answer up or down; rating it again replaces the rating. Thumbs-down answers
    become questions to re-run with `loci eval --from-feedback`."""
    loci = service()
    rated = loci.answers.rate_answer(
        existing_brain(brain), conversation_id, message_id, rating.value, reason
    )
    if json_:
        emit_json(rated)
        return
    assert rated.feedback is not None
    out.print(f"answer {rated.id} rated {escape(_rating_line(rated.feedback))}")


def rename_conversation(
    conversation_id: Annotated[int, typer.Argument(help="Conversation id.")],
    title: Annotated[str, typer.Argument(help="The new title.")],
    brain: BrainOption = None,
) -> None:
    """Give a conversation a new title."""
    loci = service()
    loci.answers.rename_conversation(existing_brain(brain), conversation_id, title)


def delete_conversation(
    conversation_id: Annotated[int, typer.Argument(help="Conversation id.")],
    brain: BrainOption = None,
) -> None:
    """Delete a conversation and its messages."""
    loci = service()
    loci.answers.delete_conversation(existing_brain(brain), conversation_id)
