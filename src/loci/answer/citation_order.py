"""Citations numbered as a reader meets them: the first source an answer cites is [1], the next
new one [2], and the sources listed are exactly the ones it cites.

An answer composed from the sources' own sentences picks them by how well they match, so its
marks came out as [2], [1], [4], [3], and a summary could start at [2]; renumbering by first use
(before the answer is streamed) makes the list under the answer read in the answer's order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from loci.answer.sources import CITATION, Source


def by_first_use(text: str, sources: Sequence[Source]) -> tuple[str, list[Source]]:
    """`text` with its marks renumbered in order of first use, and the sources it cites in that
    order, renumbered alike; a mark that points at no source is dropped."""
    known = {s.number: s for s in sources}
    new_number: dict[int, int] = {}

    def renumber(match: re.Match[str]) -> str:
        marks = []
        for raw in re.split(r"\s*[,;]\s*", match.group(1)):
            old = int(raw)
            if old in known:
                new_number.setdefault(old, len(new_number) + 1)
                marks.append(f"[{new_number[old]}]")
        return "".join(marks)

    renumbered = CITATION.sub(renumber, text)
    cited = [replace(known[old], number=new) for old, new in new_number.items()]
    return renumbered, cited
