"""Answers without a model, on the failures a new user met (issue 29), each over files written
for it: questions the files cannot answer are refused rather than answered with unrelated
sentences, the fact asked for is quoted whole — a date after "Prof.", a booking code beside a
seat, a German day before its month, a table row with its header, every rule of a list — and
nothing quoted ends in the middle of a word."""

from __future__ import annotations

import re

import pytest

from loci.answer.events import Done, final_answer
from loci.answer.pipeline import Turn
from loci.answer.units import MAX_CHARS, units
from loci.models import Brain
from loci.service import Loci

PROGRAMMING = {
    "arrays.md": "# Arrays\n\nAn array is a collection of values of the same type with a fixed "
    "length. Arrays are useful when you want your data allocated on the stack. Every element "
    "of an array must have the same type, and you write its type with square brackets, the "
    "element type, a semicolon and the number of elements.",
    "integers.md": "# Integer types\n\nAn integer is a number without a fractional component. "
    "Signed integer types start with i, unsigned ones with u. When you compile in release mode, "
    "the compiler does not include checks for integer overflow that cause panics. Instead, if "
    "overflow occurs, the program performs two's complement wrapping.",
    "ownership.md": "# Ownership\n\nOwnership is a set of rules that govern how a program "
    "manages memory. There are three rules:\n\n1. Each value has an owner.\n2. There can only "
    "be one owner at a time.\n3. When the owner goes out of scope, the value will be dropped.",
    "der.md": "# Decoding certificates\n\nThe command line tool certtool decodes DER and PEM "
    "certificates and prints them. In the library, asn1_der_decoding fills a structure you "
    "created from its definitions with the DER-encoded data.",
    "travel.md": "# Packing list\n\nID card, phone charger, the booking number of the hotel, "
    "sunscreen, the car's documents.",
    "checkup.md": "# Check-up\n\nBlood pressure 125/80 at the check-up on 3 March. My sister "
    "came along and we had lunch after.",
}
PERSONAL = {
    "health.md": "# Health\n\nKnee is much better since physio.\n\nThe follow-up with Prof. K. "
    "Osei is booked for 3 Feb. 2027 at the Elm Street clinic.",
    "trip.md": "# Lisbon, May\n\nFlight TP 571 from Manchester on 12 May, 07:40.\n\nSeat 23F, "
    "window. Booking code: VK9QZL.\n\nHotel: Casa do Rio, two nights.",
    "termine.md": "# Termine\n\nEin Termin am 3. Oktober um 10 Uhr beim Zahnarzt Dr. Vogel. "
    "Die Heizung wurde zuletzt am 14. November gewartet; der Router ist eine FRITZ!Box 7590.",
    "gas.csv": "month,gas_m3,gas_kwh\n2026-01,412,1721\n2026-02,388,1622\n2026-03,301,1258\n",
}


def _brain(loci: Loci, brain: Brain, files: dict[str, str]) -> Brain:
    ids = [loci.library.add_bytes(brain, n, t.encode()).document.id for n, t in files.items()]
    loci.library.wait_for(brain, ids)
    return brain


@pytest.fixture
def programming(loci: Loci, brain: Brain) -> Brain:
    return _brain(loci, brain, PROGRAMMING)


@pytest.fixture
def personal(loci: Loci, brain: Brain) -> Brain:
    return _brain(loci, brain, PERSONAL)


def _ask(loci: Loci, brain: Brain, question: str, history: tuple[Turn, ...] = ()) -> Done:
    return final_answer(loci.answers.ask(brain, question, history))


def _quoted(done: Done) -> list[str]:
    """The answer's quoted lines, without their citation marks."""
    return [
        re.sub(r"\s*\[\d+\]$", "", line[2:])
        for line in done.answer.splitlines()
        if line.startswith("- ") and re.search(r"\[\d+\]$", line)
    ]


@pytest.mark.parametrize(
    "question",
    [
        "what is my passport number",
        "when is my sister's birthday",
        "how many litres is the car's fuel tank",
    ],
)
def test_a_personal_question_the_files_cannot_answer_is_refused(
    loci: Loci, programming: Brain, question: str
) -> None:
    done = _ask(loci, programming, question)
    assert done.decision == "no_relevant_sources", done.answer
    assert done.citations == () and _quoted(done) == []


def test_a_title_in_the_question_is_its_abbreviation_in_the_note(
    loci: Loci, personal: Brain
) -> None:
    done = _ask(loci, personal, "When is the follow-up with Professor Osei?")
    assert done.decision == "sufficient", done.answer
    assert "3 Feb. 2027" in _quoted(done)[0]


def test_a_follow_up_quotes_the_field_it_asks_for(loci: Loci, personal: Brain) -> None:
    first = _ask(loci, personal, "Which seat do I have on the flight to Lisbon?")
    history = (Turn("user", "Which seat do I have on the flight to Lisbon?"),
               Turn("assistant", first.answer))  # fmt: skip
    done = _ask(loci, personal, "and what is the booking code?", history)
    assert "VK9QZL" in _quoted(done)[0], done.answer


def test_german_is_cut_with_german_rules(loci: Loci, personal: Brain) -> None:
    done = _ask(loci, personal, "Wann ist der Termin beim Zahnarzt?")
    assert any("am 3. Oktober um 10 Uhr" in line for line in _quoted(done)), done.answer
    # the same text, read by units: a day keeps its month, a name its "!"
    found = [u.text for u in units(PERSONAL["termine.md"], ("Termine",), "de")]
    assert any("zuletzt am 14. November gewartet" in text for text in found), found
    assert any("FRITZ!Box 7590" in text for text in found), found


def test_a_table_row_is_quoted_with_its_header(loci: Loci, personal: Brain) -> None:
    done = _ask(loci, personal, "How much gas did we use in February 2026?")
    assert done.decision == "sufficient", done.answer
    assert any("2026-02" in line and "388" in line and "gas_m3" in line for line in _quoted(done))


def test_a_list_is_quoted_whole_with_its_lead_in(loci: Loci, programming: Brain) -> None:
    done = _ask(loci, programming, "What are the rules of ownership?")
    quoted = " ".join(_quoted(done))
    for rule in ("Each value has an owner", "one owner at a time", "the value will be dropped"):
        assert rule in quoted, done.answer


def test_the_fact_asked_is_quoted_not_only_its_lead(loci: Loci, programming: Brain) -> None:
    done = _ask(loci, programming, "what happens when an integer overflows in release mode")
    assert any("two's complement wrapping" in line for line in _quoted(done)), done.answer
    done = _ask(loci, programming, "which function decodes DER")
    assert "asn1_der_decoding" in _quoted(done)[0], done.answer


def test_nothing_quoted_ends_inside_a_word() -> None:
    long = "The licence applies " + ", ".join(f"to component number {i}" for i in range(40))
    (unit,) = units(long + ".")
    assert len(unit.text) <= MAX_CHARS + 2 and unit.text.endswith(" …")
    kept = unit.text.removesuffix(" …")
    assert long.startswith(kept) and not long[len(kept)].isalnum()  # cut between words
