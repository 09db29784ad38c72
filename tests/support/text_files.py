"""Text files to feed Loci, made at test time: deterministic filler prose, a web page with its
navigation and scripts, Markdown with front matter, text in legacy encodings, CSV, binary junk,
and notes that are hard on tokenizers."""

from __future__ import annotations

import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_VOCABULARY = (
    "the quick brown fox jumps over lazy dogs while seven wizards quietly judge boxing "
    "matches near old harbor lights and calm rivers carry paper boats past sleepy towns"
)

WORDS = _VOCABULARY.split()


def prose(n_words: int, seed: int = 0) -> str:
    """Deterministic filler prose with sentences of 8 to 15 words."""
    rng = random.Random(seed)
    words: list[str] = []
    while len(words) < n_words:
        sentence = [rng.choice(WORDS) for _ in range(rng.randint(8, 15))]
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        words.extend(sentence)
    return " ".join(words[:n_words])


def wrap(text: str, width: int = 80) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def html_page() -> str:
    article = "\n".join(
        f"<p>{prose(70, seed=30 + i)} Lighthouse keepers log paragraph {i}.</p>" for i in range(4)
    )
    return f"""<!doctype html>
<html lang="en"><head>
<title>Lighthouse Keeping | Coastal Blog</title>
<meta property="og:title" content="Lighthouse Keeping Explained">
<style>body {{ color: red }}</style>
<script>var tracking = "SECRET_TRACKER_TOKEN"; console.log(tracking);</script>
</head><body>
<header><nav><ul><li><a href="/">Home navigation link</a></li><li><a href="/about">About us
navigation</a></li><li><a href="/shop">Shop navigation</a></li></ul></nav></header>
<main><article>
<h1>Lighthouse Keeping Explained</h1>
{article}
<h2>Daily duties</h2>
<ul><li>Trim the lamp wick every evening.</li><li>Polish the <b>Fresnel lens</b> daily.</li>
<li>Record the weather in the logbook.</li></ul>
<h2>Supply schedule</h2>
<table><tr><th>Item</th><th>Interval</th></tr><tr><td>Lamp oil</td><td>Monthly</td></tr>
<tr><td>Bread flour</td><td>Weekly</td></tr></table>
<p>{prose(50, seed=40)} Keepers retire after twenty winters.</p>
</article></main>
<footer><p>Copyright 2024 Coastal Blog footer. All rights reserved.</p>
<a href="/privacy">Privacy policy footer link</a></footer>
<script>document.write("INJECTED_SCRIPT_TEXT")</script>
</body></html>"""


MARKDOWN_WITH_FRONTMATTER = """\
---
title: Garden Notes
tags: [plants, soil]
date: 2024-05-01
---
# Ignored H1 Because Frontmatter Wins

Intro paragraph about the garden.
It spans two lines.

Setext Section
--------------

- compost weekly
- water at dawn

```python
def grow(seed):

    return seed * 2
```

| plant | month |
|-------|-------|
| basil | May   |

### Deep ATX heading

Final words.
"""


def cp1252_text() -> bytes:
    return (
        "Caf\u00e9 r\u00e9sum\u00e9: the na\u00efve d\u00e9j\u00e0 vu \u2014 \u201cquoted\u201d "
        "prices of \u20ac5 and \u20ac12 at the cr\u00e8me br\u00fbl\u00e9e stand.\n"
    ).encode("cp1252") * 20


def latin1_text() -> bytes:
    return (
        "Gr\u00fc\u00dfe aus K\u00f6ln! Die Stra\u00dfe ist sch\u00f6n und die B\u00e4ckerei "
        "\u00f6ffnet fr\u00fch. \u00c4rger gibt es nie.\n"
    ).encode("latin-1") * 20


def utf16_text() -> bytes:
    text = "\ufeffUTF-16 notes: \u65e5\u672c\u8a9e and \u00e9t\u00e9.\n\nSecond paragraph.\n"
    return text.encode("utf-16-le")


def binary_junk() -> bytes:
    return random.Random(1234).randbytes(8192)


def big_single_line(n_bytes: int = 20 * 1024 * 1024) -> bytes:
    unit = b"lorem ipsum dolor sit amet consectetur "
    return (unit * (n_bytes // len(unit) + 1))[:n_bytes]


def csv_table(delimiter: str = ";", encoding: str = "cp1252") -> bytes:
    rows = ["Name;Café;Notes".replace(";", delimiter)]
    for i in range(1, 41):
        rows.append(delimiter.join([f"Guest {i:02d}", "crème brûlée", f"table {i}"]))
    rows[25] = delimiter.join(
        ["Ada Lovelace", "thé glacé", '"asked about ""engines""\non two lines"']
    )
    return ("\r\n".join(rows) + "\r\n").encode(encoding)


MIXED_NOTES = """\
# Field notes from the Zürich workshop

Día uno. Renée and Søren met the café owner at 08:30; the espresso machine (a 1998 Faema E61,
serial #A-4471/ß) had lost pressure again. Über-technician Ünal replaced the gasket — third
time this year — and logged it at https://example.org/tickets/4471?view=full&lang=de-CH.

Costs so far: €1,240.50 for parts, ¥18,000 for the Kyoto order, and 3×12.5 kg of beans.
Temperatures ranged from −4 °C to 38.6 °C; humidity 41–67 %. Résumé of the fault: “the boiler
heats, the group head doesn’t”. Naïve fixes (descaling, re-seating the thermosyphon) failed.

## Translations we collected

会議は午後三時に始まりました。東京のチームは新しい温度センサーを提案しました。
서울 사무소는 다음 주에 부품을 보낼 예정입니다. Москва подтвердила заказ на двенадцать клапанов.
Ελληνικά: η αντλία λειτουργεί κανονικά. العربية: تم إصلاح المضخة. हिन्दी: पंप ठीक है।

## Log excerpt

    2026-03-04T09:15:02Z WARN pump[842]: pressure=0.8bar (< 1.0bar threshold) retry=3/5
    2026-03-04T09:15:07Z INFO valve_ctl: open(ch=2) -> OK; elapsed_ms=12.75
    sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08

- [ ] order spare O-rings (Ø 6×1.5 mm, food-grade EPDM)
- [x] email Ana-María about the invoice 🙂👍
- [ ] read the manual's §4.2.1 "Druckeinstellung" twice

| part | qty | note |
| --- | --- | --- |
| gasket | 2 | 8.5 mm, silicone |
| thermostat | 1 | 120°C NC, Ø 8 mm |

Zero\u200bwidth joins, soft\u00adhyphens, a non\u00a0breaking space, a thin\u2009space and an
ideographic\u3000space all turn up in pasted text; so do combining marks (cafe\u0301, n\u0303o)
and the odd placeholder like [MASK] or [UNK] copied from a model card.
"""


def vault_paragraphs(count: int) -> list[str]:
    """The first prose paragraph of each note of the bench vault (Foam's docs, MIT)."""
    found = []
    for note in sorted((ROOT / "bench" / "data" / "foam-vault" / "notes").rglob("*.md")):
        for block in note.read_text(encoding="utf-8").split("\n\n"):
            text = " ".join(block.split())
            if len(text) > 120 and not text.startswith(("#", "`", "|", "-", "<", "!", ">")):
                found.append(text[:300])
                break
    return found[:count]
