"""A document's earlier contents: `Versions`, the service `Loci` holds as `loci.versions`.

When a file, note or web page is replaced in place (the same document id gets new bytes), the
store keeps what it had as a numbered version whose blob stays (`Store.replace_content`; the
newest `versions_keep` are kept). Here they are listed, read, compared as text and restored:
a restore is one more replacement, so the content it replaces becomes a version in its turn
and nothing is lost by restoring. The document of a followed folder's file has the restored
bytes written to the file too (`file_write_back`: atomically, and only if the file is still
the version replaced — else a conflict, and nothing is restored), so the folder and Loci agree.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loci.errors import Conflict, InvalidInput, LociError, NotFound
from loci.ingest.parsers import parse_as
from loci.ingest.plan import plan_file
from loci.models import Brain, Document, DocumentVersion, NewDocument
from loci.service.file_write_back import followed_by, replace_file
from loci.service.settings import ServiceSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore

# Formats whose extracted text is the file's own words, so a line diff of it says what changed.
TEXT_DIFF_PARSERS = frozenset({"text", "markdown", "code", "csv", "html"})
MAX_DIFF_CHARS = 2_000_000  # difflib is quadratic at worst: a diff larger than this is refused
RESTORABLE = ("file", "web", "note")  # kinds replaced in place; pages keep `brain history`


@dataclass(frozen=True)
class VersionList:
    document: Document
    current: int  # the number of the document's current content
    versions: list[DocumentVersion]  # earlier contents, newest first

    @property
    def current_since(self) -> str:
        """When the current content became the document's."""
        return self.versions[0].replaced_at if self.versions else self.document.created_at


@dataclass(frozen=True)
class VersionDiff:
    document: Document
    old: int
    new: int
    diff: str | None  # a unified diff of the extracted text; "" when the texts are the same
    reason: str | None  # why there is no diff (a format without text), when `diff` is None


@dataclass(frozen=True)
class Restored:
    document: Document
    number: int  # the version restored
    changed: bool  # False: it was the current content already
    # The file in a followed folder the restored bytes were written to as well; None for a
    # document of no followed folder's file (or one whose file was deleted: `gone_at`).
    written_to: str | None = None


class Versions:
    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        settings: ServiceSettings,
        index_job: str,
        forget_blobs: Callable[[Sequence[str]], None],
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self.index_job = index_job
        self.forget_blobs = forget_blobs

    def list(self, brain: Brain, document_id: int) -> VersionList:
        document = self.store.get_document(brain.id, document_id)
        versions = self.store.document_versions(brain.id, document_id)
        current = versions[0].number + 1 if versions else 1
        return VersionList(document, current, versions)

    def content(self, brain: Brain, document_id: int, number: int) -> tuple[DocumentVersion, bytes]:
        """Version `number` and its bytes; the current number gives the current content."""
        version = self._version(self.list(brain, document_id), number)
        return version, self.blobs.get(version.content_hash)

    def restore(self, brain: Brain, document_id: int, number: int) -> Restored:
        """Make version `number` the document's content again: the same id, re-indexed (the
        restored text is found, the replaced text no longer), the replaced content kept as
        the newest version."""
        listed = self.list(brain, document_id)
        document = listed.document
        if document.kind not in RESTORABLE:
            raise InvalidInput(
                f"document {document_id} is a {document.kind}; a page's earlier texts are in "
                "`loci brain history`"
            )
        version = self._version(listed, number)
        if version.content_hash == document.content_hash:
            return Restored(document, number, changed=False)
        other = self.store.find_by_hash(brain.id, version.content_hash)
        if other is not None:
            raise Conflict(
                f"version {number} has exactly the content of document {other.id}"
                f" ({other.name}); a brain keeps one document a content"
            )
        metadata, written_to = dict(document.metadata), None
        if document.gone_at is None and followed_by(self.store, brain, document) is not None:
            # A followed folder's file: it gets the restored bytes first, so the folder and Loci
            # agree (its next edit builds on the restore), or nothing happens (a conflict).
            written_to = str(document.source_path)
            stamped = replace_file(
                Path(written_to),
                document.content_hash,
                self.blobs.get(version.content_hash),
                f"version {listed.current}, the current one",
                self.settings.fence,
            )
            metadata["file"] = stamped.stamp()
        new = NewDocument(
            kind=document.kind,
            name=version.name,
            title=document.title,
            source_url=document.source_url,
            mime_type=version.mime_type,
            size_bytes=version.size_bytes,
            content_hash=version.content_hash,
            tags=document.tags,
            metadata=metadata,
            source_path=document.source_path,
        )
        try:
            restored, unused = self.store.replace_content(
                brain.id,
                document_id,
                document.content_hash,
                new,
                self.index_job,
                keep_versions=self.settings.versions_keep,
            )
        except Conflict:
            now = self.store.get_document(brain.id, document_id)
            if written_to is None or now.content_hash != version.content_hash:
                raise
            # A watcher saw the file written and took its new bytes first: the same restore.
            return Restored(now, number, changed=True, written_to=written_to)
        self.forget_blobs(unused)
        return Restored(restored, number, changed=True, written_to=written_to)

    def diff(self, brain: Brain, document_id: int, old: int, new: int | None = None) -> VersionDiff:
        """What changed from version `old` to version `new` (None: the current content), as a
        unified diff of their extracted text."""
        listed = self.list(brain, document_id)
        new = listed.current if new is None else new
        texts: list[str] = []
        labels: list[str] = []
        for number in (old, new):
            version = self._version(listed, number)
            text, reason = self._text(listed.document, version)
            if text is None:
                return VersionDiff(listed.document, old, new, None, reason)
            texts.append(text)
            labels.append(f"{version.name} (version {number})")
        lines = difflib.unified_diff(
            _lines(texts[0]), _lines(texts[1]), fromfile=labels[0], tofile=labels[1]
        )
        return VersionDiff(listed.document, old, new, "".join(lines), None)

    def _version(self, listed: VersionList, number: int) -> DocumentVersion:
        document = listed.document
        if number == listed.current:
            return DocumentVersion(
                document.id, number, document.name, document.mime_type, document.size_bytes,
                document.content_hash, listed.current_since, "",
            )  # fmt: skip
        for version in listed.versions:
            if version.number == number:
                return version
        kept = ", ".join(str(v.number) for v in listed.versions) or "none"
        raise NotFound(
            f"document {document.id} has no version {number} (earlier versions kept: {kept};"
            f" the current one is {listed.current})"
        )

    def _text(self, document: Document, version: DocumentVersion) -> tuple[str | None, str]:
        """The version's extracted text, or None and why it has none to compare."""
        data = self.blobs.get(version.content_hash)
        plan = plan_file(version.name, data, kind=document.kind, mime_type=version.mime_type)
        if plan.parser not in TEXT_DIFF_PARSERS:
            what = f"a {plan.parser.upper()} file" if plan.parser else "this file"
            return None, (f"{what} has no text diff; download the two versions to compare them")
        try:
            text = parse_as(plan.parser, data, version.name, self.settings.indexer.budgets).text
        except LociError as error:
            return None, f"version {version.number} cannot be read as text: {error.message}"
        if len(text) > MAX_DIFF_CHARS:
            return None, (
                f"version {version.number} has {len(text):,} characters of text, more than a"
                f" diff here takes ({MAX_DIFF_CHARS:,}); download the versions to compare them"
            )
        return text, ""


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines()]
