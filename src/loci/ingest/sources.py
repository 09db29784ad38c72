"""Where documents come from before they are stored: files on disk, notes, fetched pages.

Nothing here touches the store: it turns a source into a name, bytes and metadata, and refuses
what cannot be kept with a one-line reason.
"""

from __future__ import annotations

import fnmatch
import glob
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

# Control characters, and the bidirectional overrides that make "evil\u202efdp.exe" display as
# "evilexe.pdf": a name is shown to people, so it must read as what it is.
CONTROL = re.compile(r"[\x00-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean_name(name: str) -> str:
    """A display name from a user-supplied file name: the last path part, no control or
    bidirectional-override characters.

    Names are only ever shown; blobs are stored by hash. Still, a name like `../../etc/passwd`
    or `a\\b.txt` is cut down to its last part so nothing downstream can mistake it for a path.
    """
    name = unicodedata.normalize("NFC", CONTROL.sub("", name))
    last = re.split(r"[/\\]", name)[-1].strip()
    if last in ("", ".", ".."):
        return "untitled"
    return last[:255]


def is_url(arg: str) -> bool:
    return arg.lower().startswith(("http://", "https://"))


@dataclass(frozen=True)
class PathProblem:
    arg: str
    reason: str


def expand_paths(
    args: Iterable[str], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> tuple[list[Path], list[PathProblem]]:
    """Files named by paths, globs and folders (recursively), filtered by include/exclude globs."""
    found: dict[Path, None] = {}
    problems: list[PathProblem] = []

    def wanted(path: Path) -> bool:
        name = path.name
        if name.startswith("."):
            return False
        if include and not any(fnmatch.fnmatch(name, pat) for pat in include):
            return False
        return not any(
            fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(str(path), pat) for pat in exclude
        )

    for arg in args:
        matches = (
            [Path(m) for m in glob.glob(arg, recursive=True)]
            if glob.has_magic(arg)
            else [Path(arg)]
        )
        if not matches or not all(m.exists() for m in matches):
            problems.append(PathProblem(arg, "no such file or folder"))
            continue
        for match in matches:
            if match.is_dir():
                for child in sorted(match.rglob("*")):
                    parts = child.relative_to(match).parts
                    if (
                        child.is_file()
                        and not any(p.startswith(".") for p in parts)
                        and wanted(child)
                    ):
                        found.setdefault(child, None)
            elif match.is_file() and (not include or wanted(match)):
                found.setdefault(match, None)
    return list(found), problems


def note_markdown(text: str, title: str | None, tags: Sequence[str]) -> bytes:
    """A note's canonical form: Markdown with a YAML frontmatter of title and tags.

    No timestamp goes into the bytes (the row has one), so saving the same note twice is a no-op
    by content hash: an ingest id that depends only on the content.
    """
    meta: dict[str, object] = {}
    if title:
        meta["title"] = title
    if tags:
        meta["tags"] = list(tags)
    if not meta:
        return f"{text.strip()}\n".encode()
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{front}\n---\n\n{text.strip()}\n".encode()


def web_markdown(url: str, text: str, title: str | None) -> bytes:
    """A page a browser read for us: its Markdown under a frontmatter of title and source URL.

    The URL is part of the bytes, so the same text saved from two addresses is two documents,
    while saving one page twice unchanged is a no-op by content hash.
    """
    meta: dict[str, object] = {"title": title} if title else {}
    meta["source"] = url
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{front}\n---\n\n{text.strip()}\n".encode()


def note_body(markdown: bytes) -> str:
    """The text a note was saved with: its canonical bytes less the frontmatter."""
    text = markdown.decode("utf-8", errors="replace")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            text = text[end + 5 :]
    return text.strip("\n")


_MARKUP_START = re.compile(r"^(?:\s*(?:#{1,6}\s+|>\s*|[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+))+")
TITLE_CHARS = 120
EXCERPT_CHARS = 280


def _plain_line(line: str) -> str:
    """A Markdown line as it reads: no heading, quote or list marker, no emphasis marks."""
    line = _MARKUP_START.sub("", line)
    return " ".join(re.sub(r"(\*\*|__|\*|`)", "", line).split())


def _shortened(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return f"{cut.rstrip(' ,;:')}…"


def note_title(text: str) -> str | None:
    """The title of a note written without one: its first line, as it reads ("Call the
    plumber", not "call-the-plumber.md")."""
    for line in text.splitlines():
        plain = _plain_line(line)
        if plain:
            return _shortened(plain, TITLE_CHARS)
    return None


def note_excerpt(text: str, title: str | None) -> str:
    """The first lines of a note, as a card shows them: plain, the line its title came from
    left out, about three lines long."""
    lines = [plain for line in text.splitlines() if (plain := _plain_line(line))]
    if lines and title is not None and _shortened(lines[0], TITLE_CHARS) == title:
        lines = lines[1:]
    return _shortened(" ".join(lines), EXCERPT_CHARS)


def note_name(text: str, title: str | None) -> str:
    basis = title or text.strip().splitlines()[0] if text.strip() else "note"
    slug = re.sub(r"[^\w]+", "-", (basis or "note").lower()).strip("-")[:60] or "note"
    return f"{slug}.md"


def page_name(url: str, content_type: str) -> str:
    """A readable name for a fetched page: host and path, with an extension for its type."""
    parts = urlsplit(url)
    path = parts.path.strip("/").replace("/", "-")
    base = f"{parts.hostname or 'page'}-{path}" if path else (parts.hostname or "page")
    base = re.sub(r"[^\w.\-]+", "-", base)[:120]
    ext = (
        ".pdf"
        if "pdf" in content_type
        else ".md"
        if "markdown" in content_type
        else ".txt"
        if content_type.startswith("text/plain")
        else ".html"
    )
    return base if base.lower().endswith(ext) else base + ext
