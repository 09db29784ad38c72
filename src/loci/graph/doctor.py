"""`doctor`: the health of a brain's graph, each finding with what to fix.

It reads a whole brain (or a directory of its files, such as a materialized one) and reports

    duplicate-id        two files claim one id                                  error
    parse-error         a file that cannot be read as a brain document          error
    invalid             a document that breaks a validation rule                error
    broken-relation     a relation whose target does not exist                  error
    broken-link         a page link to a page that does not exist               error
    broken-citation     an evidence citation of a record that does not exist    error
    missing-source      a file:N / web:N / note:N pointer (a source, a timeline  error
                        entry's source, a saved answer's citation) to a document
                        the brain no longer has
    gone-source         such a pointer to a document kept after its file was     warning
                        deleted from a followed folder (`--keep-deleted`)
    alias-collision     an alias two documents use, or another's id or title    error
    index               a document search cannot find (its indexing failed)     error
    orphan              a page with no edges in or out                          warning
    weak-provenance     an active page none of whose cited evidence exists      warning
    nonstandard-source  a source ref outside the provider:id grammar, or a URL  warning

and, as basic-memory's doctor does, proves the index works end to end: it creates a scratch brain,
writes a page, waits for it to be indexed, finds it by search, and deletes the scratch brain.
`health` is the read-only part, bounded: what the MCP `brain_doctor` tool and the HTTP route give.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loci.errors import InvalidInput, LociError, NotFound
from loci.graph.document import BrainDoc, parse
from loci.graph.links import derive_edges, is_source_ref, links, source_refs
from loci.graph.markdown_folder import scan_markdown
from loci.graph.reads import CORE_PROVIDERS
from loci.graph.records import GraphDocument
from loci.graph.service import BrainGraph
from loci.graph.validate import validate
from loci.models import Brain, Document

Severity = Literal["error", "warning"]
SEVERITY: dict[str, Severity] = {
    "duplicate-id": "error",
    "parse-error": "error",
    "invalid": "error",
    "broken-relation": "error",
    "broken-link": "error",
    "broken-citation": "error",
    "missing-source": "error",
    "alias-collision": "error",
    "index": "error",
    "roundtrip": "error",
    "orphan": "warning",
    "weak-provenance": "warning",
    "nonstandard-source": "warning",
    "gone-source": "warning",
}
URL_PROVIDERS = ("http", "https")
Settle = Callable[[Brain], None]  # index what writes to the brain queued


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: Severity
    document: str  # a document id, or a file path for a directory
    message: str  # what is wrong and what to do about it


@dataclass(frozen=True)
class RoundTrip:
    ok: bool
    steps: tuple[tuple[str, float], ...]  # (step, milliseconds)
    message: str


@dataclass(frozen=True)
class Checkup:
    checked: str  # "brain NAME" or "directory"
    documents: int
    findings: tuple[Finding, ...]
    roundtrip: RoundTrip | None
    errors: int
    warnings: int

    @property
    def ok(self) -> bool:
        return self.errors == 0


def _finding(kind: str, document: str, message: str) -> Finding:
    return Finding(kind, SEVERITY[kind], document, message)


def check_documents(items: Sequence[tuple[str, str]]) -> list[Finding]:
    """Findings for documents given as (where, text) — `where` names each in the report (an id
    for stored documents, a path for files)."""
    findings: list[Finding] = []
    parsed: list[tuple[str, BrainDoc]] = []
    claimed: dict[str, list[str]] = {}
    for where, text in items:
        try:
            doc = parse(text, path=where if where.endswith(".md") else None)
        except InvalidInput as error:
            findings.append(_finding("parse-error", where, f"{error.message}; fix or remove it"))
            continue
        parsed.append((where, doc))
        claimed.setdefault(doc.id, []).append(where)
    for doc_id, places in claimed.items():
        if len(places) > 1:
            for where in places:
                others = ", ".join(p for p in places if p != where)
                findings.append(
                    _finding(
                        "duplicate-id",
                        where,
                        f"id {doc_id!r} is also claimed by {others}; give each its own id",
                    )
                )
    docs = {doc.id: doc for _, doc in parsed}
    for where, doc in parsed:
        findings += _check_one(where, doc, docs)
    findings += _alias_collisions(parsed)
    findings += _orphans(parsed)
    return findings


def _texts(doc: BrainDoc) -> list[str]:
    return [doc.truth, *(e.text for e in doc.timeline)]


def _check_one(where: str, doc: BrainDoc, docs: dict[str, BrainDoc]) -> list[Finding]:
    found: list[Finding] = []
    weak = _weak_provenance(doc, docs)
    for problem in validate(doc):
        # Source refs and uncited active pages have findings of their own kinds below.
        if problem.field == "sources" or "provider:id" in problem.message:
            continue
        if problem.field == "status" and weak:
            continue
        found.append(_finding("invalid", where, str(problem)))
    for relation in doc.relations:
        if relation.target and relation.target not in docs:
            found.append(
                _finding(
                    "broken-relation",
                    where,
                    f"relation {relation.type} → {relation.target!r}: no such document; create "
                    f"it or fix the target (`loci brain set {doc.id} relations=…`)",
                )
            )
    seen: set[tuple[str, str]] = set()
    for text in _texts(doc):
        for link in links(text):
            if link.kind == "source" or (link.kind, link.target) in seen:
                continue
            seen.add((link.kind, link.target))
            target = docs.get(link.target)
            if link.kind == "page" and target is None:
                found.append(
                    _finding(
                        "broken-link",
                        where,
                        f"[[page:{link.target}]] names no page; create it or fix the link "
                        f"(`loci brain rewrite {doc.id}`)",
                    )
                )
            elif link.kind == "page" and target is not None and target.kind == "evidence":
                found.append(
                    _finding(
                        "broken-link",
                        where,
                        f"[[page:{link.target}]] is an evidence record; cite it as "
                        f"[[evidence:{link.target}]]",
                    )
                )
            elif link.kind == "evidence" and (target is None or target.kind != "evidence"):
                found.append(
                    _finding(
                        "broken-citation",
                        where,
                        f"[[evidence:{link.target}]] cites no evidence record; snapshot it with "
                        f"`loci brain append-evidence {doc.id}` or fix the citation",
                    )
                )
    if weak:
        found.append(
            _finding(
                "weak-provenance",
                where,
                "an active page, but none of the evidence it cites exists; cite a record with "
                f"`loci brain append-evidence {doc.id}`, or `set {doc.id} status=draft`",
            )
        )
    refs = [
        *doc.sources,
        *(e.source for e in doc.timeline if e.source is not None),
        *(link.target for text in _texts(doc) for link in links(text) if link.kind == "source"),
    ]
    for ref in dict.fromkeys(refs):
        reason = _nonstandard(ref)
        if reason:
            found.append(_finding("nonstandard-source", where, f"source {ref!r} {reason}"))
    return found


def _weak_provenance(doc: BrainDoc, docs: dict[str, BrainDoc]) -> bool:
    if doc.kind != "page" or doc.status != "active":
        return False
    cited = [link.target for link in links(doc.truth) if link.kind == "evidence"]
    return not any(t in docs and docs[t].kind == "evidence" for t in cited)


def _nonstandard(ref: str) -> str | None:
    if not is_source_ref(ref):
        return (
            "is not provider:id (a lowercase provider slug, a colon, an id without spaces, "
            "at most 256 characters); rewrite it, e.g. file:12 or slack:C01/123"
        )
    if ref.split(":", 1)[0] in URL_PROVIDERS:
        return (
            "is a URL, not a provider:id pointer; add the page to the brain "
            "(`loci add URL`) and cite it as web:ID, or name the system it lives in"
        )
    return None


def _alias_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _alias_collisions(parsed: Iterable[tuple[str, BrainDoc]]) -> list[Finding]:
    """Aliases two live documents share, or that are another document's id or title.
    Merged tombstones are left out: a merge gives the survivor the tombstone's title."""
    live = [(where, doc) for where, doc in parsed if doc.status != "merged"]
    names: dict[str, list[tuple[str, str]]] = {}  # key → [(document id, how it is named)]
    for _, doc in live:
        names.setdefault(_alias_key(doc.id), []).append((doc.id, "id"))
        if doc.title.strip():
            names.setdefault(_alias_key(doc.title), []).append((doc.id, "title"))
        for alias in {_alias_key(a) for a in doc.aliases}:
            names.setdefault(alias, []).append((doc.id, "alias"))
    found = []
    for where, doc in live:
        for alias in dict.fromkeys(doc.aliases):
            others = [(o, how) for o, how in names.get(_alias_key(alias), []) if o != doc.id]
            described = [
                f"an alias of {other}" if how == "alias" else f"the {how} of {other}"
                for other, how in others
            ]
            if described:
                found.append(
                    _finding(
                        "alias-collision",
                        where,
                        f"alias {alias!r} is also {', '.join(described)}; lookups by it are "
                        f"ambiguous — remove it from one (`loci brain set {doc.id} aliases=…`)",
                    )
                )
    return found


def _orphans(parsed: Sequence[tuple[str, BrainDoc]]) -> list[Finding]:
    touched: set[str] = set()
    for _, doc in parsed:
        relations = [(r.type, r.target) for r in doc.relations]
        for edge in derive_edges(doc.id, _texts(doc), relations):
            touched.update((edge.source, edge.target))
    return [
        _finding(
            "orphan",
            where,
            "a page nothing links to and that links nowhere; link it "
            f"(`loci brain link {doc.id} RELATION TARGET`) or cite it from a related page",
        )
        for where, doc in parsed
        if doc.kind == "page" and doc.status != "merged" and doc.id not in touched
    ]


def _checkup(
    checked: str, documents: int, findings: list[Finding], roundtrip: RoundTrip | None
) -> Checkup:
    if roundtrip is not None and not roundtrip.ok:
        findings = [*findings, _finding("roundtrip", "(scratch brain)", roundtrip.message)]
    errors = sum(1 for f in findings if f.severity == "error")
    return Checkup(checked, documents, tuple(findings), roundtrip, errors, len(findings) - errors)


def _gone_source(where: str, ref: str, document: Document) -> Finding:
    when = (document.gone_at or "")[:10]
    return _finding(
        "gone-source",
        where,
        f"source {ref!r} points at document {document.id} ({document.name}), whose file "
        f"{document.source_path} was deleted from its folder ({when}); the brain keeps the "
        "document as it was. Point at the file's new document if it moved elsewhere, or keep "
        "the pointer knowing the file is gone",
    )


class Doctor:
    def __init__(self, graph: BrainGraph, settle: Settle) -> None:
        self.graph = graph
        self.settle = settle

    def check_brain(self, brain: Brain, *, roundtrip: bool = True) -> Checkup:
        records = self.graph.graph.documents(brain.id)
        findings = check_documents([(r.id, r.content) for r in records])
        for record in records:
            problem = self._index_problem(brain, record.document_id)
            if problem:
                findings.append(_finding("index", record.id, problem))
        findings += self._missing_sources(brain, records)
        trip = self.roundtrip() if roundtrip else None
        return _checkup(f"brain {brain.name}", len(records), findings, trip)

    def check_directory(self, root: Path, *, roundtrip: bool = True) -> Checkup:
        files = scan_markdown(root.resolve())  # the folder named, as the person means it
        findings = [_finding("parse-error", f.path, f"{f.error}") for f in files if f.text is None]
        findings += check_documents([(f.path, f.text) for f in files if f.text is not None])
        trip = self.roundtrip() if roundtrip else None
        return _checkup("directory", len(files), findings, trip)

    def _missing_sources(self, brain: Brain, records: Sequence[GraphDocument]) -> list[Finding]:
        """Pointers at the brain's own documents (`file:27`) that name none: the document was
        deleted, and since ids are never handed out again the pointer leads nowhere. And those
        at a document whose file was deleted from its folder, kept as gone: the pointer still
        leads somewhere, but not to a file any more."""
        existing = set(self.graph.store.document_ids(brain.id))
        gone = {d.id: d for d in self.graph.store.gone_documents(brain.id)}
        found = []
        for record in records:
            try:
                doc = parse(record.content)
            except InvalidInput:
                continue  # a parse-error finding already
            refs = [
                *doc.sources,
                *(e.source for e in doc.timeline if e.source is not None),
                *source_refs(_texts(doc)),
            ]
            for ref in dict.fromkeys(refs):
                provider, _, ident = ref.partition(":")
                if provider in CORE_PROVIDERS and ident.isdigit() and int(ident) in gone:
                    found.append(_gone_source(record.id, ref, gone[int(ident)]))
                if provider in CORE_PROVIDERS and ident.isdigit() and int(ident) not in existing:
                    found.append(
                        _finding(
                            "missing-source",
                            record.id,
                            f"source {ref!r} points at document {ident}, which this brain no "
                            "longer has (it was deleted); add the file again and point at its "
                            f"new id, or remove the pointer (`loci brain rewrite {record.id}`)",
                        )
                    )
        return found

    def _index_problem(self, brain: Brain, document_id: int | None) -> str | None:
        if document_id is None:
            return "not indexed; run `loci reindex`"
        try:
            indexed = self.graph.store.get_document(brain.id, document_id)
        except NotFound:
            return "its index entry is missing; run `loci reindex`"
        if indexed.status == "failed":
            return f"indexing failed ({indexed.status_reason}); run `loci reprocess {document_id}`"
        return None

    def roundtrip(self) -> RoundTrip:
        """Write a page into a scratch brain, index it, find it by search, delete the brain."""
        store = self.graph.store
        token = "doctor" + secrets.token_hex(4)
        steps: list[tuple[str, float]] = []
        started = time.perf_counter()

        def step(name: str) -> None:
            nonlocal started
            now = time.perf_counter()
            steps.append((name, round((now - started) * 1000, 1)))
            started = now

        scratch: Brain | None = None
        ok, message = False, ""
        try:
            scratch = store.create_brain(f"doctor-scratch-{token}", "restricted", None)
            step("create scratch brain")
            self.graph.create(
                scratch, actor="doctor", doc_type="concept", title=f"Doctor check {token}",
                text=f"The doctor wrote {token} to prove a write is indexed and found.",
            )  # fmt: skip
            step("write page")
            self.settle(scratch)
            step("index")
            hits = self.graph.query(scratch, token, limit=3)
            step("search")
            ok = bool(hits) and hits[0].document.id == f"doctor-check-{token}"
            message = (
                "wrote, indexed, found and deleted a scratch page"
                if ok
                else "a page written to a scratch brain was not found by search; check the "
                "worker and the embedder (`loci status`), then `loci reindex`"
            )
        except LociError as error:
            message = f"the round trip failed: {error.message}"
        finally:
            if scratch is not None:
                for content_hash in store.delete_brain(scratch.id):
                    self.graph.writer.blobs.delete(content_hash)
                step("delete scratch brain")
        return RoundTrip(ok, tuple(steps), message)


@dataclass(frozen=True)
class Health:
    """A brain's checkup cut to a size an agent or an HTTP client can take: every count, and
    the first `limit` findings (errors before warnings)."""

    brain: str
    documents: int
    ok: bool
    errors: int
    warnings: int
    by_kind: dict[str, int]  # finding kind → how many
    findings: tuple[Finding, ...]
    omitted: int  # findings beyond the limit


def health(graph: BrainGraph, brain: Brain, limit: int = 20) -> Health:
    """The read-only checks of `Doctor.check_brain` — without the round trip, which writes a
    scratch brain."""
    checkup = Doctor(graph, lambda _: None).check_brain(brain, roundtrip=False)
    ordered = sorted(checkup.findings, key=lambda f: f.severity != "error")
    by_kind: dict[str, int] = {}
    for finding in checkup.findings:
        by_kind[finding.kind] = by_kind.get(finding.kind, 0) + 1
    return Health(
        brain=brain.name,
        documents=checkup.documents,
        ok=checkup.ok,
        errors=checkup.errors,
        warnings=checkup.warnings,
        by_kind=dict(sorted(by_kind.items())),
        findings=tuple(ordered[:limit]),
        omitted=max(0, len(ordered) - limit),
    )
