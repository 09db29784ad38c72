"""A brain's graph in and out of folders of Markdown: import, export, materialize and sync.

- `import_folder` reads a folder (an Obsidian vault, or an earlier export). A file whose
  frontmatter names an `id` and a `kind` is a brain document and is stored exactly as it is, byte
  for byte; any other Markdown file becomes a draft `note` page — id from the file name, folder
  from its directory, title from its first heading — whose plain `[[Some Page]]` wikilinks become
  `[[page:some-page|Some Page]]` when they name a page of the import or of the brain.
- `export` writes every document to `folder/id.md` exactly as stored.
- `materialize` writes the documents to a working directory with a hidden manifest holding each
  one's content hash; `sync` brings the directory's edits, new files and deletions back through
  the validated writes, each against the hash recorded at materialization. A document that
  changed in the brain meanwhile is a conflict: reported, and nothing overwritten either way.

Each file is its own write, so a bad file fails alone and is reported with what to fix.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from loci.errors import Conflict, InvalidInput, LociError, NotFound
from loci.graph import edits
from loci.graph.document import (
    DEFAULT_FOLDERS,
    FRONTMATTER,
    KNOWN_KEYS,
    TIMELINE_HEADING,
    BrainDoc,
    parse,
)
from loci.graph.links import PLAIN_LINK, slugify
from loci.graph.service import BrainGraph
from loci.graph.validate import validate
from loci.graph.writer import Change
from loci.models import Brain, GraphDelete, GraphDocument
from loci.store.blobs import sha256_hex

MANIFEST = ".loci-brain.json"
MANIFEST_FORMAT = 1
MAX_FILE_BYTES = 5 * 1024 * 1024
IMPORTED_FROM = "importedFrom"  # frontmatter key: the vault file a converted page came from
GRAPH_KEYS = (re.compile(r"^id:", re.MULTILINE), re.compile(r"^kind:", re.MULTILINE))
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
FAILED_ACTIONS = ("refused", "conflict")


@dataclass(frozen=True)
class FileResult:
    path: str  # relative to the folder, with '/'
    id: str | None
    action: str  # created updated unchanged deleted written refused conflict
    converted: bool = False  # plain Markdown that became a page (or line endings normalized)
    problems: tuple[str, ...] = ()  # what to fix, for a refused file
    message: str = ""


@dataclass(frozen=True)
class TransferReport:
    operation: str  # import export materialize sync
    brain: str
    files: tuple[FileResult, ...]
    counts: dict[str, int]  # per action

    @property
    def failed(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.action in FAILED_ACTIONS)


def _report(operation: str, brain: Brain, files: list[FileResult]) -> TransferReport:
    counts: dict[str, int] = {}
    for f in files:
        counts[f.action] = counts.get(f.action, 0) + 1
    return TransferReport(operation, brain.name, tuple(files), counts)


@dataclass(frozen=True)
class MarkdownFile:
    """A `.md` file of a folder, read as text."""

    path: str
    text: str | None  # None: unreadable, see `error`
    error: str | None = None
    normalized: bool = False  # a byte-order mark or CRLF line endings were removed


def scan_markdown(root: Path) -> list[MarkdownFile]:
    """Every `.md` file under `root` in path order, skipping hidden files and folders (the
    manifest, `.obsidian/`, `.trash/`) and never following a symbolic link."""
    if not root.is_dir():
        raise NotFound(f"no folder {str(root)!r}")
    found: list[MarkdownFile] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or not name.lower().endswith(".md"):
                continue
            full = Path(folder) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                found.append(MarkdownFile(rel, None, "a symbolic link; copy the file in instead"))
                continue
            if full.stat().st_size > MAX_FILE_BYTES:
                found.append(MarkdownFile(rel, None, f"larger than {MAX_FILE_BYTES // 2**20} MB"))
                continue
            try:
                text = full.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                found.append(MarkdownFile(rel, None, "not UTF-8 text; save it as UTF-8"))
                continue
            clean = text.removeprefix("\ufeff").replace("\r\n", "\n")
            found.append(MarkdownFile(rel, clean, normalized=clean != text))
    return found


def _is_graph_document(text: str) -> bool:
    match = FRONTMATTER.match(text)
    return match is not None and all(key.search(match.group(1)) for key in GRAPH_KEYS)


def _safe_path(root: Path, rel: str) -> Path:
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise InvalidInput(f"{rel!r} would be written outside the folder")
    return target


def _write_file(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, so a crash never leaves half a file; the
    file gets the usual permissions (the umask's), as an editor's save would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _problems(doc: BrainDoc) -> tuple[str, ...]:
    return tuple(str(p) for p in validate(doc))


@dataclass
class _Plain:
    """A plain Markdown file on its way to becoming a page."""

    file: MarkdownFile
    stem: str
    folder: str
    front: dict[str, Any]
    body: str
    id: str = ""


@dataclass
class _Manifest:
    brain: str
    documents: dict[str, dict[str, str]]  # id → {"path": …, "hash": …}

    @property
    def by_path(self) -> dict[str, str]:
        return {entry["path"]: doc_id for doc_id, entry in self.documents.items()}


class GraphTransfer:
    def __init__(self, graph: BrainGraph) -> None:
        self.graph = graph
        self.store = graph.graph

    # import -------------------------------------------------------------------------------
    def import_folder(self, brain: Brain, root: Path, *, actor: str) -> TransferReport:
        results: dict[str, FileResult] = {}
        graph_files: list[tuple[MarkdownFile, BrainDoc]] = []
        plain: list[_Plain] = []
        files = scan_markdown(root)
        for f in files:
            if f.text is None:
                results[f.path] = FileResult(f.path, None, "refused", problems=(f.error or "",))
            elif _is_graph_document(f.text):
                try:
                    graph_files.append((f, parse(f.text)))
                except InvalidInput as error:
                    results[f.path] = FileResult(f.path, None, "refused", problems=(error.message,))
            else:
                try:
                    plain.append(_split_plain(f))
                except InvalidInput as error:
                    results[f.path] = FileResult(f.path, None, "refused", problems=(error.message,))
        claimed: dict[str, str] = {}  # id → the file that has it
        for f, doc in graph_files:
            if doc.id in claimed:
                results[f.path] = _duplicate(f.path, doc.id, claimed[doc.id])
            else:
                claimed[doc.id] = f.path
        for item in plain:
            item.id = _plain_id(item, claimed)
            if item.id:
                claimed[item.id] = item.file.path
            else:
                results[item.file.path] = _duplicate(item.file.path, slugify(item.stem), "")
        resolve = self._resolver(brain, graph_files, plain, results)
        for f, doc in graph_files:
            if f.path not in results:
                results[f.path] = self._import_graph_file(brain, f, doc, actor)
        for item in plain:
            if item.file.path not in results:
                results[item.file.path] = self._import_plain(brain, item, resolve, actor)
        return _report("import", brain, [results[f.path] for f in files])

    def _resolver(
        self,
        brain: Brain,
        graph_files: list[tuple[MarkdownFile, BrainDoc]],
        plain: list[_Plain],
        results: dict[str, FileResult],
    ) -> Callable[[str], tuple[str, str] | None]:
        """Obsidian resolves `[[Name]]` by file name; so does this, then by the ids, titles
        and aliases of the import's brain documents, then by those already in the brain."""
        names: dict[str, tuple[str, str]] = {}
        for item in plain:
            if item.file.path not in results:
                names.setdefault(slugify(item.stem), (edits.kind_for(item.folder), item.id))
        for f, doc in graph_files:
            if f.path not in results:
                for name in (doc.id, doc.title, *doc.aliases):
                    names.setdefault(slugify(name), (doc.kind, doc.id))
        for record in self.store.documents(brain.id, statuses=("draft", "active", "archived")):
            for name in (record.id, record.title, *record.aliases):
                names.setdefault(slugify(name), (record.kind, record.id))

        def resolve(target: str) -> tuple[str, str] | None:
            name = target.strip().rsplit("/", 1)[-1].removesuffix(".md")
            return names.get(slugify(name)) if name else None

        return resolve

    def _existing(self, brain: Brain, doc_id: str) -> GraphDocument | None:
        try:
            return self.store.get(brain.id, doc_id)
        except NotFound:
            return None

    def _import_graph_file(
        self, brain: Brain, f: MarkdownFile, doc: BrainDoc, actor: str
    ) -> FileResult:
        text = f.text or ""
        problems = _problems(doc)
        if problems:
            return FileResult(f.path, doc.id, "refused", problems=problems)
        notes = []
        if f.normalized:
            notes.append("line endings normalized")
        if f.path != doc.path:
            notes.append(f"stored as {doc.path}")
        current = self._existing(brain, doc.id)
        if current is not None and current.content == text:
            return FileResult(f.path, doc.id, "unchanged", f.normalized, message="; ".join(notes))
        expected = current.content_hash if current else None
        failure = self._commit(
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
        item: _Plain,
        resolve: Callable[[str], tuple[str, str] | None],
        actor: str,
    ) -> FileResult:
        doc, notes = _plain_doc(item, resolve)
        problems = _problems(doc)
        if problems:
            return FileResult(item.file.path, doc.id, "refused", True, problems=problems)
        current = self._existing(brain, doc.id)
        if current is not None:
            existing = parse(current.content)
            if existing.extra.get(IMPORTED_FROM) != item.file.path:
                return FileResult(
                    item.file.path, doc.id, "refused", True,
                    problems=(
                        f"id: the brain already has a document {doc.id!r} that did not come "
                        f"from this file; rename the file or move that document "
                        f"(`loci brain move {doc.id} --id …`)",
                    ),
                )  # fmt: skip
            if _same(existing, doc):
                return FileResult(item.file.path, doc.id, "unchanged", True, message=notes)
            doc = doc.with_changes(created=existing.created)
        expected = current.content_hash if current else None
        failure = self._commit(
            brain,
            lambda: self.graph.writer.put(doc, expected_hash=expected, action="import"),
            actor,
        )
        if failure:
            return FileResult(item.file.path, doc.id, "refused", True, problems=(failure.message,))
        action = "updated" if current else "created"
        return FileResult(item.file.path, doc.id, action, True, message=notes)

    def _commit(self, brain: Brain, change: Callable[[], Change], actor: str) -> LociError | None:
        """Make and commit one change; why it was refused, or None."""
        try:
            self.graph.writer.commit(brain.id, [change()], actor)
        except LociError as error:
            return error
        return None

    # export -------------------------------------------------------------------------------
    def export(self, brain: Brain, root: Path) -> TransferReport:
        """Every document (merged and archived too) at `folder/id.md`, exactly as stored."""
        root.mkdir(parents=True, exist_ok=True)
        files = []
        for record in self.store.documents(brain.id):
            rel = f"{record.folder}/{record.id}.md"
            target = _safe_path(root, rel)
            data = record.content.encode("utf-8")
            if target.is_file() and target.read_bytes() == data:
                files.append(FileResult(rel, record.id, "unchanged"))
                continue
            _write_file(target, data)
            files.append(FileResult(rel, record.id, "written"))
        return _report("export", brain, files)

    # materialize and sync -----------------------------------------------------------------
    def materialize(self, brain: Brain, root: Path, *, force: bool = False) -> TransferReport:
        """Write the brain to `root` with a manifest of each document's hash. `root` must be
        empty or an earlier materialization of this brain with nothing left to sync (`force`
        discards what is left)."""
        manifest_path = root / MANIFEST
        if root.is_dir() and any(root.iterdir()):
            if not manifest_path.is_file():
                raise InvalidInput(
                    f"{str(root)!r} is not empty and holds no materialized brain; "
                    "choose an empty or new directory"
                )
            old = _read_manifest(root)
            if old.brain != brain.name:
                raise InvalidInput(
                    f"{str(root)!r} holds brain {old.brain!r}, not {brain.name!r}; "
                    "choose another directory"
                )
            pending = self._unsynced(root, old)
            if pending and not force:
                shown = ", ".join(pending[:5]) + (" …" if len(pending) > 5 else "")
                raise Conflict(
                    f"{len(pending)} file(s) changed since materialize and not synced back "
                    f"({shown}); run `loci brain sync` first, or --force to discard them"
                )
            for entry in old.documents.values():
                _safe_path(root, entry["path"]).unlink(missing_ok=True)
        root.mkdir(parents=True, exist_ok=True)
        manifest = _Manifest(brain.name, {})
        files = []
        for record in self.store.documents(brain.id):
            rel = f"{record.folder}/{record.id}.md"
            _write_file(_safe_path(root, rel), record.content.encode("utf-8"))
            manifest.documents[record.id] = {"path": rel, "hash": record.content_hash}
            files.append(FileResult(rel, record.id, "written"))
        _write_manifest(root, manifest)
        _remove_empty_folders(root)
        return _report("materialize", brain, files)

    def _unsynced(self, root: Path, manifest: _Manifest) -> list[str]:
        recorded = {e["path"]: e["hash"] for e in manifest.documents.values()}
        pending = []
        seen = set()
        for f in scan_markdown(root):
            seen.add(f.path)
            text_hash = sha256_hex(f.text.encode("utf-8")) if f.text is not None else None
            if recorded.get(f.path) != text_hash:
                pending.append(f.path)
        pending += [p for p in recorded if p not in seen]
        return pending

    def sync(self, brain: Brain, root: Path, *, actor: str) -> TransferReport:
        """Bring the directory's edits back. Each file is written against the hash it had
        when materialized; a document that changed in the brain since is a conflict."""
        manifest = _read_manifest(root)
        if manifest.brain != brain.name:
            raise InvalidInput(
                f"{str(root)!r} was materialized from brain {manifest.brain!r}, "
                f"not {brain.name!r}; pass --brain {manifest.brain}"
            )
        by_path = manifest.by_path
        results: list[FileResult] = []
        claims: dict[str, list[tuple[MarkdownFile, BrainDoc]]] = {}
        present: set[str] = set()  # ids whose file is there, even if it cannot be read now
        for f in scan_markdown(root):
            if f.path in by_path:
                present.add(by_path[f.path])
            if f.text is None:
                results.append(FileResult(f.path, None, "refused", problems=(f.error or "",)))
                continue
            if not _is_graph_document(f.text):
                reason = (
                    "frontmatter: no id and kind, so not a brain document; plain Markdown "
                    "comes in with `loci brain import`"
                )
                results.append(FileResult(f.path, None, "refused", problems=(reason,)))
                continue
            try:
                doc = parse(f.text)
            except InvalidInput as error:
                results.append(FileResult(f.path, None, "refused", problems=(error.message,)))
                continue
            claims.setdefault(doc.id, []).append((f, doc))
        for doc_id, claimed in claims.items():
            present.add(doc_id)
            if len(claimed) > 1:
                paths = [f.path for f, _ in claimed]
                for f, _ in claimed:
                    others = ", ".join(p for p in paths if p != f.path)
                    results.append(_duplicate(f.path, doc_id, others))
                continue
            f, doc = claimed[0]
            results.append(self._sync_file(brain, manifest, f, doc, actor))
        for doc_id, entry in list(manifest.documents.items()):
            if doc_id not in present:
                results.append(self._sync_delete(brain, manifest, doc_id, entry, actor))
        _write_manifest(root, manifest)
        return _report("sync", brain, results)

    def _sync_file(
        self, brain: Brain, manifest: _Manifest, f: MarkdownFile, doc: BrainDoc, actor: str
    ) -> FileResult:
        assert f.text is not None
        text_hash = sha256_hex(f.text.encode("utf-8"))
        entry = manifest.documents.get(doc.id)
        if entry is not None and entry["hash"] == text_hash:
            entry["path"] = f.path
            return FileResult(f.path, doc.id, "unchanged")
        problems = _problems(doc)
        if problems:
            return FileResult(f.path, doc.id, "refused", problems=problems)
        current = self._existing(brain, doc.id)
        if current is not None and current.content_hash == text_hash:
            manifest.documents[doc.id] = {"path": f.path, "hash": text_hash}
            return FileResult(f.path, doc.id, "unchanged", message="the brain already has it")
        if entry is None and current is not None:
            return FileResult(
                f.path, doc.id, "conflict",
                message=f"a document {doc.id!r} was created in the brain after materialize; "
                "nothing was written — pick another id, or materialize again and redo the edit",
            )  # fmt: skip
        if entry is not None and (current is None or current.content_hash != entry["hash"]):
            return FileResult(f.path, doc.id, "conflict", message=_changed_in_brain(doc.id))
        expected = entry["hash"] if entry else None
        failure = self._commit(
            brain,
            lambda: self.graph.writer.put_text(f.text or "", expected_hash=expected, action="sync"),
            actor,
        )
        if failure:
            # The brain moved between the read above and the write: still a conflict.
            action = "conflict" if isinstance(failure, Conflict | NotFound) else "refused"
            return FileResult(f.path, doc.id, action, problems=(failure.message,))
        manifest.documents[doc.id] = {"path": f.path, "hash": text_hash}
        return FileResult(f.path, doc.id, "updated" if entry else "created")

    def _sync_delete(
        self, brain: Brain, manifest: _Manifest, doc_id: str, entry: dict[str, str], actor: str
    ) -> FileResult:
        current = self._existing(brain, doc_id)
        if current is None:
            del manifest.documents[doc_id]
            return FileResult(entry["path"], doc_id, "deleted", message="already gone")
        if current.content_hash != entry["hash"]:
            return FileResult(entry["path"], doc_id, "conflict", message=_changed_in_brain(doc_id))
        failure = self._commit(
            brain, lambda: GraphDelete(doc_id, entry["hash"], action="sync-delete"), actor
        )
        if failure:
            return FileResult(entry["path"], doc_id, "conflict", problems=(failure.message,))
        del manifest.documents[doc_id]
        return FileResult(entry["path"], doc_id, "deleted", message="its last version is kept")


def _changed_in_brain(doc_id: str) -> str:
    return (
        f"{doc_id} changed in the brain since it was materialized; nothing was written either "
        f"way — see `loci brain history {doc_id}`, then materialize again (--force) and redo "
        "the edit"
    )


def _duplicate(path: str, doc_id: str, other: str) -> FileResult:
    where = f" (also in {other})" if other else ""
    return FileResult(
        path, doc_id, "refused",
        problems=(f"id: {doc_id!r} is claimed by more than one file{where}; give each its own id",),
    )  # fmt: skip


def _split_plain(f: MarkdownFile) -> _Plain:
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
    return _Plain(f, name[: -len(".md")], folder or DEFAULT_FOLDERS["note"], front, body)


def _plain_id(item: _Plain, claimed: dict[str, str]) -> str:
    """The file name's slug; if another file has it, prefixed with the folder's."""
    evidence = edits.kind_for(item.folder) == "evidence"
    for candidate in (item.stem, f"{item.folder.replace('/', '-')}-{item.stem}"):
        doc_id = slugify(candidate)
        if evidence and not doc_id.startswith("ev-"):
            doc_id = slugify("ev-" + doc_id)
        if doc_id not in claimed:
            return doc_id
    return ""


def _plain_doc(
    item: _Plain, resolve: Callable[[str], tuple[str, str] | None]
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


def _same(stored: BrainDoc, new: BrainDoc) -> bool:
    return stored.with_changes(created="", updated="") == new.with_changes(created="", updated="")


def _read_manifest(root: Path) -> _Manifest:
    path = root / MANIFEST
    if not path.is_file():
        raise InvalidInput(
            f"{str(root)!r} was not materialized (no {MANIFEST}); materialize a brain there "
            "first, or bring plain files in with `loci brain import`"
        )
    try:
        data = json.loads(path.read_text("utf-8"))
        documents = {
            str(k): {"path": str(v["path"]), "hash": str(v["hash"])}
            for k, v in data["documents"].items()
        }
        return _Manifest(str(data["brain"]), documents)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise InvalidInput(f"{MANIFEST} is damaged; materialize again") from None


def _write_manifest(root: Path, manifest: _Manifest) -> None:
    data = {
        "format": MANIFEST_FORMAT,
        "brain": manifest.brain,
        "documents": dict(sorted(manifest.documents.items())),
    }
    _write_file(root / MANIFEST, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


def _remove_empty_folders(root: Path) -> None:
    for folder, _, _ in sorted(os.walk(root), key=lambda w: -len(w[0])):
        path = Path(folder)
        if path != root and not any(path.iterdir()):
            path.rmdir()
