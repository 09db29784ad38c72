"""What an answer without a model can quote from a passage: its units.

A unit is a piece of a passage that states something on its own, in the words of the passage:
- a **sentence**, cut with the rules of the passage's own language (`loci.sentences`);
- a **field**: a line of settings or labelled values ("Booking code: VK9QZL"), however short —
  the shortest line of a booking holds its most asked-for fact;
- a **row** of a table (CSV, a sheet, Markdown or HTML), read with its header: "month: 2026-02;
  gas_m3: 388; gas_kwh: 1622" — a row alone ("2026-02 | 388 | 1622") says nothing of what its
  numbers are;
- a **list** with the line that leads into it ("There are three rules: …"), quoted whole, since a
  question about the rules wants all of them, beside each item as a unit of its own.

A unit is never cut inside a word; one longer than `MAX_CHARS` is trimmed at a clause boundary
and marked with an ellipsis. Code is never a unit: it is cited, not quoted. Units keep their
order (`position`), so the one beside a unit can complete it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from loci.sentences import split_sentences
from loci.store.text_analysis import is_segmented

UnitKind = Literal["sentence", "field", "row", "list"]
MAX_CHARS = 320
MIN_WORDS = 3  # fewer: a heading or a label, unless it is a field (it holds its value)
BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)]|[a-z][.)])\s+")
PARAGRAPH = re.compile(r"\n\s*\n")
# A line that starts an item of its own: a list item or a table row (never glued to the last).
ITEM_START = re.compile(r"^\s*(?:[-*•+|]|\d{1,3}[.)])\s")
# "Booking code: VK9QZL", "Abfahrt: 14:05", "Prix : 12 €": a short label, then its value.
# The label is no number ("10:30") and a space follows its colon ("https://" is no label).
FIELD = re.compile(r"^(?!\d+[:：])[^\s:：.!?。][^:：.!?。]{0,40}?\s?(?::\s+|：\s*)\S.{0,80}$")
ADMONITION = re.compile(r"^\s*:::")  # a VitePress or Docusaurus container opens or closes
STRONG = re.compile(r"\*\*")  # bold; "__" stays: "__init__.py" is a name, not emphasis
FENCE = re.compile(r"^\s*(```|~~~)\s*(\S*)")  # a code fence, and its language if it names one
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
CLAUSE_END = re.compile(r"[,;:–—]\s|\s[–—-]\s")  # where a long unit may be trimmed
DELIMITERS = ("\t", ";", ",")  # of a CSV block a passage may hold as it was written
MAX_CELL_CHARS = 60


@dataclass(frozen=True)
class Unit:
    text: str
    kind: UnitKind
    position: int  # its order among the passage's units


def units(text: str, headings: Sequence[str] = (), language: str | None = None) -> list[Unit]:
    """The units of a passage, in order. `headings` (its heading path) are not units of their
    own; `language` chooses the sentence rules (None: read from the script)."""
    skip = {_flat(h) for h in headings}
    pieces: list[_Piece] = []
    for paragraph in PARAGRAPH.split(_without_code(text)):
        lines = [line for line in paragraph.splitlines() if line.strip()]
        if not lines:
            continue
        if _settings(lines):
            continue  # configuration is cited, like code, never quoted
        table = _table(lines)
        if table is not None:
            pieces += [_Piece(row, "row") for row in table]
        else:
            pieces += _prose(lines, language, first_item=len(pieces))
    kept: list[Unit] = []
    for unit_text, kind in _with_lists(pieces):
        flat = _trimmed(_flat(unit_text))
        if flat in skip or not flat:
            continue
        if kind in ("sentence", "list") and words(flat) < MIN_WORDS:
            continue
        kept.append(Unit(flat, kind, len(kept)))
    return kept


@dataclass(frozen=True)
class _Piece:
    text: str
    kind: UnitKind
    item: int | None = None  # which list item it belongs to (its pieces share the number)


def words(text: str) -> int:
    """About how many words `text` has: Japanese, Chinese or Thai write no spaces between them,
    so a run of such script counts a word per two characters."""
    return sum(max(1, len(w) // 2) if is_segmented(w) else 1 for w in text.split())


def _flat(text: str) -> str:
    return " ".join(STRONG.sub("", text).split())


def _trimmed(text: str) -> str:
    """`text` within MAX_CHARS: cut at the last clause boundary before it (else the last space),
    never inside a word, with an ellipsis."""
    if len(text) <= MAX_CHARS:
        return text
    head = text[:MAX_CHARS]
    boundaries = [m.start() + 1 for m in CLAUSE_END.finditer(head) if m.start() > MAX_CHARS // 2]
    cut = boundaries[-1] if boundaries else head.rfind(" ")
    if cut <= 0:
        cut = MAX_CHARS  # one long word (a URL, a run of CJK): nowhere better to cut
    return head[:cut].rstrip(" ,;:–—-") + " …"


def _without_code(text: str) -> str:
    """The text with its fenced code blocks cut out: code is cited, never quoted. A passage may
    begin or end inside a block: with an odd number of fences, a first one without a language
    ("```" alone) closes a block the passage began inside."""
    lines = text.splitlines()
    fences = {i: m[2] for i, line in enumerate(lines) if (m := FENCE.match(line))}
    inside = len(fences) % 2 == 1 and next(iter(fences.values())) == ""
    kept: list[str] = []
    for i, line in enumerate(lines):
        if i in fences:
            inside = not inside
            kept.append("")  # the block ends a paragraph
        elif ADMONITION.match(line):
            kept.append("")  # "::: tip IMPORTANT": a container's fence and title, not prose
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


# A line of YAML-like settings: "key: value", "key:" opening a nested block, "- key: value".
SETTING = re.compile(r"^\s*(?:-\s+)?[\w\"' .-]{1,40}:(?:\s|$)")


def _settings(lines: list[str]) -> bool:
    """Whether the lines are a block of nested settings (a YAML file's): mostly `key: value`
    lines, some of them opening a nested block or indented under one. Labelled fields standing
    side by side ("Seat: 23F", "Gate: B12") are not nested and stay units."""
    if len(lines) < 2 or sum(bool(SETTING.match(line)) for line in lines) < 0.8 * len(lines):
        return False
    return any(line[:1].isspace() or line.rstrip().endswith(":") for line in lines)


def _cells(line: str, delimiter: str) -> list[str]:
    if delimiter == "|":
        return [c.strip() for c in line.strip().strip("|").split("|")]
    return [c.strip() for c in line.split(delimiter)]


def _table(lines: list[str]) -> list[str] | None:
    """The rows of a table block, each read with its header ("header: value; …"), or None when
    the lines are not one table. A Markdown table, Loci's own rows of a sheet or CSV file
    ("a | b | c", header first) and a CSV block as written are tables."""
    body = [line for line in lines if not TABLE_RULE.match(line)]
    if len(body) < 2:
        return None
    for delimiter in ("|", *DELIMITERS):
        counts = {len(_cells(line, delimiter)) for line in body}
        if len(counts) != 1 or min(counts) < 2:
            continue
        header, *rows = (_cells(line, delimiter) for line in body)
        cells = [c for row in rows for c in row]
        if delimiter != "|" and sum(len(c) <= MAX_CELL_CHARS for c in cells) < 0.9 * len(cells):
            continue  # prose that happens to hold the same number of commas on each line
        return [
            "; ".join(f"{h}: {v}" if h else v for h, v in zip(header, row, strict=True) if v)
            for row in rows
        ]
    return None


def _logical_lines(lines: list[str]) -> list[str]:
    """A paragraph's lines joined back where a sentence wrapped, split where an item starts."""
    joined: list[str] = []
    for line in lines:
        if joined and not ITEM_START.match(line) and not FIELD.match(line):
            joined[-1] += " " + line.strip()
        else:
            joined.append(line.strip())
    return joined


def _prose(lines: list[str], language: str | None, first_item: int) -> list[_Piece]:
    """Sentences and fields of a paragraph that is not a table, each list item's numbered."""
    found: list[_Piece] = []
    for number, line in enumerate(_logical_lines(lines), start=first_item):
        if line.startswith("|"):
            continue  # a row of a table cut from its header: data with no names to read it by
        item = number if BULLET.match(line) else None
        # Bold marks go first: "**Keeps the server dumb.** File-level sync …" is two sentences.
        for sentence in split_sentences(STRONG.sub("", BULLET.sub("", line)), language):
            kind: UnitKind = "field" if FIELD.match(sentence) else "sentence"
            found.append(_Piece(sentence, kind, item))
    return found


def _with_lists(pieces: list[_Piece]) -> list[tuple[str, UnitKind]]:
    """The pieces, and after each list led into by a line ending in ":" (in the same paragraph
    or the one before it), the lead-in with all its items as one unit."""
    out: list[tuple[str, UnitKind]] = []
    for i, piece in enumerate(pieces):
        out.append((piece.text, piece.kind))
        if piece.item is not None or not piece.text.endswith((":", "：")):
            continue
        items: dict[int, list[str]] = {}
        for after in pieces[i + 1 :]:
            if after.item is None:
                break
            items.setdefault(after.item, []).append(after.text)
        if len(items) >= 2:
            listed = "; ".join(" ".join(parts).rstrip(" .;") for parts in items.values())
            out.append((f"{piece.text} {listed}.", "list"))
    return out
