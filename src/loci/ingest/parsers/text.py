"""Plain text: one paragraph block per run of non-blank lines, with its lines in the file."""

from __future__ import annotations

from collections.abc import Iterator

from loci.ingest.encoding import decode_text
from loci.models import Block, Location, ParsedDocument


def parse_text(data: bytes) -> ParsedDocument:
    text = decode_text(data)
    blocks = tuple(paragraph_blocks(text))
    warnings = () if blocks else ("no text found",)
    return ParsedDocument(title=None, blocks=blocks, warnings=warnings)


def paragraph_blocks(text: str, first_line: int = 1) -> Iterator[Block]:
    """Paragraphs split on blank lines; `first_line` is the file line number of `text`'s first line.

    Works line by line without copying the text around, so a 20 MB file with one huge line costs
    one split and one join.
    """
    current: list[str] = []
    start = first_line
    number = first_line - 1
    for number, line in enumerate(text.split("\n"), start=first_line):
        if line and not line.isspace():
            if not current:
                start = number
            current.append(line.rstrip())
        elif current:
            yield Block(
                "paragraph",
                "\n".join(current),
                location=Location(line_start=start, line_end=number - 1),
            )
            current = []
    if current:
        yield Block(
            "paragraph", "\n".join(current), location=Location(line_start=start, line_end=number)
        )
