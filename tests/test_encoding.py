"""Short legacy-encoded notes decode as exactly as long ones: a note of a few hundred bytes has
too few accented letters for a statistical guess, and used to come out in a Baltic code page."""

from __future__ import annotations

import codecs

import pytest

from loci.ingest.encoding import decode_text
from loci.ingest.parsers import ParseBudgets, parse

NOTES: list[tuple[str, str]] = [
    (
        "cp1252",
        "Meeting notes, 14 March.\nWe met Ana at the Café Zürich near the lake; she prefers the "
        "crème brûlée and said the façade was rénovée last year. Bring €20 for the “déjà vu” "
        "tour – and don’t forget the naïve sketches. Next time: Señor García’s bakery in Málaga.",
    ),
    (
        "cp1252",
        "Lunch with Marta on Friday at noon. We meet at the Café Zürich by the station, then "
        "walk to the museum. Bring the printed tickets and the notes for the grant.",
    ),
    (
        "cp1252",
        "Reminder: the team lunch moved to Café Zürich, second floor. Ask for the table booked "
        "under our name; we pay at the end and split it.",
    ),
    ("cp1252", "Café Zürich, 8 h."),
    ("latin-1", "Grüße aus Köln! Die Straße ist schön und die Bäckerei öffnet früh."),
    ("latin-1", "Rendez-vous à l'hôtel de ville, près du marché. Ça coûte 12 francs."),
    ("cp1250", "Zażółć gęślą jaźń. Spotkanie w Łodzi o ósmej; proszę przynieść świeże jabłka."),
    ("cp1250", "Příliš žluťoučký kůň úpěl ďábelské ódy. Schůzka bude ve středu v Brně."),
    ("iso-8859-2", "Pchnąć w tę łódź jeża lub ośm skrzyń fig. Źródło: notatki z środy."),
    ("iso-8859-2", "Dobrý den, posílám zápis z porady. Účast: pan Novák, paní Dvořáková."),
    ("cp1251", "Привет, мир! Встреча в пятницу в Москве, принесите отчёт и свежие яблоки."),
    ("cp1251", "Съешь же ещё этих мягких французских булок, да выпей чаю."),
    ("koi8-r", "Съешь же ещё этих мягких французских булок, да выпей чаю. Встреча в среду."),
    ("koi8-r", "Заметки: позвонить Ивану Петровичу, купить хлеб и молоко."),
]


@pytest.mark.parametrize(("encoding", "text"), NOTES, ids=[f"{e}-{t[:12]}" for e, t in NOTES])
def test_a_short_legacy_note_decodes_to_its_exact_text(encoding: str, text: str) -> None:
    data = text.encode(encoding)
    assert 15 <= len(data) <= 400
    assert decode_text(data) == text
    assert parse(data, "note.txt", ParseBudgets()).text == text


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ],
)
def test_a_short_note_with_a_byte_order_mark_decodes_exactly(bom: bytes, codec: str) -> None:
    text = "Café Zürich, Zażółć gęślą jaźń, Привет мир, 日本語."
    assert decode_text(bom + text.encode(codec)) == text


def test_short_utf8_stays_utf8() -> None:
    text = "Café Zürich — Łódź, Москва"
    assert decode_text(text.encode()) == text
