"""`loci list`, `show`, `rm`, `reprocess`, `reindex`: what a brain holds, and keeping it right."""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar, get_args

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, gone_mark, human_size, out
from loci.cli.waiting import WaitOption, index_now
from loci.errors import InvalidInput
from loci.failure_advice import what_to_do
from loci.ingest.formats import FORMAT_LABELS, FORMATS, document_format
from loci.models import Document, DocumentKind

StatusFilter = Literal["processing", "ready", "failed"]
KINDS: tuple[DocumentKind, ...] = get_args(DocumentKind)
Choice = TypeVar("Choice", bound=str)


def _chosen(
    option: str, given: list[str] | None, choices: tuple[Choice, ...]
) -> tuple[Choice, ...]:
    """The values a repeated option was given, each one of `choices` (Typer checks a Literal
    once, not each value of a list)."""
    chosen = []
    for value in given or ():
        match = next((c for c in choices if c == value.strip().lower()), None)
        if match is None:
            raise InvalidInput(f"{option} {value!r} is none of: {', '.join(choices)}")
        chosen.append(match)
    return tuple(dict.fromkeys(chosen))


def _documents_table(docs: list[Document]) -> Table:
    table = Table(box=None, header_style="bold")
    for column in ("id", "name", "format", "status", "chunks", "size", "added"):
        table.add_column(
            column,
            justify="right" if column in ("id", "chunks", "size") else "left",
            no_wrap=column == "status",  # "embed 40/200 (found by words)" reads as one
        )
    for d in docs:
        status = {"ready": "[green]ready[/]", "failed": "[red]failed[/]"}.get(d.status, d.status)
        if d.status == "processing":
            status = _processing(d)
        table.add_row(
            str(d.id),
            escape(d.name) + gone_mark(d.gone_at),
            document_format(d),
            status,
            str(d.chunk_count),
            human_size(d.size_bytes),
            d.created_at[:16].replace("T", " "),
        )
    return table


def _processing(d: Document) -> str:
    """What a document being indexed is doing: "queued", "ocr 3/12", "embed 40/200 (found by
    words)"."""
    what = (
        "queued"
        if d.progress is None
        else f"{d.progress.stage} {d.progress.done}/{d.progress.total}"
    )
    return f"{what} (found by words)" if d.vectors_pending else what


def _reindexed(docs: list[Document]) -> str:
    """What a reindex did, as far as this command waited: ready, searchable by words, queued."""
    ready = sum(d.status == "ready" for d in docs)
    words = sum(d.status == "processing" and d.vectors_pending for d in docs)
    failed = sum(d.status == "failed" for d in docs)
    parts = [f"{ready} ready"]
    if words:
        parts.append(f"{words} searchable by words (vectors pending)")
    queued = len(docs) - ready - words - failed
    if queued:
        parts.append(f"{queued} queued")
    if failed:
        parts.append(f"{failed} failed")
    return f"reindexed {len(docs)} documents: " + ", ".join(parts)


def _narrowed_by(**filters: object) -> str:
    """The filters a person gave, as they typed them: "--kind note --format pdf"."""
    given = []
    for option, value in filters.items():
        for one in value if isinstance(value, list) else [value]:
            if one:
                given.append(f"--{option} {one}")
    return " ".join(given)


def _deleted(gone_at: str | None) -> str | None:
    if gone_at is None:
        return None
    when = gone_at[:16].replace("T", " ")
    return f"the file was deleted (found {when}); the document is kept, as its folder keeps them"


def register(app: typer.Typer) -> None:
    def list_documents(
        status: Annotated[
            StatusFilter | None, typer.Option("--status", help="Only this status.")
        ] = None,
        kind: Annotated[
            list[str] | None,
            typer.Option(
                "--kind",
                help="Only this kind (how it came in: "
                + ", ".join(KINDS)
                + "); repeat for several.",
            ),
        ] = None,
        format_: Annotated[
            list[str] | None,
            typer.Option(
                "--format",
                "-f",
                help="Only this format: "
                + ", ".join(f"{f} ({FORMAT_LABELS[f]})" for f in FORMATS)
                + "; repeat for several.",
            ),
        ] = None,
        tag: Annotated[
            str | None, typer.Option("--tag", "-t", help="Only documents with this tag.")
        ] = None,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """List the documents of a brain with status, chunk count and size, oldest first."""
        # Here, not at the top: `loci.service` is the whole core, which `--help` should not load.
        from loci.service.document_query import DocumentQuery

        loci = service()
        target = existing_brain(brain)
        query = DocumentQuery(
            statuses=(status,) if status else (),
            kinds=_chosen("--kind", kind, KINDS),
            formats=_chosen("--format", format_, FORMATS),
            tag=tag,
        )
        docs = loci.library.find(target, query).documents
        if json_:
            from loci.wire.documents import DocumentOut

            emit_json([DocumentOut.of(d, target) for d in docs])
        elif not docs and query.narrowed:
            given = _narrowed_by(
                status=status, kind=list(query.kinds), format=list(query.formats), tag=tag
            )
            out.print(f"no documents match {escape(given)}")
        elif not docs:
            out.print("no documents yet — add some with `loci add PATH`")
        else:
            out.print(_documents_table(docs))

    app.command("list")(exits_cleanly(list_documents))
    app.command("ls", hidden=True)(exits_cleanly(list_documents))
    app.command("show")(exits_cleanly(show))
    app.command("rm")(exits_cleanly(rm))
    app.command("reprocess")(exits_cleanly(reprocess))
    app.command("reindex")(exits_cleanly(reindex))


def show(
    document_id: Annotated[int, typer.Argument(help="Document id (see `loci list`).")],
    text: Annotated[bool, typer.Option("--text", help="Print the extracted text.")] = False,
    chunks: Annotated[
        bool, typer.Option("--chunks", help="Print the chunks search matches against.")
    ] = False,
    versions: Annotated[
        bool,
        typer.Option(
            "--versions", help="List its versions: dates, sizes, hashes (`loci versions`)."
        ),
    ] = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Show one document: metadata, status and, on request, its text, chunks or versions."""
    loci = service()
    target = existing_brain(brain)
    if versions:
        from loci.cli.versions import print_versions

        print_versions(target, document_id, json_)
        return
    doc = loci.library.document(target, document_id)
    body = loci.library.document_text(target, document_id) if text else None
    parts = loci.library.chunks(target, document_id) if chunks else None
    if json_:
        from loci.wire.documents import ChunkOut, DocumentOut

        chunks_out = None if parts is None else [ChunkOut.of(c) for c in parts]
        emit_json({"document": DocumentOut.of(doc, target), "text": body, "chunks": chunks_out})
        return
    out.print(f"[bold]{escape(doc.title or doc.name)}[/bold]  (#{doc.id})")
    for label, value in (
        ("name", doc.name),
        ("kind", doc.kind),
        ("status", doc.status),
        ("reason", doc.status_reason),
        ("to do", what_to_do(doc.failure_code, doc.id) if doc.status == "failed" else None),
        ("chunks", doc.chunk_count),
        ("language", doc.language),
        ("size", human_size(doc.size_bytes)),
        ("sha256", doc.content_hash),
        ("url", doc.source_url),
        ("file", doc.source_path),
        ("deleted", _deleted(doc.gone_at)),
        ("tags", ", ".join(doc.tags) or None),
        ("added", doc.created_at),
        ("updated", doc.updated_at),
    ):
        if value not in (None, ""):
            out.print(f"  {label:8} {escape(str(value))}")
    if body is not None:
        out.print()
        out.print(escape(body))
    for c in parts or []:
        at = c.location
        where = " · ".join(
            x
            for x in (
                f"p. {at.page}" if at.page else "",
                f"lines {at.line_start}–{at.line_end}" if at.line_start else "",
                " › ".join(c.heading_path),
            )
            if x
        )
        out.print(f"\n[bold]chunk {c.index}[/bold] {escape(where)} ({c.token_count} tokens)")
        out.print(escape(c.text))


def rm(
    document_ids: Annotated[list[int], typer.Argument(help="Document ids to delete.")],
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Delete documents with their chunks, and their blobs when nothing else uses them."""
    loci = service()
    target = existing_brain(brain)
    removed = [loci.library.remove(target, i) for i in document_ids]
    if json_:
        emit_json({"removed": [d.id for d in removed]})
    else:
        for d in removed:
            out.print(f"removed {escape(d.name)} (#{d.id})")


def reprocess(
    document_ids: Annotated[
        list[int], typer.Argument(help="Document ids to re-chunk and re-embed.")
    ],
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Re-parse, re-chunk and re-embed documents from their stored originals."""
    loci = service()
    target = existing_brain(brain)
    docs = [loci.library.reprocess(target, i) for i in document_ids]
    docs = index_now(target, [d.id for d in docs], wait) or docs
    if json_:
        from loci.wire.documents import DocumentOut

        emit_json([DocumentOut.of(d, target) for d in docs])
    else:
        out.print(_documents_table(docs))


def reindex(
    embeddings: Annotated[
        bool,
        typer.Option("--embeddings", help="Re-embed under the configured embedder (model change)."),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="With --embeddings: re-embed with this local model (`loci models list`).",
        ),
    ] = None,
    language: Annotated[
        str | None,
        typer.Option(
            "--language",
            help="Only switch how text search stems words and re-count the text index: "
            "auto (each passage in its detected language), a Snowball stemmer (german, "
            "russian, …) or simple.",
        ),
    ] = None,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Rebuild a brain's chunks, vectors and text index from the stored originals."""
    loci = service()
    target = existing_brain(brain)
    if language is not None:
        loci.set_language(target, language)
        if json_:
            emit_json({"brain": target.name, "language": loci.status(target).language})
        else:
            out.print(f"brain {escape(target.name)} now stems words as {escape(language)}")
        return
    if model is not None and not embeddings:
        raise typer.BadParameter("--model moves a brain's vectors: give --embeddings too")
    chosen = loci.embedders.catalog_model(model) if model is not None else None
    docs = loci.library.reindex(target, embeddings=embeddings, model=chosen)
    docs = index_now(target, [d.id for d in docs], wait) or docs
    if json_:
        from loci.wire.documents import DocumentOut

        emit_json({"documents": [DocumentOut.of(d, target) for d in docs]})
    else:
        out.print(f"{_reindexed(docs)} in brain {escape(target.name)!s}")
