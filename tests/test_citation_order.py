"""Citations read in order: the first source an answer cites is [1], the next new one [2], and
the sources listed under it are exactly those it cites — with or without a summary."""

from __future__ import annotations

import re

from loci.answer.citation_order import by_first_use
from loci.answer.events import final_answer
from loci.answer.sources import number
from loci.models import Brain, Citation, Hit, Location
from loci.service import Loci

BOILER = [
    ("Boiler pressure", "The boiler pressure should sit at 1.5 bar when the heating is cold."),
    ("Boiler service", "Marsh Heating services the boiler every October; the boiler was last "
                       "serviced on 12 October 2026."),
    ("Boiler reset", "To reset the boiler, hold the reset button for five seconds and wait for "
                     "the boiler to restart."),
    ("Boiler warranty", "The boiler warranty runs until 2029 if the boiler is serviced yearly."),
]  # fmt: skip


def _hit(chunk_id: int, text: str) -> Hit:
    citation = Citation(
        document_id=chunk_id, name=f"note-{chunk_id}.md", title=None, chunk_index=0,
        location=Location(), heading_path=(), source_url=None,
    )  # fmt: skip
    return Hit(chunk_id, citation, text, text, 1.0, 1, 1, 1.0, 0.5)


def test_marks_are_renumbered_by_first_use_and_unknown_ones_dropped() -> None:
    sources = number([_hit(i, f"passage {i}") for i in range(1, 5)], "b")
    text, cited = by_first_use("Second [2]. Fourth [4][2]. Both [2, 3]. Nothing [9].", sources)
    assert text == "Second [1]. Fourth [2][1]. Both [1][3]. Nothing ."
    assert [(s.number, s.hit.chunk_id) for s in cited] == [(1, 2), (2, 4), (3, 3)]


def _first_uses(answer: str) -> list[int]:
    seen: list[int] = []
    for mark in re.findall(r"\[(\d+)\]", answer):
        if int(mark) not in seen:
            seen.append(int(mark))
    return seen


def test_an_answer_without_a_model_cites_in_reading_order(loci: Loci, brain: Brain) -> None:
    # The log's first passages are a table of readings, which an answer never quotes: its
    # sentences come from later passages, and used to be cited as [3], [4], [5], [6].
    table = "date,reading,bar\n" + "\n".join(
        f"2026-{month:02d}-{day:02d},gauge,1.{day % 9}" for month in range(1, 13) for day in (1, 15)
    )
    text = table + "\n\n" + "\n\n".join(f"## {title}\n\n{body}" for title, body in BOILER)
    loci.library.wait_for(
        brain, [loci.library.add_note(brain, text, title="Boiler log").document.id]
    )

    for question in ("Summarize the note Boiler log", "Who services the boiler?"):
        done = final_answer(loci.answers.ask(brain, question))
        order = _first_uses(done.answer)
        assert order, done.answer
        assert order == list(range(1, len(order) + 1)), done.answer
        assert [c.number for c in done.citations] == order  # every listed source is cited
