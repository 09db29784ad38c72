"""Numbered sources: the passages an answer may cite, as the model sees them and as people do.

Retrieved text is untrusted. Each passage goes to the model inside its own delimited block,
marked as quoted material; a passage cannot close its block early (the closing tag inside it is
defused), so text in a document can never pose as the user or the system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loci.models import Hit, time_span_text
from loci.wire.citation import Citation

SOURCE_CLOSE = re.compile(r"</\s*source\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    number: int  # what the answer cites: [1], [2], …
    hit: Hit
    brain: str

    def label(self) -> str:
        """ "report.pdf, page 3, § Results" — how a person reads the citation."""
        c = self.hit.citation
        parts = [c.name, *c.location.where()]
        if c.heading_path:
            parts.append("§ " + " › ".join(c.heading_path[-2:]))
        if c.location.ocr_uncertain:
            parts.append("OCR uncertain")
        return ", ".join(parts)

    def as_block(self) -> str:
        c = self.hit.citation
        at = c.location
        attributes = f'number="{self.number}" file="{_attr(c.name)}"'
        if at.page is not None:
            attributes += f' page="{at.page}"'
        if at.time_start is not None:
            attributes += f' time="{time_span_text(at.time_start, at.time_end)}"'
        if c.heading_path:
            attributes += f' section="{_attr(" > ".join(c.heading_path))}"'
        body = SOURCE_CLOSE.sub("</ source>", self.hit.text)
        return f"<source {attributes}>\n{body}\n</source>"

    def citation(self) -> Citation:
        return Citation(
            number=self.number,
            label=f"Source {self.number}",
            brain=self.brain,
            chunk_id=self.hit.chunk_id,
            **self.hit.citation.flat(),
            snippet=self.hit.snippet,
            highlights=list(self.hit.highlights),
            where=self.label(),
        )


def _attr(value: str) -> str:
    return value.replace('"', "'").replace("\n", " ")[:200]


def number(hits: list[Hit], brain: str) -> list[Source]:
    return [Source(i, hit, brain) for i, hit in enumerate(hits, start=1)]


def blocks(sources: list[Source]) -> str:
    return "<sources>\n" + "\n".join(s.as_block() for s in sources) + "\n</sources>"


CITATION = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")


def validate_citations(answer: str, sources: list[Source]) -> tuple[str, list[Source]]:
    """Drop citation marks that point at no source; return the cleaned answer and the sources
    it cites, in order of first citation."""
    known = {s.number: s for s in sources}
    cited: dict[int, Source] = {}

    def keep(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*[,;]\s*", match.group(1))]
        valid = [n for n in numbers if n in known]
        for n in valid:
            cited.setdefault(n, known[n])
        return "".join(f"[{n}]" for n in valid)

    cleaned = CITATION.sub(keep, answer)
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)  # a dropped mark left a gap
    return cleaned, list(cited.values())
