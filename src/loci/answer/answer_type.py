"""What kind of answer a question wants, and whether a sentence holds one.

"How much did the car service cost?" wants an amount: of the invoice's sentences, "Total 310.50
GBP, paid by card" answers it and "Full service of the Golf, oil and filters replaced" only shares
its words. An answer without a model prefers the sentences that hold the kind of thing asked for:
an amount or count, a date or time, a name. Rules by question word, in English; a question they
do not recognise wants nothing in particular.
"""

from __future__ import annotations

import re
from typing import Literal

AnswerType = Literal["amount", "when", "name"]

_WANTS: tuple[tuple[re.Pattern[str], AnswerType], ...] = (
    (re.compile(r"\b(how (much|many|long|far|often|old|big|heavy)|what (price|amount|number|"
                r"size)|cost|price|fee|total)\b", re.I), "amount"),
    (re.compile(r"\b(when|what (date|time|day|year|month)|which (date|day|year)|how soon|"
                r"until when|since when)\b", re.I), "when"),
    (re.compile(r"\b(who|whom|whose|which (company|person|firm|shop|doctor))\b", re.I), "name"),
)  # fmt: skip
_MONTHS = (
    r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|"
    r"oct(ober)?|nov(ember)?|dec(ember)?"
)
_DAYS = r"mon(day)?|tue(s(day)?)?|wed(nesday)?|thu(rs(day)?)?|fri(day)?|sat(urday)?|sun(day)?"
_HAS: dict[AnswerType, re.Pattern[str]] = {
    "amount": re.compile(r"\d"),
    "when": re.compile(
        rf"\b(\d{{1,4}}[-/.]\d{{1,2}}([-/.]\d{{1,4}})?|\d{{1,2}}(:\d\d|\.\d\d)\s*(a\.?m\.?|p\.?m\.?)?"
        rf"|\d{{1,2}}\s*(a\.?m\.?|p\.?m\.?)|(19|20)\d\d|{_MONTHS}|{_DAYS}|today|tomorrow|yesterday"
        rf"|every (day|week|month|year|spring|summer|autumn|winter))\b",
        re.I,
    ),
    # A capitalised word that does not start the sentence: "… by Marsh Heating", "Dr. Patel".
    "name": re.compile(r"(?<=\S )[A-Z][\w'’-]+"),
}


def wanted(question: str) -> AnswerType | None:
    """The kind of answer `question` asks for, if its words say."""
    for pattern, kind in _WANTS:
        if pattern.search(question):
            return kind
    return None


def holds(sentence: str, kind: AnswerType) -> bool:
    return _HAS[kind].search(sentence) is not None
