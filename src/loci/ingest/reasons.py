"""What a library's exception says, kept for a failure reason only if a person can read it.

A failure reason is shown to the person who added the file, so it must be a sentence they can
act on. Libraries' messages are sometimes just that ("Truncated File Read", "line 3: unclosed
tag") and sometimes Python internals: Pillow's "cannot identify image file <_io.BytesIO object
at 0x7f…>", a bare `KeyError` of a part name, lxml's "(<string>, line 1)". `detail` keeps the
first line of a message with the internals cut out, or returns "" when nothing readable is left,
and the caller's own sentence stands alone.
"""

from __future__ import annotations

import re

_REPR = re.compile(r"<[\w.]+(?: object)?(?: at 0x[0-9a-fA-F]+)?>")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_LXML_SOURCE = re.compile(r"\s*\(<string>, line \d+\)")
_CLASS_NAME = re.compile(r"\b(?:[A-Z][a-z]+)+(?:Error|Exception|Warning)\b|\bBadZipFile\b")
_MAX = 160


def detail(exc: BaseException) -> str:
    """The readable part of `exc`'s message (first line, internals removed), or ""."""
    text = str(exc).strip()
    if not text or isinstance(exc, KeyError):
        return ""  # a KeyError's message is only the missing key, quoted
    line = _LXML_SOURCE.sub("", text.splitlines()[0])
    line = _CLASS_NAME.sub("", _ADDRESS.sub("", _REPR.sub("", line)))
    line = " ".join(line.split()).strip(" :;,.")
    if sum(c.isalpha() for c in line) < 4:
        return ""
    return line[:_MAX]


def with_detail(sentence: str, exc: BaseException) -> str:
    """`sentence`, followed by the library's readable detail in parentheses if it has one."""
    extra = detail(exc)
    return f"{sentence} ({extra})" if extra else sentence
