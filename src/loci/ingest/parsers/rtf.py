"""RTF: paragraphs, headings, list items and tables from a small tokenizer of our own.

RTF is a stream of control words (`\\par`, `\\b0`, `\\u8364`), hex escapes (`\\'e9`) and text in
nested `{}` groups. One pass with one regular expression keeps the cost linear in the file size,
whatever the nesting; the time budget is checked as it goes. Destinations that are not body text
(font and colour tables, pictures, embedded objects, headers and footers, field instructions,
and every `{\\*\\...}` group this reader does not know) are skipped; the style sheet is read for
heading style names and `\\info` for title and author. Hex escapes are decoded with the document's
code page (`\\ansicpgN`), `\\uN` with its fallback characters skipped (`\\ucN`).

A heading is a paragraph with an outline level or a "heading N" style; a list item one with list
formatting (`\\ls`, or a `\\listtext`/`\\pntext` marker); table cells (`\\cell`) and rows (`\\row`)
become table rows. `line_start`/`line_end` count paragraphs, 1-based.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from loci.errors import ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.models import Block, BlockKind, Location, ParsedDocument

_TOKEN = re.compile(
    rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?"  # control word with optional parameter
    rb"|\\'([0-9a-fA-F]{2})"  # hex-escaped byte
    rb"|\\([^a-zA-Z'])"  # control symbol
    rb"|([{}])"  # group
    rb"|([^\\{}\r\n]+)"  # text
    rb"|[\r\n]+"  # line ends carry no meaning in RTF
    rb"|(\\)",  # a lone backslash at the end
    re.DOTALL,
)
_SKIPPED = frozenset(
    {
        "fonttbl",
        "colortbl",
        "pict",
        "object",
        "objdata",
        "header",
        "headerl",
        "headerr",
        "headerf",
        "footer",
        "footerl",
        "footerr",
        "footerf",
        "fldinst",
        "themedata",
        "colorschememapping",
        "latentstyles",
        "datastore",
        "xmlnstbl",
        "listtable",
        "listoverridetable",
        "rsidtbl",
        "generator",
        "mmathPr",
        "pgdsctbl",
        "nonshppict",
        "footnote",
        "annotation",
        "atnid",
        "atnauthor",
        "bkmkstart",
        "bkmkend",
        "sp",
        "shpinst",
        "filetbl",
        "revtbl",
        "userprops",
        "docvar",
        "xe",
        "tc",
        "private",
        "listtext",
        "pntext",
        "pntxta",
        "pntxtb",
        "fldtype",
        "formfield",
        "wgrffmtfilter",
        "ftnsep",
        "ftnsepc",
        "aftnsep",
        "aftnsepc",
        "ftncn",
        "aftncn",
        "template",
        "operator",
        "company",
    }
)
_INFO_FIELDS = {"title": "title", "author": "author", "subject": "subject", "keywords": "keywords"}
_SYMBOLS = {
    "emdash": "\u2014",
    "endash": "\u2013",
    "bullet": "\u2022",
    "lquote": "\u2018",
    "rquote": "\u2019",
    "ldblquote": "\u201c",
    "rdblquote": "\u201d",
    "emspace": " ",
    "enspace": " ",
    "qmspace": " ",
    "tab": "\t",
    "line": "\n",
}
_HEADING_STYLE = re.compile(r"^\s*(?:heading|titre|überschrift|título|titolo|kop)\s*(\d)", re.I)
_CHECK_EVERY = 20_000
_MAX_DEPTH = 10_000


@dataclass
class _Group:
    skip: bool = False
    uc: int = 1
    destination: str = ""  # "stylesheet", "info", "info:title", ...
    marker: bool = False  # a \listtext or \pntext group: the paragraph is a list item
    in_stylesheet: bool = False  # inherited by nested groups, so no stack walk per token
    in_info: bool = False


@dataclass
class _Paragraph:
    style: int | None = None
    outline: int | None = None
    listed: bool = False
    in_table: bool = False


@dataclass
class _State:
    blocks: list[Block] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    paragraph: _Paragraph = field(default_factory=_Paragraph)
    styles: dict[int, str] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)
    cells: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    rows_start: int = 0
    line: int = 0
    list_lines: list[str] = field(default_factory=list)
    list_start: int = 0


def parse_rtf(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    if not data.lstrip().startswith(b"{\\rtf"):
        raise ParseError("not an RTF file: it does not start with {\\rtf")
    reader = _Reader(Deadline(budgets, "RTF"))
    reader.read(data)
    state = reader.state
    title = state.info.get("title") or next(
        (b.text for b in state.blocks if b.kind == "heading" and b.level == 1), None
    )
    metadata = {k: v for k, v in state.info.items() if k != "title"}
    warnings = () if state.blocks else ("no text found",)
    return ParsedDocument(
        title=title, blocks=tuple(state.blocks), metadata=metadata, warnings=warnings
    )


class _Reader:
    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.state = _State()
        self.stack: list[_Group] = []
        self.group = _Group()
        self.codec = "cp1252"
        self.pending = bytearray()  # hex-escaped bytes awaiting decoding together (DBCS)
        self.skip_chars = 0  # fallback characters still to drop after a \uN
        self.style_name: list[str] = []
        self.style_number: int | None = None
        self.info_text: list[str] = []

    def read(self, data: bytes) -> None:
        position, count, end = 0, 0, len(data)
        while position < end:
            count += 1
            if count % _CHECK_EVERY == 0:
                self.deadline.check()
            match = _TOKEN.match(data, position)
            if match is None:  # cannot happen with the catch-all alternatives; stay safe
                break
            position = match.end()
            word, param, hexbyte, symbol, brace, text, _ = match.groups()
            if hexbyte is not None:
                self._hex(int(hexbyte, 16))
                continue
            self._flush_bytes()
            if word is not None:
                number = int(param) if param is not None else None
                if word == b"bin" and number:
                    position += max(0, number)  # raw binary data follows; never text
                    continue
                self._control(word.decode("ascii"), number)
            elif symbol is not None:
                self._symbol(symbol.decode("latin-1"))
            elif brace == b"{":
                if len(self.stack) >= _MAX_DEPTH:
                    raise ParseError(f"RTF nests groups deeper than {_MAX_DEPTH} levels; refused")
                self.stack.append(self.group)
                outer = self.group
                self.group = _Group(
                    skip=outer.skip,
                    uc=outer.uc,
                    in_stylesheet=outer.in_stylesheet,
                    in_info=outer.in_info,
                )
            elif brace == b"}":
                self._end_group()
            elif text is not None:
                self._text(text.decode(self.codec, errors="replace"))
        self._flush_bytes()
        self._end_paragraph()
        self._end_table()
        self._end_list()

    # --- tokens ------------------------------------------------------------------------------

    def _control(self, word: str, number: int | None) -> None:
        group, paragraph = self.group, self.state.paragraph
        if word in _SKIPPED:
            group.skip = True
            group.marker = word in ("listtext", "pntext")
            if group.marker:
                paragraph.listed = True
            return
        if word in ("stylesheet", "info"):
            group.destination = word
            group.skip = True  # neither is body text; their fields are collected apart
            group.in_stylesheet = group.in_stylesheet or word == "stylesheet"
            group.in_info = group.in_info or word == "info"
            return
        if word in _INFO_FIELDS and group.in_info:
            group.destination = "info:" + _INFO_FIELDS[word]
            self.info_text = []
            return
        if word == "ansicpg" and number is not None:
            self.codec = _codec(number)
        elif word == "uc" and number is not None:
            group.uc = max(0, min(number, 16))
        elif word == "u" and number is not None:
            self._text(chr(number + 65536 if number < 0 else number))
            self.skip_chars = group.uc
            return
        if self.group.in_stylesheet:
            if word == "s" and number is not None:
                self.style_number = number
            return
        if group.skip:
            return
        if word in _SYMBOLS:
            self._text(_SYMBOLS[word])
        elif word in ("par", "sect", "page"):
            if paragraph.in_table:
                self.state.text.append(" ")
            else:
                self._end_paragraph()
        elif word == "pard":
            self.state.paragraph = _Paragraph()
        elif word == "s" and number is not None:
            paragraph.style = number
        elif word == "outlinelevel" and number is not None:
            paragraph.outline = number
        elif word in ("ls", "ilvl"):
            paragraph.listed = True
        elif word == "intbl":
            paragraph.in_table = True
        elif word in ("cell", "nestcell"):
            self._end_list()
            if not self.state.rows and not self.state.cells:
                self.state.rows_start = self.state.line + 1
            self.state.cells.append(_clean(self._take_text()))
        elif word in ("row", "nestrow"):
            self.state.line += 1
            cells = self.state.cells
            while cells and not cells[-1]:
                cells.pop()
            if any(cells):
                self.state.rows.append(" | ".join(cells))
            self.state.cells = []

    def _symbol(self, symbol: str) -> None:
        if symbol == "*":
            self.group.skip = True  # an ignorable destination this reader does not know
            return
        if self.group.skip and not self._collecting():
            return
        if symbol in "\\{}":
            self._text(symbol)
        elif symbol == "~":
            self._text("\u00a0")
        elif symbol == "_":
            self._text("-")
        elif symbol in ("\n", "\r"):
            self._control("par", None)
        # \- (optional hyphen), \: (index subentry) and unknown symbols carry no text

    def _hex(self, value: int) -> None:
        if self.skip_chars:
            self.skip_chars -= 1
            return
        self.pending.append(value)

    def _flush_bytes(self) -> None:
        if self.pending:
            text = bytes(self.pending).decode(self.codec, errors="replace")
            self.pending.clear()
            self._text(text, from_bytes=True)

    def _text(self, text: str, from_bytes: bool = False) -> None:
        if self.skip_chars and not from_bytes:
            dropped = min(self.skip_chars, len(text))
            text = text[dropped:]
            self.skip_chars -= dropped
        if not text:
            return
        destination = self.group.destination
        if self.group.in_stylesheet:
            self.style_name.append(text)
        elif destination.startswith("info:"):
            self.info_text.append(text)
        elif not self.group.skip:
            self.state.text.append(text)

    def _end_group(self) -> None:
        group = self.group
        if group.destination.startswith("info:"):
            value = _clean("".join(self.info_text))
            if value:
                self.state.info[group.destination[5:]] = value[:500]
        if self.group.in_stylesheet and group.destination != "stylesheet":
            if self.style_number is not None:
                name = "".join(self.style_name).split(";", 1)[0]
                self.state.styles[self.style_number] = name.strip()
            self.style_number = None
            self.style_name = []
        self.group = self.stack.pop() if self.stack else _Group()
        self.skip_chars = 0

    def _collecting(self) -> bool:
        return self.group.in_stylesheet or self.group.destination.startswith("info:")

    # --- blocks ------------------------------------------------------------------------------

    def _take_text(self) -> str:
        text = "".join(self.state.text)
        self.state.text = []
        return text

    def _end_paragraph(self) -> None:
        state = self.state
        text = "\n".join(_clean(line) for line in self._take_text().split("\n") if line.strip())
        if not text:
            return
        self._end_table()
        state.line += 1
        paragraph = state.paragraph
        level = self._heading_level(paragraph)
        if level is not None:
            self._end_list()
            self._block("heading", " ".join(text.split()), state.line, state.line, level)
        elif paragraph.listed:
            if not state.list_lines:
                state.list_start = state.line
            state.list_lines.append(f"• {text}")
        else:
            self._end_list()
            self._block("paragraph", text, state.line, state.line)

    def _heading_level(self, paragraph: _Paragraph) -> int | None:
        if paragraph.outline is not None and 0 <= paragraph.outline < 9:
            return paragraph.outline + 1
        name = self.state.styles.get(paragraph.style) if paragraph.style is not None else None
        if name:
            match = _HEADING_STYLE.match(name)
            if match:
                return max(1, int(match.group(1)))
            if name.strip().lower() == "title":
                return 1
        return None

    def _end_table(self) -> None:
        state = self.state
        if state.cells:  # a row whose \row never came
            state.rows.append(" | ".join(state.cells))
            state.cells = []
        if state.rows:
            self._block("table", "\n".join(state.rows), state.rows_start, max(state.line, 1))
            state.rows = []

    def _end_list(self) -> None:
        state = self.state
        if state.list_lines:
            self._block("list", "\n".join(state.list_lines), state.list_start, state.line)
            state.list_lines = []

    def _block(self, kind: BlockKind, text: str, start: int, end: int, level: int = 0) -> None:
        self.state.blocks.append(
            Block(
                kind,
                text,
                level=level,
                location=Location(line_start=start, line_end=max(start, end)),
            )
        )


def _codec(codepage: int) -> str:
    name = f"cp{codepage}"
    try:
        codecs.lookup(name)
    except LookupError:
        return "cp1252"
    return name


def _clean(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split())
