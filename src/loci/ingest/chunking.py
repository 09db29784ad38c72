"""Parsed blocks → chunks that fit the embedder, each knowing where in the document it came from.

Rules, in order of importance:

* No chunk has more than `max_tokens` tokens by the embedder's own `count_tokens`: the local
  model silently truncates past its limit, so an oversized chunk is a passage whose end can never
  be found. Every emitted chunk is counted once more, whole, to make sure.
* Sections do not mix: a heading starts a new chunk, and every chunk carries the stack of
  headings above it (`heading_path`, e.g. ("Guide", "Install")). Pages do not mix either: a
  citation names one page, and text from page 2 cited as page 1 would send the reader astray.
* Within a section, consecutive blocks are packed up to the limit. A block too big on its own is
  split at blank lines, then (lists, tables, code) at lines, then at sentences, then at groups of
  words, single words, and finally by characters.
* Consecutive chunks of one section (and page) overlap by whole sentences (up to
  `overlap_tokens`), so a fact straddling a boundary is whole in at least one chunk.

Every chunk's text is a slice of `ParsedDocument.text` (`char_start:char_end`); the overlap is
simply an earlier start. Efficiency: each block (or split unit) is tokenized once and sums are
used to pack, so the cost is linear in the text consumed; pieces are produced lazily, so a 20 MB
file stops being read once `max_chunks` chunks exist.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from loci.errors import InvalidInput
from loci.models import Block, ChunkDraft, Location, ParsedDocument

__all__ = ["ChunkingResult", "chunk_document"]

# Units an oversized block is cut into, coarsest first.
_PARAGRAPHS, _LINES, _SENTENCES, _WORD_GROUPS, _WORDS, _CHARS = range(6)

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LINE_BREAK = re.compile(r"\n")
# A sentence ends at . ! ? or an ellipsis (closing quotes and brackets stay with it) followed by
# whitespace, which is the separator (group 1); CJK full stops end one with or without spaces
# (group 2). Matching the punctuation first, rather than looking behind at every character,
# keeps a scan of a 20 MB line without sentences to a few tens of milliseconds.
_SENTENCE_BREAK = re.compile(
    r"[.!?\u2026][\"'\u201d\u2019\u00bb)\]]?(\s+)|[\u3002\uff01\uff1f](\s*)"
)
_WORD = re.compile(r"\S+")
_LINE_KINDS = frozenset({"list", "table", "code"})
_TRUST_AFTER = 8


@dataclass(frozen=True)
class ChunkingResult:
    chunks: tuple[ChunkDraft, ...]
    truncated: bool  # True when max_chunks was reached before the end of the document


@dataclass(frozen=True)
class _Piece:
    """A span of the document text that fits in one chunk, with where it sits."""

    start: int
    end: int
    tokens: int  # content tokens: the counter's fixed per-call overhead removed
    location: Location  # its block's, lines narrowed to the piece; no character offsets
    section: int
    heading_path: tuple[str, ...]
    heading_level: int  # > 0 for (a piece of) a heading block


@dataclass(frozen=True)
class _Overlap:
    start: int
    tokens: int
    # Where the repeated sentences begin (their line, and when a transcript's piece was said);
    # its OCR region and confidence are the previous chunk's to cite, not this one's.
    location: Location
    spaced: bool  # its sentences are separated by whitespace (CJK ones need not be)


class _Counter:
    """count_tokens with its constant costs measured once: a per-call overhead (special tokens,
    if the counter includes them) and the tokens a blank-line join adds (zero for WordPiece,
    one for BPE tokenizers that have a "\\n\\n" token).

    It also learns whether sums of piece counts can be trusted. A real tokenizer costs about a
    microsecond per character, so counting every chunk a second time nearly halves throughput.
    Chunks made of several pieces are verified until `_TRUST_AFTER` of them came out exactly at
    their estimate (the counter is additive over whitespace joins, as WordPiece is); from then on
    the estimate stands in for the count, and is exact. A single chunk off its estimate and every
    chunk is counted for good.
    """

    def __init__(self, count_tokens: Callable[[str], int]) -> None:
        self.count = count_tokens
        self.overhead = max(0, count_tokens(""))
        joined = count_tokens("a\n\nb") - count_tokens("a") - count_tokens("b") + self.overhead
        self.join = max(0, joined)
        self._agreements = 0
        self._refuted = False

    @property
    def trusted(self) -> bool:
        return not self._refuted and self._agreements >= _TRUST_AFTER

    def observe(self, estimate: int, actual: int) -> None:
        if actual != estimate:
            self._refuted = True
        else:
            self._agreements += 1

    def content(self, text: str) -> int:
        return max(0, self.count(text) - self.overhead)


def chunk_document(
    doc: ParsedDocument,
    count_tokens: Callable[[str], int],
    max_tokens: int,
    overlap_tokens: int = 32,
    max_chunks: int = 1024,
) -> ChunkingResult:
    if max_tokens < 1:
        raise InvalidInput("max_tokens must be at least 1")
    if max_chunks < 1:
        raise InvalidInput("max_chunks must be at least 1")
    counter = _Counter(count_tokens)
    if counter.overhead >= max_tokens:
        raise InvalidInput("max_tokens leaves no room for text after the tokenizer's overhead")
    return _Chunker(doc, counter, max_tokens, max(0, overlap_tokens), max_chunks).run()


class _Chunker:
    def __init__(
        self,
        doc: ParsedDocument,
        counter: _Counter,
        max_tokens: int,
        overlap_tokens: int,
        max_chunks: int,
    ) -> None:
        self.blocks = doc.blocks
        self.text = doc.text
        self.counter = counter
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self.max_chunks = max_chunks
        # Longer texts are split without being counted first: counting 20 MB to learn that it
        # is too big would cost more than all the chunking. Splitting a text that would have
        # fitted is harmless, packing puts its parts back together.
        self.count_limit = max(2000, max_tokens * 12)
        self.group_chars = max(8, min(128, max_tokens // 2))

    # --- packing ---------------------------------------------------------------------------

    def run(self) -> ChunkingResult:
        source = _Source(self._pieces())
        chunks: list[ChunkDraft] = []
        current: list[_Piece] = []
        used = 0  # estimated tokens of `current` (with overlap and joins)
        overlap: _Overlap | None = None
        truncated = False
        while True:
            piece = source.pull()
            if piece is not None and current and self._continues(current, piece):
                cost = self.counter.join + piece.tokens
                if used + cost <= self.max_tokens:
                    current.append(piece)
                    used += cost
                    continue
            if current:
                if piece is not None:
                    source.push_front([piece])
                draft, kept, leftovers = self._emit(len(chunks), current, overlap, used)
                chunks.append(draft)
                source.push_front(leftovers)
                following = source.peek()
                overlap = None
                if following is not None and self._continues(kept[-1:], following):
                    overlap = self._overlap(kept, following)
                current = []
                continue
            if piece is None:
                break
            if len(chunks) >= self.max_chunks:
                truncated = True
                break
            current = [piece]
            used = self.counter.overhead + piece.tokens
            if overlap is not None:
                used += overlap.tokens + self.counter.join
        return ChunkingResult(chunks=tuple(chunks), truncated=truncated)

    def _continues(self, current: list[_Piece], piece: _Piece) -> bool:
        if piece.location.page != current[-1].location.page:
            return False  # a citation names one page, so a chunk stays on one
        if piece.section == current[-1].section:
            return True
        # A heading directly followed by a deeper one ("Guide" then "Install") is not a chunk
        # of its own: the parent heading rides along into the first chunk of the subsection.
        return piece.heading_level > current[-1].heading_level > 0 and all(
            p.heading_level > 0 for p in current
        )

    def _emit(
        self, index: int, current: list[_Piece], overlap: _Overlap | None, estimate: int
    ) -> tuple[ChunkDraft, list[_Piece], list[_Piece]]:
        """The chunk for `current`, verified by a real count (unless the counter has earned
        trust); pieces that must move on to the next chunk come back as leftovers."""
        pieces = list(current)
        leftovers: list[_Piece] = []
        while True:
            start = overlap.start if overlap else pieces[0].start
            text = self.text[start : pieces[-1].end]
            if len(pieces) == 1 and overlap is None:
                tokens = self.counter.overhead + pieces[0].tokens  # counted on exactly this text
                break
            # Pieces cut out of one word (the last resort, by characters) touch without
            # whitespace between them, and a word's tokens are not the sum of its parts': such
            # a chunk is always counted, and says nothing about whether sums can be trusted.
            spaced = all(self.text[p.start - 1].isspace() for p in pieces[1:]) and (
                overlap is None or (overlap.spaced and self.text[pieces[0].start - 1].isspace())
            )
            if spaced and self.counter.trusted and estimate <= self.max_tokens:
                tokens = estimate
                break
            tokens = self.counter.count(text)
            if spaced:
                self.counter.observe(estimate, tokens)
            if tokens <= self.max_tokens:
                break
            if overlap is not None:
                estimate -= overlap.tokens + self.counter.join
                overlap = None
            else:
                dropped = pieces.pop()
                estimate -= dropped.tokens + self.counter.join
                leftovers.insert(0, dropped)
        spans = [p.location for p in pieces] + ([overlap.location] if overlap else [])
        location = functools.reduce(Location.union, spans)
        draft = ChunkDraft(
            index=index,
            text=text,
            heading_path=pieces[-1].heading_path,
            location=replace(location, char_start=start, char_end=pieces[-1].end),
            token_count=tokens,
            content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        )
        return draft, pieces, leftovers

    def _overlap(self, kept: list[_Piece], following: _Piece) -> _Overlap | None:
        """Whole sentences from the end of the chunk just made, up to overlap_tokens."""
        last = kept[-1]
        if self.overlap_tokens <= 0 or last.heading_level or following.heading_level:
            return None
        room = self.max_tokens - self.counter.overhead - following.tokens - self.counter.join
        budget = min(self.overlap_tokens, room)
        if budget <= 0:
            return None
        sentences = list(_between(self.text, last.start, last.end, _SENTENCE_BREAK))
        tokens = 0
        start: int | None = None
        spaced = True
        for s, e in reversed(sentences):
            cost = last.tokens if len(sentences) == 1 else self.counter.content(self.text[s:e])
            cost += self.counter.join if start is not None else 0
            if tokens + cost > budget:
                break
            if start is not None:
                spaced = spaced and self.text[start - 1].isspace()
            tokens += cost
            start = s
        if start is None or start <= kept[0].start:
            return None  # nothing fits, or it would repeat the whole previous chunk
        line_start = last.location.line_start
        if line_start is not None:
            line_start += self.text.count("\n", last.start, start)
        where = Location(line_start=line_start, time_start=last.location.time_start)
        return _Overlap(start, tokens, where, spaced)

    # --- pieces ----------------------------------------------------------------------------

    def _pieces(self) -> Iterator[_Piece]:
        stack: list[tuple[int, str]] = []
        section = 0
        offset = 0
        for block in self.blocks:
            span = _trim(self.text, offset, offset + len(block.text))
            offset += len(block.text) + 2  # ParsedDocument.text joins blocks with a blank line
            if span is None:
                continue
            start, end = span
            level = 0
            if block.kind == "heading":
                level = max(1, block.level)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, " ".join(block.text.split())))
                section += 1
            path = tuple(title for _, title in stack)
            if end - start <= self.count_limit:
                tokens = self.counter.content(self.text[start:end])
                if self.counter.overhead + tokens <= self.max_tokens:
                    yield _Piece(start, end, tokens, block.location, section, path, level)
                    continue
            yield from self._split_block(block, start, end, section, path, level)

    def _split_block(
        self,
        block: Block,
        start: int,
        end: int,
        section: int,
        path: tuple[str, ...],
        level: int,
    ) -> Iterator[_Piece]:
        where = block.location
        cursor, line = start, where.line_start
        for s, e, tokens in self._split(start, end, _PARAGRAPHS, block.kind in _LINE_KINDS):
            line_start = line_end = None
            if line is not None:
                line_start = line + self.text.count("\n", cursor, s)
                line_end = line_start + self.text.count("\n", s, e)
                if where.line_end is not None:
                    line_start = min(line_start, where.line_end)
                    line_end = min(line_end, where.line_end)
                cursor, line = e, line_end
            piece_where = replace(where, line_start=line_start, line_end=line_end)
            yield _Piece(s, e, tokens, piece_where, section, path, level)

    def _split(
        self, start: int, end: int, level: int, by_lines: bool
    ) -> Iterator[tuple[int, int, int]]:
        """(start, end, tokens) units of text[start:end], each within max_tokens; the span
        itself is known not to fit."""
        if level == _CHARS:
            yield from self._hard_cut(start, end)
            return
        if level == _LINES and not by_lines:
            yield from self._split(start, end, _SENTENCES, by_lines)
            return
        whole = _trim(self.text, start, end)
        for s, e in self._units(start, end, level):
            if (s, e) == whole:  # no separator at this level: no need to count it again
                yield from self._split(s, e, level + 1, by_lines)
                continue
            if e - s <= self.count_limit:
                tokens = self.counter.content(self.text[s:e])
                if self.counter.overhead + tokens <= self.max_tokens:
                    yield s, e, tokens
                    continue
            yield from self._split(s, e, level + 1, by_lines)

    def _units(self, start: int, end: int, level: int) -> Iterator[tuple[int, int]]:
        if level == _PARAGRAPHS:
            return _between(self.text, start, end, _PARAGRAPH_BREAK)
        if level == _LINES:
            return _between(self.text, start, end, _LINE_BREAK)
        if level == _SENTENCES:
            return _between(self.text, start, end, _SENTENCE_BREAK)
        if level == _WORD_GROUPS:
            return self._word_groups(start, end)
        return ((m.start(), m.end()) for m in _WORD.finditer(self.text, start, end))

    def _word_groups(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """Runs of whole words of about group_chars: counting word by word would mean one
        tokenizer call per word."""
        group_start = group_end = -1
        for match in _WORD.finditer(self.text, start, end):
            if group_start < 0:
                group_start = match.start()
            elif match.end() - group_start > self.group_chars:
                yield group_start, group_end
                group_start = match.start()
            group_end = match.end()
        if group_start >= 0:
            yield group_start, group_end

    def _hard_cut(self, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """Last resort for a "word" too long to fit (a base64 blob, a 20 MB line without spaces):
        fixed-width slices, halved until one fits."""
        width = min(self.count_limit, end - start)
        position = start
        while position < end:
            width = max(1, min(width, end - position))
            tokens = self.counter.content(self.text[position : position + width])
            if self.counter.overhead + tokens > self.max_tokens and width > 1:
                width //= 2
                continue
            yield position, position + width, tokens
            position += width


class _Source:
    """The lazy piece stream, with room to push pieces back in front."""

    def __init__(self, pieces: Iterator[_Piece]) -> None:
        self._pieces = pieces
        self._front: deque[_Piece] = deque()

    def pull(self) -> _Piece | None:
        if self._front:
            return self._front.popleft()
        return next(self._pieces, None)

    def peek(self) -> _Piece | None:
        piece = self.pull()
        if piece is not None:
            self._front.appendleft(piece)
        return piece

    def push_front(self, pieces: list[_Piece]) -> None:
        self._front.extendleft(reversed(pieces))


def _between(
    text: str, start: int, end: int, separator: re.Pattern[str]
) -> Iterator[tuple[int, int]]:
    """Spans of text[start:end] between separator matches, trimmed of whitespace."""
    position = start
    for match in separator.finditer(text, start, end):
        group = match.lastindex or 0  # a pattern may mark the separator proper as a group
        span = _trim(text, position, match.start(group))
        if span:
            yield span
        position = match.end(group)
    span = _trim(text, position, end)
    if span:
        yield span


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None
