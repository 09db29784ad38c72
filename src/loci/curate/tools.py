"""The brain graph's operations as OpenAI-style function tools, for a curation agent.

Each tool is one `BrainGraph` operation on one brain, written as one actor; there is no delete
and no way out of the brain. A call whose arguments are wrong (not JSON, a missing or unknown
field, a wrong type) or that the graph refuses (validation, a conflict, an unknown page) returns
`error: …` to the model, which may correct itself; the loop goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loci.errors import LociError
from loci.graph.results import Summary
from loci.graph.service import BrainGraph
from loci.models import Brain

MAX_RESULT_CHARS = 12_000
MAX_LIST = 200


@dataclass(frozen=True)
class Param:
    type: str  # a JSON schema type: string, integer, boolean, array (of strings)
    description: str
    required: bool = False


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: dict[str, Param]

    def schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for name, param in self.params.items():
            prop: dict[str, Any] = {"type": param.type, "description": param.description}
            if param.type == "array":
                prop["items"] = {"type": "string"}
            properties[name] = prop
        required = [name for name, param in self.params.items() if param.required]
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": False,
                },
            },
        }


REF = Param("string", "document id (or its exact title or an alias)", True)
TOOLS: tuple[Tool, ...] = (
    Tool("get", "Read one document: its Markdown, links and backlinks.", {"ref": REF}),
    Tool(
        "list",
        "List documents (id, type, status, folder, title), optionally in a folder or of a type.",
        {
            "folder": Param("string", "a folder, e.g. people (includes its subfolders)"),
            "type": Param("string", "person, company, project, meeting, concept, source, …"),
            "status": Param("string", "draft, active, archived or merged"),
        },
    ),
    Tool(
        "query",
        "Search the brain's pages and evidence by meaning and words, best first.",
        {
            "text": Param("string", "what to look for", True),
            "limit": Param("integer", "how many hits (1-30, default 10)"),
        },
    ),
    Tool(
        "timeline",
        "Dated timeline entries, newest first, of one document or the whole brain.",
        {
            "ref": Param("string", "a document (leave out for the whole brain)"),
            "since": Param("string", "ISO date, inclusive"),
            "until": Param("string", "ISO date, exclusive"),
            "limit": Param("integer", "how many entries (1-100, default 50)"),
        },
    ),
    Tool(
        "create",
        "Create a page (or evidence under evidence/). Query first: never duplicate a page.",
        {
            "type": Param("string", "person, company, project, meeting, concept, note, …", True),
            "title": Param("string", "the page's title", True),
            "text": Param("string", "the compiled truth, Markdown with typed links"),
            "folder": Param("string", "default: per type (people, projects, concepts, …)"),
            "id": Param("string", "a lowercase slug (default: from the title)"),
            "status": Param("string", "draft (default) or active (the truth must cite evidence)"),
        },
    ),
    Tool(
        "rewrite",
        "Replace a page's compiled truth (not its frontmatter or timeline).",
        {"ref": REF, "truth": Param("string", "the new compiled truth, Markdown", True)},
    ),
    Tool(
        "set",
        "Set frontmatter fields: title, type, status, folder, aliases, relations, sources.",
        {
            "ref": REF,
            "assignments": Param("array", "key=value pairs: status=active, type=concept", True),
        },
    ),
    Tool(
        "append_timeline",
        "Add a dated entry to a page's timeline.",
        {
            "ref": REF,
            "text": Param("string", "the entry, one line; may hold typed links", True),
            "at": Param("string", "ISO date (default today)"),
            "source": Param("string", "provider:id the entry comes from"),
        },
    ),
    Tool(
        "append_evidence",
        "Snapshot text into a new evidence record and cite it from the page's timeline. Use it "
        "for content the brain cannot fetch again (captures, transcripts, e-mails).",
        {
            "ref": REF,
            "text": Param("string", "the text to keep, verbatim", True),
            "title": Param("string", "the evidence record's title", True),
            "source": Param("string", "provider:id it came from"),
        },
    ),
    Tool(
        "alias",
        "Give a page another name it can be found by.",
        {"ref": REF, "alias": Param("string", "the other name", True)},
    ),
    Tool(
        "link",
        "Add a typed relation from one page to another (which must exist).",
        {
            "ref": REF,
            "relation": Param("string", "a relation type, e.g. works_at, attended, part_of", True),
            "target": Param("string", "the page it points to", True),
        },
    ),
    Tool(
        "merge",
        "Fold one document into another; the first stays as a tombstone pointing at the second.",
        {
            "source": Param("string", "the document that goes (e.g. the inbox draft)", True),
            "target": Param("string", "the document that stays", True),
        },
    ),
    Tool(
        "move",
        "Move a document to another folder and/or give it a new id (links follow).",
        {
            "ref": REF,
            "folder": Param("string", "the new folder"),
            "new_id": Param("string", "the new id"),
        },
    ),
)
TOOL_NAMES = tuple(t.name for t in TOOLS)

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
}


class ToolError(Exception):
    """Arguments a tool cannot run with; the message goes back to the model."""


def _brief(s: Summary) -> dict[str, Any]:
    found: dict[str, Any] = {"id": s.id, "type": s.type, "status": s.status,
                             "folder": s.folder, "title": s.title}  # fmt: skip
    if s.aliases:
        found["aliases"] = list(s.aliases)
    if s.merged_into:
        found["merged_into"] = s.merged_into
    return found


class BrainTools:
    """The tools, bound to one brain and one actor. `calls` records every call made."""

    def __init__(
        self, graph: BrainGraph, brain: Brain, actor: str, names: Sequence[str] = TOOL_NAMES
    ) -> None:
        self.graph = graph
        self.brain = brain
        self.actor = actor
        self.tools = {t.name: t for t in TOOLS if t.name in names}
        self.calls: list[tuple[str, str]] = []  # (tool, result)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools.values()]

    def call(self, name: str, arguments: str) -> str:
        """Run one call; the result (or `error: …`) as text for the model."""
        try:
            args = self._arguments(name, arguments)
            result = json.dumps(self._run(name, args), ensure_ascii=False, default=str)
        except ToolError as error:
            result = f"error: {error}"
        except LociError as error:
            result = f"error: {error.message}"
        if len(result) > MAX_RESULT_CHARS:
            result = result[:MAX_RESULT_CHARS] + " … (cut short)"
        self.calls.append((name, result))
        return result

    def _arguments(self, name: str, arguments: str) -> dict[str, Any]:
        tool = self.tools.get(name)
        if tool is None:
            raise ToolError(f"there is no tool {name!r}; use one of {', '.join(self.tools)}")
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            raise ToolError(f"the arguments of {name} are not valid JSON") from None
        if not isinstance(args, dict):
            raise ToolError(f"the arguments of {name} must be a JSON object")
        unknown = sorted(set(args) - set(tool.params))
        if unknown:
            raise ToolError(
                f"{name} takes no {', '.join(unknown)}; its arguments: {', '.join(tool.params)}"
            )
        for key, param in tool.params.items():
            if key not in args or args[key] is None:
                if param.required:
                    raise ToolError(f"{name} needs {key!r} ({param.description})")
                args.pop(key, None)
            elif not _JSON_TYPES[param.type](args[key]):
                raise ToolError(f"{name}: {key!r} must be of type {param.type}")
        return args

    def _run(self, name: str, a: Mapping[str, Any]) -> Any:
        g, brain, actor = self.graph, self.brain, self.actor
        if name == "get":
            page = g.get(brain, a["ref"])
            return {
                "document": _brief(page.summary),
                "content": page.content,
                "links": [f"{e.type} → {e.target}" for e in page.links],
                "backlinks": [f"{e.source} {e.type} →" for e in page.backlinks],
            }
        if name == "list":
            found = g.list_documents(
                brain, folder=a.get("folder"), doc_type=a.get("type"), status=a.get("status")
            )
            return {"documents": [_brief(s) for s in found[:MAX_LIST]], "total": len(found)}
        if name == "query":
            limit = _bounded(a.get("limit", 10), 1, 30, "limit")
            hits = g.query(brain, a["text"], limit=limit)
            return [{**_brief(h.document), "snippet": h.snippet} for h in hits]
        if name == "timeline":
            limit = _bounded(a.get("limit", 50), 1, 100, "limit")
            entries = g.timeline(
                brain, a.get("ref"), since=a.get("since"), until=a.get("until"), limit=limit
            )
            return [{"document": e.doc_id, "at": e.at, "text": e.text, "source": e.source}
                    for e in entries]  # fmt: skip
        if name == "create":
            return _brief(
                g.create(
                    brain,
                    actor=actor,
                    doc_type=a["type"],
                    title=a["title"],
                    folder=a.get("folder"),
                    doc_id=a.get("id"),
                    text=a.get("text", ""),
                    status=a.get("status"),
                )  # fmt: skip
            )
        if name == "rewrite":
            return _brief(g.rewrite(brain, a["ref"], a["truth"], actor=actor))
        if name == "set":
            return _brief(g.set_fields(brain, a["ref"], a["assignments"], actor=actor))
        if name == "append_timeline":
            written = g.append_timeline(
                brain, a["ref"], a["text"], actor=actor, at=a.get("at"), source=a.get("source")
            )
            return {**_brief(written.document), "changed": written.changed}
        if name == "append_evidence":
            evidence, cited_from = g.append_evidence(
                brain, a["ref"], a["text"], title=a["title"], actor=actor, source=a.get("source")
            )
            return {"evidence": _brief(evidence), "document": _brief(cited_from),
                    "cite_as": f"[[evidence:{evidence.id}|{evidence.title}]]"}  # fmt: skip
        if name == "alias":
            return _brief(g.alias(brain, a["ref"], a["alias"], actor=actor).document)
        if name == "link":
            written = g.link(brain, a["ref"], a["relation"], a["target"], actor=actor)
            return {**_brief(written.document), "changed": written.changed}
        if name == "merge":
            source = g.resolve(brain, a["source"])
            # A retired capture's title is its first line, not another name of the target.
            is_capture = source.status == "draft" and source.folder.split("/")[0] == "inbox"
            return _brief(
                g.merge(brain, source.id, a["target"], actor=actor, alias_title=not is_capture)
            )
        if name == "move":
            return _brief(
                g.move(brain, a["ref"], actor=actor, folder=a.get("folder"), new_id=a.get("new_id"))
            )
        raise ToolError(f"there is no tool {name!r}")  # pragma: no cover - names are checked


def _bounded(value: int, low: int, high: int, name: str) -> int:
    if not low <= value <= high:
        raise ToolError(f"{name} must be between {low} and {high}")
    return value
