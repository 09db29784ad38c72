"""`loci search` (alias `find`): passages with citations to file, page, lines and heading."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

import typer
from rich.markup import escape

from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, gone_mark, out, render_snippet
from loci.models import Hit, SearchFilters
from loci.search.weak import WEAK_CLOSENESS, weak

Mode = Literal["hybrid", "text", "vector"]


class Kind(StrEnum):
    file = "file"
    web = "web"
    note = "note"
    page = "page"
    evidence = "evidence"


def location(hit: Hit, with_name: bool = True) -> str:
    c = hit.citation
    parts = [c.name] if with_name else []
    parts += c.location.where("p.", lines=True)
    if c.heading_path:
        parts.append(" › ".join(c.heading_path))
    if c.location.ocr_uncertain:
        parts.append("OCR uncertain")
    return " · ".join(parts)


def register(app: typer.Typer) -> None:
    app.command("search")(exits_cleanly(search))
    app.command("find", hidden=True)(exits_cleanly(search))
    app.command("related")(exits_cleanly(related))


def related(
    document_id: Annotated[int, typer.Argument(help="Document id (see `loci list`).")],
    limit: Annotated[int, typer.Option("--limit", "-n", help="1–20 documents.")] = 5,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Other documents about what this one is about, closest first."""
    loci = service()
    target = existing_brain(brain)
    found = loci.searching.related(target, document_id, limit)
    if json_:
        from loci.wire.documents import RelatedOut

        related_out = [RelatedOut.of(r, target) for r in found]
        emit_json({"document_id": document_id, "brain": target.name, "related": related_out})
        return
    if not found:
        out.print("nothing related yet (or the document is not indexed yet)")
    for number, r in enumerate(found, start=1):
        d = r.document
        out.print(
            f"[bold]{number}. {escape(d.title or d.name)}[/bold]  "
            f"[dim]#{d.id} · {d.kind} · similarity {r.score:.3f}[/dim]"
        )
        out.print("   " + escape(" ".join(r.passage.text.split())[:200]))


def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in your own words.")],
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=30, help="Hits to return (1–30).")
    ] = 10,
    mode: Annotated[Mode, typer.Option("--mode", help="hybrid, text (BM25) or vector.")] = "hybrid",
    name: Annotated[
        str | None, typer.Option("--file", help="Only this file name or title (globs ok).")
    ] = None,
    kind: Annotated[list[Kind], typer.Option("--kind", help="Only these kinds.")] = [],  # noqa: B006
    tag: Annotated[
        list[str], typer.Option("--tag", "-t", help="Only documents with all these tags.")
    ] = [],  # noqa: B006
    after: Annotated[
        str | None, typer.Option("--after", help="Added on or after this date (YYYY-MM-DD).")
    ] = None,
    before: Annotated[str | None, typer.Option("--before", help="Added before this date.")] = None,
    min_similarity: Annotated[
        float | None,
        typer.Option("--min-similarity", help="Drop vector matches below this cosine."),
    ] = None,
    include_archived: Annotated[
        bool,
        typer.Option(
            "--include-archived", help="Keep merged and archived brain pages in the results."
        ),
    ] = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Find passages with hybrid search (BM25 + vectors), each with its citation.

    Hybrid search also follows links between brain pages: a page linked from a good hit
    joins in."""
    from loci.search.engine import SearchRequest

    loci = service()
    target = existing_brain(brain)
    request = SearchRequest(
        query=query,
        mode=mode,
        limit=limit,
        filters=SearchFilters(
            name=name,
            kinds=tuple(k.value for k in kind),
            tags=tuple(tag),
            created_after=after,
            created_before=before,
        ),
        min_similarity=min_similarity,
        include_retired=include_archived,
    )
    hits = loci.searching.search(target, request)
    if json_:
        from loci.wire.hit import HitOut

        hits_out = [HitOut.found(h, target) for h in hits]
        emit_json(
            {
                "query": query, "mode": mode, "brain": target.name, "hits": hits_out,
                "weak": weak(hits), "weak_closeness": WEAK_CLOSENESS,
            }
        )  # fmt: skip
        return
    if not hits:
        out.print("no matches")
        return
    if weak(hits):
        out.print("[yellow]no close match[/yellow] — the nearest passages:")
    for number, hit in enumerate(hits, start=1):
        out.print(
            f"[bold]{number}. {escape(location(hit))}[/bold]  "
            f"[dim]#{hit.citation.document_id} · score {hit.score:.3f} · {hit.matched_by}"
            f"{' · reranked' if hit.reranked else ''}"
            f"{' · vectors pending' if hit.vectors_pending else ''}[/dim]"
            f"{gone_mark(hit.gone_at)}"
        )
        if hit.graph_path:
            out.print(f"   [dim]via {escape(' → '.join(hit.graph_path))}[/dim]")
        out.print(render_snippet(hit.snippet, hit.highlights))
        for more in hit.more:  # the same document's next passages, under it
            out.print(f"   [dim]also · {escape(location(more, with_name=False))}[/dim]")
            out.print(render_snippet(more.snippet, more.highlights, indent=5))
