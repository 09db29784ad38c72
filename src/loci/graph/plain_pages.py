"""Plain Markdown (an Obsidian vault's notes) turned into draft `note` pages: id from the file
name, folder from its directory, title from its first heading, and plain `[[Some Page]]`
wikilinks turned into `[[page:some-page|Some Page]]` when they name a known page."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from loci.errors import InvalidInput
from loci.graph import edits
from loci.graph.document import (
    DEFAULT_FOLDERS,
    FRONTMATTER,
    KNOWN_KEYS,
    TIMELINE_HEADING,
    BrainDoc,
)
from loci.graph.links import PLAIN_LINK, slugify
from loci.graph.markdown_folder import MarkdownFile

IMPORTED_FROM = "importedFrom"  # frontmatter key: the vault file a converted page came from
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


@dataclass
class PlainFile:
    """A plain Markdown file on its way to becoming a page."""

    file: MarkdownFile
    stem: str
    folder: str
    front: dict[str, Any]
    body: str
    id: str = ""


def split_plain(f: MarkdownFile) -> PlainFile:
    assert f.text is not None
    front: dict[str, Any] = {}
    body = f.text
    match = FRONTMATTER.match(f.text)
    if match is not None:
        try:
            loaded = yaml.safe_load(match.group(1)) or {}
        except yaml.YAMLError as error:
            raise InvalidInput(f"the frontmatter is not valid YAML: {error}") from None
        if not isinstance(loaded, dict):
            raise InvalidInput("the frontmatter must be a mapping of keys to values")
        front = {str(k): v for k, v in loaded.items()}
        body = f.text[match.end() :]
    directory, _, name = f.path.rpartition("/")
    folder = "/".join(slugify(part) for part in directory.split("/")) if directory else ""
    return PlainFile(f, name[: -len(".md")], folder or DEFAULT_FOLDERS["note"], front, body)


def plain_id(item: PlainFile, claimed: dict[str, str]) -> str:
    """The file name's slug; if another file has it, prefixed with the folder's."""
    evidence = edits.kind_for(item.folder) == "evidence"
    for candidate in (item.stem, f"{item.folder.replace('/', '-')}-{item.stem}"):
        doc_id = slugify(candidate)
        if evidence and not doc_id.startswith("ev-"):
            doc_id = slugify("ev-" + doc_id)
        if doc_id not in claimed:
            return doc_id
    return ""


def plain_page(
    item: PlainFile, resolve: Callable[[str], tuple[str, str] | None]
) -> tuple[BrainDoc, str]:
    """The page a plain file becomes, and a note of what was converted."""
    notes = []
    unresolved = 0
    linked = 0

    def swap(match: re.Match[str]) -> str:
        nonlocal unresolved, linked
        if match.start() > 0 and body[match.start() - 1] == "!":  # an embed: ![[image.png]]
            return match.group(0)
        found = resolve(match.group(1))
        if found is None:
            unresolved += 1
            return match.group(0)
        kind, target = found
        label = " ".join((match.group(2) or match.group(1)).split())
        linked += 1
        return f"[[{kind}:{target}|{label}]]"

    body = item.body
    converted = PLAIN_LINK.sub(swap, body)
    lines = converted.split("\n")
    if any(line.strip() == TIMELINE_HEADING for line in lines):
        # The heading would split the page into truth and timeline when it is read back.
        lines = [
            "## Timeline notes" if line.strip() == TIMELINE_HEADING else line for line in lines
        ]
        notes.append(f"its {TIMELINE_HEADING!r} heading became '## Timeline notes'")
    truth = "\n".join(lines).strip("\n")
    heading = HEADING.search(truth)
    title = str(item.front.get("title") or (heading.group(1) if heading else item.stem)).strip()
    aliases = [
        str(a) for key in ("aliases", "alias") for a in _as_list(item.front.get(key)) if a
    ]  # fmt: skip
    extra = {k: v for k, v in item.front.items() if k not in KNOWN_KEYS and k != "alias"}
    extra[IMPORTED_FROM] = item.file.path
    ignored = sorted(k for k in item.front if k in KNOWN_KEYS and k not in ("title", "aliases"))
    if ignored:
        notes.append(f"ignored frontmatter: {', '.join(ignored)}")
    if linked:
        notes.append(f"{linked} wikilink(s) became page links")
    if unresolved:
        notes.append(f"{unresolved} wikilink(s) name no page and were left as they are")
    doc = BrainDoc(
        id=item.id,
        kind=edits.kind_for(item.folder),
        type="note",
        folder=item.folder,
        status="draft",
        title=title,
        aliases=tuple(dict.fromkeys(a for a in aliases if a != title)),
        truth=truth,
        extra=extra,
    )
    return doc, "; ".join(notes)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def same_page(stored: BrainDoc, new: BrainDoc) -> bool:
    return stored.with_changes(created="", updated="") == new.with_changes(created="", updated="")
