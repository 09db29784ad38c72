"""`loci brain import`: a folder (an Obsidian vault, or an earlier export) into the brain.

A file whose frontmatter names an `id` and a `kind` is a brain document and is stored exactly as
it is, byte for byte — but for one line: a document that names no `folder` gets the folder it sits
in (`people/ana.md` → `folder: people`, `Close Friends/ana.md` → `close-friends`; at the top, or
where a folder's name has no letter a slug can keep, its type's default). Any other Markdown file
becomes a draft `note` page (`plain_pages`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from loci.errors import InvalidInput
from loci.graph import edits
from loci.graph.document import DEFAULT_FOLDERS, EVIDENCE_ZONE, FRONTMATTER, BrainDoc, parse
from loci.graph.file_writes import commit_alone, stored_document, validation_problems
from loci.graph.links import slugify
from loci.graph.markdown_folder import MarkdownFile, is_graph_document, scan_markdown
from loci.graph.plain_pages import (
    IMPORTED_FROM,
    PlainFile,
    plain_id,
    plain_page,
    same_page,
    split_plain,
)
from loci.graph.service import BrainGraph
from loci.graph.transfer_results import FileResult, TransferReport, duplicate_claim, summarize
from loci.models import Brain
from loci.store.graph_tables import GraphStore


class FolderImport:
    def __init__(self, graph: BrainGraph) -> None:
        self.graph = graph
        self.store = graph.graph

    def run(self, brain: Brain, root: Path, *, actor: str) -> TransferReport:
        results: dict[str, FileResult] = {}
        graph_files: list[tuple[MarkdownFile, BrainDoc]] = []
        plain: list[PlainFile] = []
        files = scan_markdown(root)
        for f in files:
            if f.text is None:
                results[f.path] = FileResult(f.path, None, "refused", problems=(f.error or "",))
            elif is_graph_document(f.text):
                try:
                    f = placed(f)
                    graph_files.append((f, parse(f.text or "")))
                except InvalidInput as error:
                    results[f.path] = FileResult(f.path, None, "refused", problems=(error.message,))
            else:
                try:
                    plain.append(split_plain(f))
                except InvalidInput as error:
                    results[f.path] = FileResult(f.path, None, "refused", problems=(error.message,))
        claimed: dict[str, str] = {}  # id → the file that has it
        for f, doc in graph_files:
            if doc.id in claimed:
                results[f.path] = duplicate_claim(f.path, doc.id, claimed[doc.id])
            else:
                claimed[doc.id] = f.path
        for item in plain:
            item.id = plain_id(item, claimed)
            if item.id:
                claimed[item.id] = item.file.path
            else:
                results[item.file.path] = duplicate_claim(item.file.path, slugify(item.stem), "")
        resolve = name_resolver(
            self.store,
            brain,
            [(f, doc) for f, doc in graph_files if f.path not in results],
            [p for p in plain if p.file.path not in results],
        )
        for f, doc in graph_files:
            if f.path not in results:
                results[f.path] = self._import_graph_file(brain, f, doc, actor)
        for item in plain:
            if item.file.path not in results:
                results[item.file.path] = self._import_plain(brain, item, resolve, actor)
        return summarize("import", brain, [results[f.path] for f in files])

    def _import_graph_file(
        self, brain: Brain, f: MarkdownFile, doc: BrainDoc, actor: str
    ) -> FileResult:
        text = f.text or ""
        problems = validation_problems(doc)
        if problems:
            return FileResult(f.path, doc.id, "refused", problems=problems)
        notes = []
        if f.normalized:
            notes.append("line endings normalized")
        if f.path != doc.path:
            notes.append(f"stored as {doc.path}")
        current = stored_document(self.graph, brain, doc.id)
        if current is not None and current.content == text:
            return FileResult(f.path, doc.id, "unchanged", f.normalized, message="; ".join(notes))
        expected = current.content_hash if current else None
        failure = commit_alone(
            self.graph,
            brain,
            lambda: self.graph.writer.put_text(text, expected_hash=expected, action="import"),
            actor,
        )
        if failure:
            return FileResult(f.path, doc.id, "refused", f.normalized, problems=(failure.message,))
        if current is not None:
            notes.append("the version it replaced is kept in history")
        action = "updated" if current else "created"
        return FileResult(f.path, doc.id, action, f.normalized, message="; ".join(notes))

    def _import_plain(
        self,
        brain: Brain,
        item: PlainFile,
        resolve: Callable[[str], tuple[str, str] | None],
        actor: str,
    ) -> FileResult:
        doc, notes = plain_page(item, resolve)
        problems = validation_problems(doc)
        if problems:
            return FileResult(item.file.path, doc.id, "refused", True, problems=problems)
        current = stored_document(self.graph, brain, doc.id)
        if current is not None:
            existing = parse(current.content)
            if existing.extra.get(IMPORTED_FROM) != item.file.path:
                return FileResult(
                    item.file.path, doc.id, "refused", True, problems=(not_from_this_file(doc.id),)
                )
            if same_page(existing, doc):
                return FileResult(item.file.path, doc.id, "unchanged", True, message=notes)
            doc = doc.with_changes(created=existing.created)
        expected = current.content_hash if current else None
        failure = commit_alone(
            self.graph,
            brain,
            lambda: self.graph.writer.put(doc, expected_hash=expected, action="import"),
            actor,
        )
        if failure:
            return FileResult(item.file.path, doc.id, "refused", True, problems=(failure.message,))
        action = "updated" if current else "created"
        return FileResult(item.file.path, doc.id, action, True, message=notes)


def not_from_this_file(doc_id: str) -> str:
    return (
        f"id: the brain already has a document {doc_id!r} that did not come from this file;"
        f" rename the file or move that document (`loci brain move {doc_id} --id …`)"
    )


def name_resolver(
    store: GraphStore,
    brain: Brain,
    graph_files: Sequence[tuple[MarkdownFile, BrainDoc]],
    plain: Sequence[PlainFile],
    forget: Collection[str] = (),
) -> Callable[[str], tuple[str, str] | None]:
    """Obsidian resolves `[[Name]]` by file name; so does this, then by the ids, titles and
    aliases of the folder's brain documents, then by those already in the brain — but for the
    pages in `forget` (their files were deleted: a link to one is a link to nothing now)."""
    names: dict[str, tuple[str, str]] = {}
    for item in plain:
        names.setdefault(slugify(item.stem), (edits.kind_for(item.folder), item.id))
    for _, doc in graph_files:
        for name in (doc.id, doc.title, *doc.aliases):
            names.setdefault(slugify(name), (doc.kind, doc.id))
    for record in store.documents(brain.id, statuses=("draft", "active", "archived")):
        if record.id in forget:
            continue
        for name in (record.id, record.title, *record.aliases):
            names.setdefault(slugify(name), (record.kind, record.id))

    def resolve(target: str) -> tuple[str, str] | None:
        name = target.strip().rsplit("/", 1)[-1].removesuffix(".md")
        return names.get(slugify(name)) if name else None

    return resolve


def placed(f: MarkdownFile) -> MarkdownFile:
    """The file with a `folder:` line added when its frontmatter names none: the folder a file is
    in is its folder (a vault keeps people in `people/`), and only a file at the top takes its
    type's default folder. Everything else stays byte for byte."""
    text = f.text or ""
    doc = parse(text)
    if doc.folder:
        return f
    # A vault's folders are named for people ("People/Close friends"); a brain's are slugs.
    segments = [slugify(part) for part in f.path.split("/")[:-1]]
    where = "/".join(segments) if all(segments) else ""
    if not where:
        where = EVIDENCE_ZONE if doc.kind == "evidence" else DEFAULT_FOLDERS.get(doc.type, "")
    match = FRONTMATTER.match(text)
    if not where or match is None:
        return f  # validation names what is missing
    end = match.end(1)
    return replace(f, text=f"{text[:end]}\nfolder: {where}{text[end:]}")
