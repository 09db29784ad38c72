"""An answer kept in the brain graph: an `analysis` page in research/ (reports are analysis pages).

The page states the question, quotes the answer as written, and lists its citations as links the
graph understands: a cited brain page becomes a page link (an edge), a cited evidence record an
evidence citation, any other document of the brain a source pointer (`file:12`, which `brain
sources` resolves), and a passage from another brain a pointer naming that brain. The page stays
a draft: its answer rests on sources, not on evidence records. Its id comes from the message, so
saving the same answer twice finds the first page.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from typing import Any

from loci.answer.records import ChatMessage
from loci.graph.document import BrainDoc, new_entry
from loci.graph.links import slugify
from loci.graph.records import GraphDocument
from loci.models import Document

FOLDER = "research"
CORE_KINDS = ("file", "web", "note")  # `loci.graph.reads.CORE_PROVIDERS`
MAX_TITLE = 200
ANSWERED = "answered in chat"  # the timeline entry; its source names the conversation


def page_id(brain_id: int, message_id: int, question: str) -> str:
    digest = hashlib.sha256(f"{brain_id}:{message_id}".encode()).hexdigest()[:8]
    return f"answer-{slugify(question)[:80].strip('-')}-{digest}"


def answer_page(
    *,
    doc_id: str,
    question: str,
    answer: ChatMessage,
    brain_name: str,
    conversation_id: int,
    graph_docs: dict[int, GraphDocument],
    documents: dict[int, Document],
) -> BrainDoc:
    """The page for `answer` (an assistant message) to `question`. `graph_docs` and `documents`
    are the cited documents of this brain that still exist, by document id."""
    lines: list[str] = []
    sources: list[str] = []
    for citation in answer.citations:
        link, pointer = _link(citation, brain_name, graph_docs, documents)
        snippet = " ".join(str(citation.get("snippet") or "").split())[:200]
        quoted = f' — "{_defused(snippet)}"' if snippet else ""
        lines.append(f"{citation.get('number', len(lines) + 1)}. {link}{quoted}")
        if pointer is not None and pointer not in sources:
            sources.append(pointer)
    question_line = " ".join(question.split())
    truth = f"**Question:** {_defused(question_line)}\n\n{_defused(answer.content.strip())}\n"
    if lines:
        truth += "\n### Sources\n\n" + "\n".join(lines) + "\n"
    today = dt.date.today().isoformat()
    asked_in = f"loci-chat:{conversation_id}/{answer.id}"
    # The question is stated once, in the truth: a timeline line repeating it would be a passage
    # that is nothing but the question, and asking it again would cite that line.
    entry = new_entry(doc_id, today, ANSWERED, asked_in)
    return BrainDoc(
        id=doc_id,
        kind="page",
        type="analysis",
        folder=FOLDER,
        status="draft",
        title=_title(question_line),
        sources=tuple(sources),
        truth=truth,
        timeline=(entry,),
    )


def cited_ids(citations: Sequence[dict[str, Any]], brain_name: str) -> list[int]:
    return [
        int(c["document_id"])
        for c in citations
        if c.get("brain", brain_name) == brain_name and isinstance(c.get("document_id"), int)
    ]


def _link(
    citation: dict[str, Any],
    brain_name: str,
    graph_docs: dict[int, GraphDocument],
    documents: dict[int, Document],
) -> tuple[str, str | None]:
    """(the Markdown that links the cited document, its source pointer if it has one)."""
    label = _label(str(citation.get("where") or citation.get("name") or "source"))
    document_id = citation.get("document_id")
    brain = citation.get("brain") or brain_name
    if brain != brain_name:  # another brain's document: a pointer this brain cannot resolve
        pointer = f"brain:{brain}/{document_id}"
        return f"[[source:{pointer}|{label}]] (brain {brain})", pointer
    if isinstance(document_id, int) and document_id in graph_docs:
        record = graph_docs[document_id]
        kind = "evidence" if record.kind == "evidence" else "page"
        return f"[[{kind}:{record.id}|{label}]]", None
    document = documents.get(document_id) if isinstance(document_id, int) else None
    provider = document.kind if document is not None and document.kind in CORE_KINDS else "file"
    pointer = f"{provider}:{document_id}"
    return f"[[source:{pointer}|{label}]]", pointer


def _label(text: str) -> str:
    """A link label: no characters that would end the link early."""
    cleaned = " ".join(text.replace("]", ")").replace("[", "(").replace("|", "/").split())
    return cleaned[:120] or "source"


def _defused(text: str) -> str:
    """Text from a model or a document must not become a link of the graph by accident."""
    return text.replace("[[", "[ [").replace("]]", "] ]")


def _title(question: str) -> str:
    title = question.rstrip(" ?") or "Answer"
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1].rstrip() + "…"
