"""A digest kept in the brain graph: an `analysis` page in reviews/, searchable like any page.

Its id comes from the period's dates (`digest-2026-11-01-to-2026-11-07`); graph ids are per
brain, so brain and period name the page and saving the same period again rewrites it. New
documents are linked as source pointers (`file:12`), changed pages as page links (edges), and
text from a model or a document is defused so it cannot become a link or a timeline by accident.
"""

from __future__ import annotations

import datetime as dt
import re

from loci.graph.document import BrainDoc, new_entry
from loci.review.digest import REVIEWS_FOLDER, AddedDocument, Facts
from loci.review.period import Period
from loci.review.summary import Recap

TIMELINE_LINE = re.compile(r"^(\s*)##\s+Timeline\s*$", re.MULTILINE | re.IGNORECASE)
MAX_INBOX_LISTED = 20


def page_id(period: Period) -> str:
    return f"digest-{period.first_day}-to-{period.last_day}"


def title(period: Period) -> str:
    return f"Digest {period.describe()}"


def digest_page(facts: Facts, recap: Recap) -> BrainDoc:
    doc_id = page_id(facts.period)
    documents = [*facts.added, *facts.notes]
    today = dt.date.today().isoformat()
    entry = new_entry(doc_id, today, f"digest of {facts.period.describe()}", None)
    return BrainDoc(
        id=doc_id,
        kind="page",
        type="analysis",
        folder=REVIEWS_FOLDER,
        status="draft",  # it rests on sources, not on evidence records (as a kept answer)
        title=title(facts.period),
        sources=tuple(dict.fromkeys(_pointer(d) for d in documents)),
        truth=truth(facts, recap),
        timeline=(entry,),
    )


def truth(facts: Facts, recap: Recap) -> str:
    counts = facts.counts
    out = [
        f"What came into **{_defused(facts.brain)}** from {facts.period.describe()}: "
        f"{counts['added']} documents added, {counts['notes']} notes written, "
        f"{counts['inbox']} captures waiting in the inbox, {counts['failed']} failed.",
        "",
        "## Summary",
        "",
        _defused(recap.text) or "Nothing new in this period.",
    ]
    if recap.sources:
        out += ["", "### Sources", ""]
        out += [
            f"{s.number}. [[source:{_source_pointer(s.hit.citation.document_id, documents=facts)}"
            f"|{_label(s.hit.citation.title or s.hit.citation.name)}]]"
            for s in recap.sources
        ]
    if facts.themes:
        out += ["", "## Themes", ""]
        out += [f"- {_defused(t.label)} ({_documents(len(t.document_ids))})" for t in facts.themes]
    if facts.added:
        out += ["", "## Added", ""]
        out += [f"- {d.kind}: {_link(d)}" for d in facts.added]
    if facts.notes:
        out += ["", "## Notes", ""]
        out += [f"- {_link(d)}" for d in facts.notes]
    if facts.pages:
        out += ["", "## Pages", ""]
        for p in facts.pages:
            how = "new" if p.created else "changed"
            out.append(f"- [[page:{p.id}|{_label(p.title)}]] ({p.type}, {how})")
            out += [f"  - {e.at}: {_defused(e.text)}" for e in p.entries]
    if facts.inbox:
        out += ["", "## Inbox", ""]
        out += [f"- {_defused(d.title)}" for d in facts.inbox[:MAX_INBOX_LISTED]]
        if len(facts.inbox) > MAX_INBOX_LISTED:
            out.append(f"- … and {len(facts.inbox) - MAX_INBOX_LISTED} more")
    if facts.failed:
        out += ["", "## Failed", ""]
        out += [f"- {_defused(f.name)}: {_defused(f.reason)}" for f in facts.failed]
    return "\n".join(out) + "\n"


def _pointer(document: AddedDocument) -> str:
    return f"{document.kind}:{document.id}"


def _source_pointer(document_id: int, *, documents: Facts) -> str:
    kind = next(
        (d.kind for d in (*documents.added, *documents.notes) if d.id == document_id), "file"
    )
    return f"{kind}:{document_id}"


def _link(document: AddedDocument) -> str:
    return f"[[source:{_pointer(document)}|{_label(document.title)}]]"


def _label(text: str) -> str:
    cleaned = " ".join(text.replace("]", ")").replace("[", "(").replace("|", "/").split())
    return cleaned[:120] or "untitled"


def _defused(text: str) -> str:
    """Model or document text must not become a link, nor end the compiled truth early."""
    text = text.replace("[[", "[ [").replace("]]", "] ]")
    return TIMELINE_LINE.sub(r"\1### Timeline", text)


def _documents(n: int) -> str:
    return f"{n} document" if n == 1 else f"{n} documents"
