"""The seven steps of agentic RAG, each with a fallback that needs no model.

    route ─┬─ rewrite (with history) ── expand ── search × n (concurrently) ── grade ── answer
           └─ (run together)                                      └ one broader round if borderline

`Asker.ask` yields events (`loci.answer.events`) as it goes, so a CLI, an SSE stream or a chat
panel shows progress and the answer's words as they are written. Whatever the model does — time
out, fail, answer malformed JSON, break off mid-stream — the step falls back and the answer still
arrives with citations that point at real passages.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from loci.answer import prompts
from loci.answer.citation_order import by_first_use
from loci.answer.events import (
    AskEvent,
    Done,
    Graded,
    Queries,
    Rewritten,
    Routed,
    Sources,
    Status,
    Token,
)
from loci.answer.extractive import extractive_answer, extractive_summary
from loci.answer.grading import Decision, Grade, decide, grade_by_scores, grade_with_model
from loci.answer.intents import (
    INTENTS,
    RETRIEVAL,
    Route,
    depends_on_last_turn,
    route_by_rules,
    strip_greeting,
)
from loci.answer.quoting import Quoted
from loci.answer.quoting import grades as grades_of
from loci.answer.retrieval import Retrieval
from loci.answer.sources import Source, blocks, validate_citations
from loci.answer.support import Claim, held_to_citations
from loci.errors import LLMError
from loci.llm.client import Chat, Message, parse_json_object
from loci.models import Document, Hit

log = logging.getLogger(__name__)

RRF_K = 60.0
MAX_HISTORY_TURNS = 6
GREETING = (
    "Hello! Ask me anything about what's in this brain — I answer from your documents and cite "
    "the passages I used."
)


@dataclass(frozen=True)
class Turn:
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class Reading:
    """What an answer without a model reads: sources numbered for citing, and their units."""

    sources: list[Source]
    quoted: Quoted


@dataclass
class _Run:
    question: str
    history: Sequence[Turn]
    timings: dict[str, float] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)
    claims: tuple[Claim, ...] | None = None  # a model's answer, held against its citations

    def timed(self, step: str, started: float) -> None:
        self.timings[step] = round((time.perf_counter() - started) * 1000, 1)


class Asker:
    def __init__(self, retrieval: Retrieval, chat: Chat | None = None) -> None:
        self.retrieval = retrieval
        self.chat = chat

    def ask(self, question: str, history: Sequence[Turn] = ()) -> Iterator[AskEvent]:
        run = _Run(question.strip(), list(history)[-MAX_HISTORY_TURNS:])
        began = time.perf_counter()
        yield Status("Analyzing the question…")
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            routing = pool.submit(self._route, run)
            rewriting = pool.submit(self._rewrite, run) if run.history else None
            route = routing.result()
            rewritten = rewriting.result() if rewriting else None
        run.timed("route", started)
        yield Routed(route.intent, route.confidence, route.by, route.target)
        if self.retrieval.scope is not None:
            yield self.retrieval.scope

        if route.intent == "no_retrieval":
            greeting = yield from self._greet(run)
            yield self._done(run, route, greeting, [], "sufficient", began)
            return

        effective = strip_greeting(run.question)
        with_history: list[str] = []  # the rules' guess, searched beside the question itself
        if rewritten is not None and rewritten[0] != run.question:  # a question of its own
            text, by = rewritten
            if route.intent == "follow_up" or by == "model":
                effective = text
            elif text != effective:
                with_history.append(text)
            yield Rewritten(run.question, text, by)

        if route.intent == "list_documents":
            yield from self._list_documents(run, route, effective, began)
            return
        if route.intent == "summarize_document":
            document = self._find_document(route.target or effective)
            if document is not None:
                yield from self._summarize_document(run, route, document, began)
                return
            route = Route("summarization", route.confidence, route.target, route.by)

        params = RETRIEVAL[route.intent]
        started = time.perf_counter()
        expanded = self._expand(run, effective, params.expansion_queries)
        queries = list(dict.fromkeys([effective, *with_history, *expanded]))
        run.timed("expand", started)
        yield Queries(tuple(queries), "model" if len(queries) > 1 else "none")

        yield Status(f"Searching {len(queries)} quer{'y' if len(queries) == 1 else 'ies'}…")
        started = time.perf_counter()
        hits = self._search(queries, params.chunks, params.text_weight)
        run.timed("search", started)

        yield Status("Grading the passages…")
        started = time.perf_counter()
        # A follow-up's search carries the earlier question along; what to quote is chosen by
        # the question just asked ("and the booking code?" after one about the seat).
        quoting = run.question if effective != run.question and not with_history else effective
        sources = self.retrieval.number(hits)
        grades, reading = self._grade(run, route, effective, quoting, sources)
        # Without a model, a broader round found 3 more right answers in 109 and gave 8 more
        # wrong ones (bench/answers, dev): the first reading decides.
        decision = decide(grades, expanded=reading is not None)
        if decision == "needs_expansion":
            yield Status("Borderline passages: searching more broadly…")
            broader = [*queries, *self._expand(run, effective, params.expansion_queries + 2)]
            hits = self._search(list(dict.fromkeys(broader)), params.chunks * 2, params.text_weight)
            sources = self.retrieval.number(hits)
            grades, reading = self._grade(run, route, effective, quoting, sources)
            decision = decide(grades, expanded=True)
        run.timed("grade", started)
        yield Graded(
            decision=decision,
            relevant=sum(g.relevance == "relevant" for g in grades),
            partially_relevant=sum(g.relevance == "partially_relevant" for g in grades),
            total=len(grades),
            average=round(sum(g.score for g in grades) / len(grades), 3) if grades else 0,
            by="rules" if "grade" in run.fallbacks or not self.chat else "model",
        )
        if decision == "no_relevant_sources":
            refusal = self.retrieval.refusal(effective, sources)
            yield Token(refusal)
            yield self._done(run, route, refusal, [], decision, began)
            return

        started = time.perf_counter()
        if self.chat is None:
            # Composed at once from the units most likely to state the answer: numbered by first
            # use before it is shown, so the sources listed are the ones cited, in its order.
            reading = reading or self._read(quoting, sources)
            extract = extractive_answer(quoting, reading.quoted.found)
            text, answer_sources = by_first_use(extract, reading.sources)
            yield _sources(answer_sources)
            yield Status("Writing the answer…")
            for line in text.splitlines(keepends=True):  # a line at a time, as a reader reads
                yield Token(line)
        else:
            # Only what was graded useful reaches the model, renumbered 1..n in rank order.
            useful = {g.source for g in grades if g.relevance != "irrelevant"}
            answer_sources = self.retrieval.number([s.hit for s in sources if s.number in useful])
            yield _sources(answer_sources)
            yield Status("Writing the answer…")
            text = yield from self._answer(run, effective, quoting, answer_sources)
        run.timed("answer", started)
        yield self._done(run, route, text, answer_sources, decision, began)

    def reading(self, question: str) -> Reading:
        """What an answer without a model reads for `question` on its first search: the
        passages, numbered, with their units, the most likely to state the answer first.
        (`bench/answer_fit.py` fits the quoting's weights on it.)"""
        params = RETRIEVAL[route_by_rules(question, False).intent]
        hits = self._search([question], params.chunks, params.text_weight)
        return self._read(question, self.retrieval.number(hits))

    # steps --------------------------------------------------------------------------------
    def _route(self, run: _Run) -> Route:
        if self.chat is not None:
            try:
                reply = self.chat.complete(
                    [
                        {"role": "system", "content": prompts.ROUTER},
                        {"role": "user", "content": _with_history(run)},
                    ],
                    json_object=True,
                )
                value = parse_json_object(reply.text)
                intent = value.get("intent")
                if intent in INTENTS:
                    target = value.get("target")
                    confidence = float(value.get("confidence") or 0.5)
                    return Route(
                        intent,
                        min(max(confidence, 0.0), 1.0),
                        target if isinstance(target, str) and target else None,
                        "model",
                    )
                log.info("router answered an unknown intent %r; using rules", intent)
            except (LLMError, ValueError, TypeError) as error:
                log.info("router fell back to rules: %s", error)
            run.fallbacks.append("route")
        return route_by_rules(run.question, bool(run.history))

    def _rewrite(self, run: _Run) -> tuple[str, Literal["model", "rules"]]:
        if self.chat is not None:
            try:
                reply = self.chat.complete(
                    [
                        {"role": "system", "content": prompts.REWRITE},
                        {"role": "user", "content": _with_history(run)},
                    ],
                    json_object=True,
                )
                rewritten = parse_json_object(reply.text).get("rewritten")
                if isinstance(rewritten, str) and rewritten.strip():
                    return rewritten.strip(), "model"
            except LLMError as error:
                log.info("rewrite fell back to rules: %s", error)
            run.fallbacks.append("rewrite")
        # Without a model: carry the previous question's words along, so "what about its
        # price?" still searches for what "it" was — but only for a question that leans on it.
        previous = next((t.content for t in reversed(run.history) if t.role == "user"), "")
        if not previous or not depends_on_last_turn(run.question):
            return run.question, "rules"
        return f"{run.question} ({previous})", "rules"

    def _expand(self, run: _Run, question: str, count: int) -> list[str]:
        if self.chat is None or count <= 0:
            return []
        try:
            reply = self.chat.complete(
                [
                    {"role": "system", "content": prompts.EXPAND.format(n=count)},
                    {"role": "user", "content": question},
                ],
                json_object=True,
            )
            raw = parse_json_object(reply.text).get("queries")
            queries = [q.strip() for q in raw if isinstance(q, str) and q.strip()] if isinstance(
                raw, list) else []  # fmt: skip
            return [q[:300] for q in queries if q.lower() != question.lower()][:count]
        except LLMError as error:
            log.info("expansion skipped: %s", error)
            run.fallbacks.append("expand")
            return []

    def _search(self, queries: list[str], limit: int, text_weight: float) -> list[Hit]:
        """Every query at once, fused by reciprocal rank: a passage several phrasings find
        rises above one that a single phrasing ranks first."""
        depth = min(max(limit, 10), 30)
        with ThreadPoolExecutor(max_workers=min(len(queries), 5)) as pool:
            results = list(
                pool.map(lambda q: self.retrieval.search(q, depth, text_weight), queries)
            )
        scores: dict[int, float] = {}
        best: dict[int, Hit] = {}
        for hits in results:
            for rank, hit in enumerate(hits, start=1):
                scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (RRF_K + rank)
                if hit.chunk_id not in best or _sim(hit) > _sim(best[hit.chunk_id]):
                    best[hit.chunk_id] = hit
        order = sorted(scores, key=lambda chunk_id: -scores[chunk_id])
        return [best[chunk_id] for chunk_id in order[:limit]]

    def _grade(
        self, run: _Run, route: Route, question: str, quoting: str, sources: list[Source]
    ) -> tuple[list[Grade], Reading | None]:
        """The sources' grades, by the model or else by the units that might state the answer
        (then what was read for them too: the answer quotes its units). A summary or a
        comparison states no one fact: without a model its passages are graded by the words
        and meaning they share with the question."""
        if not sources:
            return [], None
        if self.chat is not None:
            try:
                return grade_with_model(self.chat, question, sources), None
            except LLMError as error:
                log.info("grading fell back to scores: %s", error)
                if "grade" not in run.fallbacks:
                    run.fallbacks.append("grade")
        reading = self._read(quoting, sources)
        if route.intent in ("summarization", "comparison"):
            return grade_by_scores(question, sources), reading
        return grades_of(sources, reading.quoted), reading

    def _read(self, question: str, sources: list[Source]) -> Reading:
        """The sources and, when the best one's document is short, the rest of it; with their
        units, the most likely to state the answer first."""
        read = sources + self.retrieval.in_context(sources)
        return Reading(read, self.retrieval.quote(question, read))

    def _answer(
        self, run: _Run, question: str, quoting: str, sources: list[Source]
    ) -> Generator[AskEvent, None, str]:
        written = ""
        if self.chat is not None:
            messages: list[Message] = [
                {"role": "system", "content": prompts.ANSWER},
                {"role": "user", "content": f"{blocks(sources)}\n\nQuestion: {question}"},
            ]
            try:
                for piece in self.chat.stream(messages):  # what came is kept if it breaks off
                    written += piece
                    yield Token(piece)
                if validate_citations(written, sources)[1]:
                    return (yield from self._checked(run, messages, written, sources))
                # An answer that cites none of its sources cannot be checked by its reader:
                # the passages it should have cited follow it.
                log.info("the model's answer cited no source; adding passages")
                run.fallbacks.append("answer")
                yield Status("The answer cites no source; adding the passages it rests on.")
                written += "\n\n"
                yield Token("\n\n")
            except LLMError as error:
                log.info("answer fell back to extracts: %s", error)
                run.fallbacks.append("answer")
                if written:
                    yield Status("The model stopped mid-answer; adding passages from the sources.")
                    written += "\n\n"
                    yield Token("\n\n")
        extract = extractive_answer(quoting, self._read(quoting, sources).quoted.found)
        for line in extract.splitlines(keepends=True):  # a line at a time, as a reader reads
            yield Token(line)
        return written + extract

    def _checked(
        self, run: _Run, messages: list[Message], written: str, sources: list[Source]
    ) -> Generator[AskEvent, None, str]:
        assert self.chat is not None
        held = yield from held_to_citations(
            self.chat, messages, written, sources, self.retrieval.reader
        )
        if held.revision_failed:
            run.fallbacks.append("revise")
        run.claims = held.claims
        return held.text

    def _greet(self, run: _Run) -> Generator[AskEvent, None, str]:
        text = GREETING
        if self.chat is not None:
            try:
                text = (
                    self.chat.complete(
                        [
                            {"role": "system", "content": prompts.GREET},
                            {"role": "user", "content": run.question},
                        ],
                        max_tokens=80,
                    ).text.strip()
                    or GREETING
                )
            except LLMError:
                run.fallbacks.append("answer")
        yield Token(text)
        return text

    # document-level intents ---------------------------------------------------------------
    def _list_documents(
        self, run: _Run, route: Route, question: str, began: float
    ) -> Iterator[AskEvent]:
        topic = route.target or question
        started = time.perf_counter()
        hits = self.retrieval.search(topic, 30, RETRIEVAL["list_documents"].text_weight)
        run.timed("search", started)
        grades = grade_by_scores(topic, self.retrieval.number(hits))
        first_hit: dict[int, Hit] = {}
        for hit, grade in zip(hits, grades, strict=True):
            if grade.relevance != "irrelevant":
                first_hit.setdefault(hit.citation.document_id, hit)
        sources = self.retrieval.number(list(first_hit.values()))
        yield _sources(sources)
        if not sources:
            among = f" among {self.retrieval.limits}" if self.retrieval.limits else ""
            text = f"I found no documents about {topic} in {self.retrieval.where()}{among}."
        else:
            lines = [
                f"{s.number}. {s.hit.citation.name}"
                + (f" — {s.hit.citation.title}" if s.hit.citation.title else "")
                + f" [{s.number}]"
                for s in sources
            ]
            text = f"Documents about {topic}:\n\n" + "\n".join(lines)
        yield Token(text)
        yield self._done(run, route, text, sources, "sufficient", began)

    def _find_document(self, target: str) -> Document | None:
        wanted = target.strip().lower()
        if not wanted:
            return None
        documents = [d for d in self.retrieval.documents() if d.status == "ready"]
        tests: list[Callable[[Document], bool]] = [  # most exact first
            lambda d: d.name.lower() == wanted,
            lambda d: (d.title or "").lower() == wanted,
            lambda d: d.name.lower() in wanted or wanted in d.name.lower(),
            lambda d: bool(d.title) and (d.title or "").lower() in wanted,
        ]
        for matches in tests:
            found = [d for d in documents if matches(d)]
            if found:
                return found[0]
        return None

    def _summarize_document(
        self, run: _Run, route: Route, document: Document, began: float
    ) -> Iterator[AskEvent]:
        started = time.perf_counter()
        passages = self.retrieval.passages(document.id)
        limit = RETRIEVAL["summarize_document"].chunks
        if len(passages) > limit:  # evenly spread over the whole document
            step = len(passages) / limit
            passages = [passages[int(i * step)] for i in range(limit)]
        sources = self.retrieval.number(passages)
        run.timed("search", started)
        if self.chat is None:
            started = time.perf_counter()
            written, sources = by_first_use(extractive_summary(sources), sources)
            yield _sources(sources)
            yield Status(f"Summarizing {document.name}…")
            yield Token(written)
            run.timed("answer", started)
            yield self._done(run, route, written, sources, "sufficient", began)
            return
        yield _sources(sources)
        yield Status(f"Summarizing {document.name}…")
        started = time.perf_counter()
        written = ""
        try:
            for piece in self.chat.stream(
                [
                    {"role": "system", "content": prompts.SUMMARIZE_DOCUMENT},
                    {"role": "user", "content": f"{blocks(sources)}\n\nDocument: "
                     f"{document.name}"},
                ]
            ):  # fmt: skip
                written += piece
                yield Token(piece)
        except LLMError as error:
            log.info("summary fell back to extracts: %s", error)
            run.fallbacks.append("answer")
            written += "\n\n" if written else ""
            extract = extractive_summary(sources)
            written += extract
            yield Token(extract)
        run.timed("answer", started)
        yield self._done(run, route, written, sources, "sufficient", began)

    # the end ------------------------------------------------------------------------------
    def _done(
        self,
        run: _Run,
        route: Route,
        text: str,
        sources: list[Source],
        decision: Decision,
        began: float,
    ) -> Done:
        answer, cited = validate_citations(text, sources)
        run.timings["total"] = round((time.perf_counter() - began) * 1000, 1)
        return Done(
            answer=answer,
            intent=route.intent,
            citations=tuple(s.citation() for s in cited),
            decision=decision,
            model=self.chat.model if self.chat is not None else None,
            fallbacks=tuple(run.fallbacks),
            timings=dict(run.timings),
            scope=self.retrieval.scope,
            claims=run.claims,
        )


def _sources(sources: list[Source]) -> Sources:
    return Sources(tuple(s.citation() for s in sources))


def _sim(hit: Hit) -> float:
    return hit.vector_score if hit.vector_score is not None else -1.0


def _with_history(run: _Run) -> str:
    lines = [f"{t.role}: {t.content[:1000]}" for t in run.history]
    lines.append(f"user (latest): {run.question}")
    return "Conversation:\n" + "\n".join(lines)
