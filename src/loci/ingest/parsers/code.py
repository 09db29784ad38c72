"""Source code and configuration files: text kept verbatim as code blocks, language noted.

A file is split at blank lines, the way a reader sees a program's paragraphs (a function, an
import list, a config section); each block keeps its line span in the file, so a citation points
at `parser.py` lines 40-58. The language comes from the file name alone: content sniffing would
guess wrong on short files and buys nothing for search.
"""

from __future__ import annotations

from pathlib import PurePath

from loci.ingest.encoding import decode_text
from loci.models import Block, Location, ParsedDocument

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".ipynb": "json",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".swift": "swift",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".pl": "perl",
    ".pm": "perl",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".clj": "clojure",
    ".el": "emacs-lisp",
    ".zig": "zig",
    ".nim": "nim",
    ".vue": "vue",
    ".svelte": "svelte",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".fish": "fish",
    ".ps1": "powershell",
    ".bat": "batch",
    ".cmd": "batch",
    ".sql": "sql",
    ".graphql": "graphql",
    ".proto": "protobuf",
    ".css": "css",
    ".scss": "scss",
    ".less": "less",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".jsonl": "json",
    ".xml": "xml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "config",
    ".tf": "terraform",
    ".gradle": "groovy",
    ".groovy": "groovy",
    ".cmake": "cmake",
    ".mk": "make",
    ".tex": "latex",
    ".rst": "restructuredtext",
}

_NAMES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "justfile": "just",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "cmakelists.txt": "cmake",
    "vagrantfile": "ruby",
}


def language_of(name: str) -> str | None:
    """The language of a file named `name`, or None when it is not a known code file."""
    path = PurePath(name)
    lowered = path.name.lower()
    if lowered in _NAMES:
        return _NAMES[lowered]
    if lowered.startswith("dockerfile."):
        return "dockerfile"
    return LANGUAGES.get(path.suffix.lower())


def parse_code(data: bytes, name: str) -> ParsedDocument:
    text = decode_text(data)
    language = language_of(name) or "text"
    blocks: list[Block] = []
    current: list[str] = []
    start = 1
    number = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line.rstrip())
        elif current:
            blocks.append(
                Block(
                    "code",
                    "\n".join(current),
                    location=Location(line_start=start, line_end=number - 1),
                )
            )
            current = []
    if current:
        blocks.append(
            Block("code", "\n".join(current), location=Location(line_start=start, line_end=number))
        )
    warnings = () if blocks else ("no text found",)
    return ParsedDocument(
        title=None,
        blocks=tuple(blocks),
        metadata={"language": language, "lines": number},
        warnings=warnings,
    )
