"""Markdown to HTML that is safe to put in a page: rendered without raw HTML, then sanitized.

Notes and brain pages are written by people and agents and may quote anything; the HTML that
reaches a browser keeps formatting and links and loses scripts, event handlers and styles.

A brain page's compiled truth also has typed links (`loci.graph.links`): `[[page:id|Label]]` and
`[[evidence:ev-id|Label]]` become `<a class="graph-link graph-page|graph-evidence"
href="#brain/id" data-graph-id="id">`, `[[source:provider:id|Label]]` a
`<span class="graph-source" title="provider:id">`. They are made by a Markdown rule, never
from the text's own HTML (which is escaped), and the sanitizer still passes only those classes.
"""

from __future__ import annotations

import functools

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from loci.graph.links import TYPED_LINK, Link, link_problem

ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code", "pre",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
GRAPH_CLASSES = {
    "a": {"graph-link", "graph-page", "graph-evidence"},
    "span": {"graph-source"},
}


def _new_markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


@functools.cache
def _markdown() -> MarkdownIt:
    return _new_markdown()


@functools.cache
def _graph_markdown() -> MarkdownIt:
    md = _new_markdown()
    # Before `link`, which would otherwise read `[[…]]` as a bracketed label.
    md.inline.ruler.before("link", "typed_link", _typed_link)
    md.add_render_rule("typed_link", _render_typed_link)
    return md


def markdown_to_safe_html(text: str) -> str:
    return _clean(_markdown().render(text), graph=False)


def graph_markdown_to_safe_html(text: str) -> str:
    """A brain page's Markdown, its well-formed typed links decorated (see the module's
    docstring); a malformed one stays as the text it is."""
    return _clean(_graph_markdown().render(text), graph=True)


def _clean(html: str, *, graph: bool) -> str:
    attributes: dict[str, set[str]] = {"a": {"href", "title"}}
    if graph:
        attributes = {"a": {"href", "title", "data-graph-id"}, "span": {"title"}}
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS | ({"span"} if graph else set()),
        attributes=attributes,
        allowed_classes=GRAPH_CLASSES if graph else None,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def _typed_link(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    match = TYPED_LINK.match(state.src, state.pos, state.posMax)
    if match is None:
        return False
    kind, target, label = match.group(1), match.group(2).strip(), match.group(3)
    if link_problem(Link(kind, target, label, match.start())) is not None:  # type: ignore[arg-type]
        return False
    if not silent:
        token = state.push("typed_link", "", 0)
        token.meta = {"kind": kind, "target": target, "label": (label or "").strip() or target}
    state.pos = match.end()
    return True


def _render_typed_link(
    _renderer: RendererHTML, tokens: list[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    meta = tokens[idx].meta
    target, label = escapeHtml(meta["target"]), escapeHtml(meta["label"])
    if meta["kind"] == "source":
        return f'<span class="graph-source" title="{target}">{label}</span>'
    return (
        f'<a class="graph-link graph-{meta["kind"]}" href="#brain/{target}" '
        f'data-graph-id="{target}">{label}</a>'
    )
