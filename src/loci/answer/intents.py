"""What kind of question this is, and how much retrieval it deserves (a router and
adaptive parameters), with the rule-based router used when no model is configured or it fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

Intent = Literal[
    "no_retrieval",
    "simple_lookup",
    "comparison",
    "summarization",
    "analytical",
    "follow_up",
    "list_documents",
    "summarize_document",
]
INTENTS: tuple[str, ...] = get_args(Intent)


@dataclass(frozen=True)
class Route:
    intent: Intent
    confidence: float
    target: str | None = None  # the file a summarize_document names, the topic of a listing
    by: Literal["model", "rules"] = "rules"


@dataclass(frozen=True)
class RetrievalParams:
    chunks: int  # passages handed to grading and the answer
    text_weight: float  # the BM25 leg's share in fusion
    expansion_queries: int  # extra phrasings asked of the model


# One table, in one place (the router's second step). Comparisons and analysis need breadth;
# a lookup needs precision. Text weights stay near 0.4, where answers were measured: they only
# lean. Search's per-question trusts and its "nothing specific" rule apply to them as to its
# own (`search.confidence`).
RETRIEVAL: dict[Intent, RetrievalParams] = {
    "no_retrieval": RetrievalParams(chunks=0, text_weight=0.4, expansion_queries=0),
    "simple_lookup": RetrievalParams(chunks=5, text_weight=0.4, expansion_queries=2),
    "comparison": RetrievalParams(chunks=12, text_weight=0.45, expansion_queries=4),
    "summarization": RetrievalParams(chunks=10, text_weight=0.35, expansion_queries=3),
    "analytical": RetrievalParams(chunks=10, text_weight=0.4, expansion_queries=3),
    "follow_up": RetrievalParams(chunks=6, text_weight=0.4, expansion_queries=2),
    "list_documents": RetrievalParams(chunks=30, text_weight=0.4, expansion_queries=0),
    "summarize_document": RetrievalParams(chunks=40, text_weight=0.4, expansion_queries=0),
}

GREETING = re.compile(
    r"^\s*(hi|hello|hey|hiya|yo|good (morning|afternoon|evening)|thanks|thank you|cheers|"
    r"how are you|what's up)\b[\s!.,?]*(there|loci|again|so much|a lot)?[\s!.,?]*$",
    re.IGNORECASE,
)
LIST_FILES = re.compile(
    r"\b(what|which|list|show|find)\b.{0,30}\b(files?|documents?|docs|pdfs?|notes|pages)\b"
    r".{0,30}\b(about|on|regarding|mention(ing)?|related to|for)\b\s+(?P<topic>.+)",
    re.IGNORECASE,
)
FILE_NAME = re.compile(r"[\w\-.]*\w\.(pdf|docx?|md|markdown|txt|html?|csv|xlsx|pptx|epub)\b", re.I)
SUMMARIZE = re.compile(r"\b(summari[sz]e|summary of|tl;?dr|overview of|recap)\b", re.IGNORECASE)
COMPARE = re.compile(
    r"\b(compare|comparison|versus|vs\.?|difference between|differ|contrast)\b", re.I
)
ANALYTICAL = re.compile(
    r"\b(why|how (does|do|did|would|could)|analy[sz]e|implications?|evaluate|assess|explain|"
    r"pros and cons|trade-?offs?|impact)\b",
    re.IGNORECASE,
)
FOLLOW_UP = re.compile(
    r"^\s*(and|what about|how about|also|then|so)\b|\b(it|its|they|them|their|that|those|"
    r"these|this|he|she|his|her)\b",
    re.IGNORECASE,
)


ELLIPSIS_WORDS = 3  # "and the price?", "what about Tuesday?": too short to stand alone


def depends_on_last_turn(question: str) -> bool:
    """Whether a question leans on the conversation: it points back ("its price", "and …?",
    "what about …") or is too short to stand alone. An unrelated question ("How much did the
    last filling cost?" after one about a boiler) starts afresh."""
    text = strip_greeting(question).strip()
    return bool(FOLLOW_UP.search(text)) or len(text.rstrip("?!. ").split()) <= ELLIPSIS_WORDS


def route_by_rules(question: str, has_history: bool) -> Route:
    """A deterministic router: greetings only when nothing else is asked, file names and
    listing phrases first, then question shapes; a lookup when nothing else fits."""
    text = question.strip()
    if GREETING.match(text):
        return Route("no_retrieval", 0.9)
    if listing := LIST_FILES.search(text):
        return Route("list_documents", 0.8, target=listing.group("topic").strip(" ?.!"))
    if SUMMARIZE.search(text):
        named = FILE_NAME.search(text)
        if named:
            return Route("summarize_document", 0.8, target=named.group(0).strip())
        return Route("summarization", 0.6)
    if COMPARE.search(text):
        return Route("comparison", 0.7)
    if has_history and depends_on_last_turn(text) and len(text.split()) <= 12:
        return Route("follow_up", 0.6)
    if ANALYTICAL.search(text):
        return Route("analytical", 0.6)
    return Route("simple_lookup", 0.5)


def strip_greeting(question: str) -> str:
    """ "Hello, can you compare X and Y?" → "can you compare X and Y?" (a greeting wrapped around
    a real question is not a greeting)."""
    return (
        re.sub(
            r"^\s*(hi|hello|hey|good (morning|afternoon|evening))\b[\s,!.]*(there\b[\s,!.]*)?",
            "",
            question,
            flags=re.IGNORECASE,
        ).strip()
        or question
    )


# Saving is not a question: the chat keeps what the user asks it to keep (a
# save_to_brain tool), by rules only — anchored at the start, never a question, so "do you remember
# that trip?" or "what did I save about taxes?" are still asked.
SAVE_THIS = re.compile(
    r"^\s*(?:please\s+)?(?:save|keep|remember|store)\s+(?:this|that|it)(?:\s+answer)?"
    r"(?:\s+(?:to|in)\s+(?:my\s+|the\s+)?brain)?(?:\s+please)?[\s.!]*$",
    re.IGNORECASE,
)
REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|save)(?:\s+that\b|\s*:)\s*(?P<text>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)


def save_request(message: str) -> str | None:
    """What a chat message asks to save: its own text ("remember that the gate code is 4471"),
    "" for the previous answer ("save this"), or None when it asks no such thing."""
    if SAVE_THIS.match(message):
        return ""
    found = REMEMBER.match(message)
    if found is None or message.rstrip().endswith("?"):
        return None
    return found.group("text").strip()
