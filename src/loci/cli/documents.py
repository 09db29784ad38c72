"""`loci list`, `show`, `rm`, `reprocess`, `reindex`: what a brain holds, and keeping it right."""

from __future__ import annotations

from typing import Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import BrainOption, JsonOption, NoWaitOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, gone_mark, human_size, out
from loci.models import Document

StatusFilter = Literal["processing", "ready", "failed"]
KindFilter = Literal["file", "web", "note", "page", "evidence", "item"]


def _documents_table(docs: list[Document]) -> Table:
    table = Table(box=None, header_style="bold")
    for column in ("id", "name", "kind", "status", "chunks", "size", "added"):
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
            d.kind,
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
        kind: Annotated[KindFilter | None, typer.Option("--kind", help="Only this kind.")] = None,
        tag: Annotated[
            str | None, typer.Option("--tag", "-t", help="Only documents with this tag.")
        ] = None,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """List the documents of a brain with status, chunk count and size."""
        loci = service()
        target = existing_brain(brain)
        docs = loci.library.documents(target, status=status, kind=kind, tag=tag)
        if json_:
            from loci.api.schemas.documents import DocumentOut

            emit_json([DocumentOut.of(d, target) for d in docs])
        elif not docs:
            out.print("no documents yet — add some with `loci add PATH`")
        else:
            out.print(_documents_table(docs))

    app.command("list")(exits_cleanly(list_documents))
    app.command("ls", hidden=True)(exits_cleanly(list_documents))

    @app.command("show")
    @exits_cleanly
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
            from loci.api.schemas.documents import ChunkOut, DocumentOut

            chunks_out = None if parts is None else [ChunkOut.of(c) for c in parts]
            emit_json({"document": DocumentOut.of(doc, target), "text": body, "chunks": chunks_out})
            return
        out.print(f"[bold]{escape(doc.title or doc.name)}[/bold]  (#{doc.id})")
        for label, value in (
            ("name", doc.name),
            ("kind", doc.kind),
            ("status", doc.status),
            ("reason", doc.status_reason),
            ("chunks", doc.chunk_count),
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

    @app.command("rm")
    @exits_cleanly
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

    @app.command("reprocess")
    @exits_cleanly
    def reprocess(
        document_ids: Annotated[
            list[int], typer.Argument(help="Document ids to re-chunk and re-embed.")
        ],
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Re-parse, re-chunk and re-embed documents from their stored originals."""
        loci = service()
        target = existing_brain(brain)
        docs = [loci.library.reprocess(target, i) for i in document_ids]
        if not no_wait:
            docs = loci.library.wait_for(target, [d.id for d in docs])
        if json_:
            from loci.api.schemas.documents import DocumentOut

            emit_json([DocumentOut.of(d, target) for d in docs])
        else:
            out.print(_documents_table(docs))

    @app.command("reindex")
    @exits_cleanly
    def reindex(
        embeddings: Annotated[
            bool,
            typer.Option(
                "--embeddings", help="Re-embed under the configured embedder (model change)."
            ),
        ] = False,
        language: Annotated[
            str | None,
            typer.Option(
                "--language",
                help="Only switch the language text search stems words in and re-count the "
                "text index (PostgreSQL: e.g. german; SQLite: english only).",
            ),
        ] = None,
        no_wait: NoWaitOption = False,
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
        docs = loci.library.reindex(target, embeddings=embeddings)
        if not no_wait and docs:
            docs = loci.library.wait_for(target, [d.id for d in docs])
        if json_:
            from loci.api.schemas.documents import DocumentOut

            emit_json({"documents": [DocumentOut.of(d, target) for d in docs]})
        else:
            ready = sum(d.status == "ready" for d in docs)
            out.print(
                f"reindexed {ready} of {len(docs)} documents in brain {escape(target.name)!s}"
            )
