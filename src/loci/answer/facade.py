"""Asking, studying and conversations: `Answers`, the service `Loci` holds as `loci.answers`.

It is built with what it uses: the store (conversations, passages), the brain's search, the
graph (saved answers), the configured chat model and capture (a "remember that …" in a chat).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from loci.answer import keep
from loci.answer.events import AskEvent, Done, Routed, Token
from loci.answer.intents import save_request
from loci.answer.pipeline import Asker, Turn
from loci.answer.quoting import Reader
from loci.answer.records import ChatMessage, Conversation, RatedAnswer, Rating
from loci.answer.retrieval import Retrieval
from loci.answer.scope import Scope, scope_for
from loci.answer.sources import Source
from loci.answer.sources import number as number_sources
from loci.answer.study import Flashcard, QuizQuestion
from loci.answer.study import flashcards as make_flashcards
from loci.answer.study import quiz as make_quiz
from loci.curate.pipeline import Curation
from loci.errors import Conflict, InvalidInput, NotFound
from loci.graph.results import Summary
from loci.graph.service import BrainGraph
from loci.llm.client import Chat
from loci.models import Brain, Document, DocumentKind, Hit, SearchFilters
from loci.search.engine import SearchRequest, passage_hit
from loci.search.filters import admits
from loci.store.base import Store

MAX_REASON = 1000  # characters: a reason is a remark, not an essay


# What study draws on: what a person added to learn from, not the graph's pages, which include
# answers Loci wrote itself (saved answers, digests) and would have it quiz on its own words.
STUDY_KINDS: tuple[DocumentKind, ...] = ("file", "web", "note")


@dataclass(frozen=True)
class SavedAnswer:
    page: Summary  # the analysis page in research/
    created: bool  # False: this answer was saved before, and that page is returned


class Answers:
    """Asking, studying and conversations over one store, its search and the graph."""

    def __init__(
        self,
        store: Store,
        graph: BrainGraph,
        search: Callable[[Brain, SearchRequest], list[Hit]],
        chat: Callable[[], Chat | None],
        capture: Curation,
        reader: Reader | None = None,
    ) -> None:
        self.store = store
        self.graph = graph
        self.search = search  # hybrid search with citations, links followed
        self._chat = chat  # called on use: an answer from the sources alone builds no model
        self.capture = capture  # "remember that …" in a conversation saves through it
        self.reader = reader or Reader()  # reads the meaning of what an answer may quote

    def ask(
        self,
        brain: Brain,
        question: str,
        history: Sequence[Turn] = (),
        chat: Chat | None = None,
        *,
        filters: SearchFilters | None = None,
        brains: Sequence[Brain] = (),
    ) -> Iterator[AskEvent]:
        """Answer from the brain's documents, as events (see `loci.answer.pipeline`). `chat`
        overrides the configured model (a user's own key on the server). `filters` narrow every
        search the answer makes (without dates, a time phrase in the question sets them, if
        anything was added then); `brains` are searched too, each citation naming its brain.
        The caller checks that every brain may be read."""
        asker = self.asker(brain, question, chat, filters=filters, brains=brains)
        return asker.ask(question, history)

    def asker(
        self,
        brain: Brain,
        question: str,
        chat: Chat | None = None,
        *,
        filters: SearchFilters | None = None,
        brains: Sequence[Brain] = (),
    ) -> Asker:
        """The pipeline that answers `question` over these brains (see `ask`)."""
        if not question.strip():
            raise InvalidInput("the question is empty")
        scope = scope_for(question, filters)
        targets = list({b.id: b for b in (brain, *brains)}.values())
        if scope.from_question is not None:
            # Dates read from the question's words are a guess at what was meant: when nothing
            # added then matches, they step aside rather than turn the answer into "nothing".
            probe = SearchRequest(question, limit=1, filters=scope.filters)
            if not any(self.search(t, probe) for t in targets):
                scope = Scope(filters or SearchFilters())
        owners: dict[int, str] = {}  # chunk id → brain name (chunk ids are unique across brains)

        def search(query: str, limit: int, text_weight: float) -> list[Hit]:
            # Passages, not documents: an answer may need three passages of one document.
            request = SearchRequest(
                query,
                limit=limit,
                text_weight=text_weight,
                filters=scope.filters,
                by_document=False,
            )
            found: list[Hit] = []
            for target in targets:
                hits = self.search(target, request)
                owners.update((h.chunk_id, target.name) for h in hits)
                found += hits
            if len(targets) == 1:
                return found
            return sorted(found, key=lambda h: -h.score)[:limit]

        # Asked again for the same names when grading runs twice and when a refusal names
        # them: one text search each per ask.
        @functools.cache
        def mentions(word: str) -> bool:
            probe = SearchRequest(word, limit=1, mode="text", filters=scope.filters)
            return any(self.search(target, probe) for target in targets)

        def documents() -> list[Document]:
            return [
                d
                for target in targets
                for d in self.store.list_documents(target.id)
                if admits(d, scope.filters)
            ]

        def passages(document_id: int) -> list[Hit]:
            for target in targets:
                try:
                    document = self.store.get_document(target.id, document_id)
                except NotFound:
                    continue
                chunks = self.store.list_chunks(target.id, document_id)
                owners.update((c.id, target.name) for c in chunks)
                return [passage_hit(c, document) for c in chunks]
            return []

        narrowed = not scope.filters.empty
        widened = len(targets) > 1
        retrieval = Retrieval(
            brain=brain.name,
            search=search,
            documents=documents,
            passages=passages,
            brain_of=(lambda hit: owners.get(hit.chunk_id, brain.name)) if widened else None,
            scope=scope.event([t.name for t in targets]) if narrowed or widened else None,
            limits=scope.describe() if narrowed else None,
            mentions=mentions,
            reader=self.reader,
        )
        return Asker(retrieval, chat if chat is not None else self._chat())

    # study tools --------------------------------------------------------------------------
    def study_sources(self, brain: Brain, topic: str | None, limit: int = 12) -> list[Source]:
        """Passages to study: the best for a topic, or the openings of recent documents."""
        if topic and topic.strip():
            only_added = SearchFilters(kinds=STUDY_KINDS)
            # Passages: a quiz may draw several questions from one document.
            request = SearchRequest(
                topic, limit=min(limit, 30), filters=only_added, by_document=False
            )
            hits = self.search(brain, request)
        else:
            # Round robin over recent documents, each read in order: every document and every
            # section of a short one gets its turn before any gets a second passage.
            ready = self.store.list_documents(brain.id, status="ready")
            recent = [d for d in ready if d.kind in STUDY_KINDS][-limit:]
            queues = [
                [passage_hit(chunk, doc) for chunk in self.store.list_chunks(brain.id, doc.id)]
                for doc in reversed(recent)
            ]
            hits = []
            while len(hits) < limit and any(queues):
                for queue in queues:
                    if queue and len(hits) < limit:
                        hits.append(queue.pop(0))
        return number_sources(hits, brain.name)

    def quiz(
        self, brain: Brain, topic: str | None = None, count: int = 5, chat: Chat | None = None
    ) -> list[QuizQuestion]:
        _check_count(count)
        return make_quiz(self.study_sources(brain, topic), count, chat or self._chat())

    def flashcards(
        self, brain: Brain, topic: str | None = None, count: int = 10, chat: Chat | None = None
    ) -> list[Flashcard]:
        _check_count(count)
        return make_flashcards(self.study_sources(brain, topic), count, chat or self._chat())

    # conversations ------------------------------------------------------------------------
    def converse(
        self,
        brain: Brain,
        question: str,
        *,
        user_id: int | None = None,
        conversation_id: int | None = None,
        continue_latest: bool = False,
        chat: Chat | None = None,
        filters: SearchFilters | None = None,
        brains: Sequence[Brain] = (),
        may_save: bool = False,
        actor: str = "ask",
        origin: str | None = None,
    ) -> Iterator[AskEvent]:
        """`ask` inside a conversation: its history resolves follow-ups, and the question and
        the answer (with citations) are kept. The `done` event names the conversation and the
        answer's message. "Save this" / "remember that …" save instead of answering, when
        `may_save` (the caller may write to the brain). `origin` says where a new conversation
        was started (web, api, cli, mcp, slack)."""
        conversations = self.store.conversations
        conversation = None
        if conversation_id is not None:
            conversation = conversations.get(brain.id, user_id, conversation_id)
        elif continue_latest:
            conversation = conversations.latest(brain.id, user_id)
        if conversation is None:
            title = " ".join(question.split())[:80] or "Conversation"
            conversation = conversations.create(brain.id, user_id, title, origin)
        kept = conversations.messages(conversation.id)
        history = [Turn(m.role, m.content) for m in kept]
        wanted = save_request(question)
        if wanted is not None:
            events = self._save_from_chat(brain, question, wanted, kept, may_save, actor)
        else:
            # `ask` validates the question and filters before anything is kept.
            events = self.ask(brain, question, history, chat, filters=filters, brains=brains)
        conversations.add_message(conversation.id, "user", question)
        for event in events:
            if isinstance(event, Done):
                cited = [c.model_dump(mode="json") for c in event.citations]
                message = conversations.add_message(
                    conversation.id, "assistant", event.answer, cited, event.intent
                )
                event = replace(event, conversation_id=conversation.id, message_id=message.id)
            yield event

    def _save_from_chat(
        self,
        brain: Brain,
        question: str,
        wanted: str,
        kept: Sequence[ChatMessage],
        may_save: bool,
        actor: str,
    ) -> Iterator[AskEvent]:
        """The `save` intent: "remember that …" keeps its text, "save this" the previous
        answer, through the capture path (a draft in inbox/, curated later) — no answer."""
        yield Routed("save", 0.9, "rules")
        text = wanted or next((m.content for m in reversed(kept) if m.role == "assistant"), "")
        if not may_save:
            reply = "You can read this brain but not save to it; nothing was saved."
        elif not text.strip():
            reply = "There is nothing to save yet: say what to remember, or ask something first."
        else:
            captured = self.capture.save(brain, text, source=None, actor=actor)
            draft = captured.draft
            again = " (it was already there)" if captured.deduped else ""
            reply = f"Saved to {draft.path} as a draft{again}; it will be filed where it belongs."
        yield Token(reply)
        yield Done(reply, intent="save")

    def save_answer(
        self,
        brain: Brain,
        conversation_id: int,
        message_id: int,
        user_id: int | None = None,
        *,
        actor: str = "ask",
    ) -> SavedAnswer:
        """Keep an answer of a conversation as an `analysis` page in research/, its citations
        linked (see `loci.answer.keep`); the same answer twice is the first page."""
        conversation = self.store.conversations.get(brain.id, user_id, conversation_id)
        messages = self.store.conversations.messages(conversation.id)
        at = next((i for i, m in enumerate(messages) if m.id == message_id), None)
        if at is None:
            raise NotFound(f"no message {message_id} in conversation {conversation_id}")
        answer = messages[at]
        if answer.role != "assistant":
            raise InvalidInput(f"message {message_id} is a question; save an answer")
        question = next(
            (m.content for m in reversed(messages[:at]) if m.role == "user"), conversation.title
        )
        doc_id = keep.page_id(brain.id, message_id, question)
        try:
            return SavedAnswer(self.graph.get(brain, doc_id).summary, created=False)
        except NotFound:
            pass
        ids = keep.cited_ids(answer.citations, brain.name)
        documents = {}
        for document_id in ids:
            try:
                documents[document_id] = self.store.get_document(brain.id, document_id)
            except NotFound:  # deleted since: the pointer stays, unresolved
                continue
        page = keep.answer_page(
            doc_id=doc_id,
            question=question,
            answer=answer,
            brain_name=brain.name,
            conversation_id=conversation.id,
            graph_docs=self.store.graph.by_document_ids(brain.id, ids),
            documents=documents,
        )
        try:
            created = self.graph.create(brain, actor=actor, text=page.render())
        except Conflict:  # saved by a concurrent request a moment ago
            return SavedAnswer(self.graph.get(brain, doc_id).summary, created=False)
        return SavedAnswer(created, created=True)

    def rate_answer(
        self,
        brain: Brain,
        conversation_id: int,
        message_id: int,
        rating: str,
        reason: str | None = None,
        user_id: int | None = None,
    ) -> ChatMessage:
        """Rate an answer of your conversation up or down, with an optional short reason;
        rating it again replaces it. Thumbs-down answers feed `loci eval --from-feedback`."""
        if rating not in ("up", "down"):
            raise InvalidInput(f"a rating is up or down, not {rating!r}")
        reason = " ".join((reason or "").split()) or None
        if reason is not None and len(reason) > MAX_REASON:
            raise InvalidInput(f"the reason is longer than {MAX_REASON} characters")
        conversation = self.store.conversations.get(brain.id, user_id, conversation_id)
        found = next(
            (m for m in self.store.conversations.messages(conversation.id) if m.id == message_id),
            None,
        )
        if found is None:
            raise NotFound(f"no message {message_id} in conversation {conversation_id}")
        if found.role != "assistant":
            raise InvalidInput(f"message {message_id} is a question; rate an answer")
        checked: Rating = "up" if rating == "up" else "down"
        return self.store.conversations.rate(conversation.id, message_id, checked, reason)

    def rated_answers(self, brain: Brain, rating: Rating | None = None) -> list[RatedAnswer]:
        """Every rated answer in the brain, whoever rated it, oldest first (for evaluation)."""
        return self.store.conversations.rated(brain.id, rating)

    def conversations(self, brain: Brain, user_id: int | None = None) -> list[Conversation]:
        return self.store.conversations.recent(brain.id, user_id)

    def conversation(
        self, brain: Brain, conversation_id: int, user_id: int | None = None
    ) -> tuple[Conversation, list[ChatMessage]]:
        found = self.store.conversations.get(brain.id, user_id, conversation_id)
        return found, self.store.conversations.messages(found.id)

    def rename_conversation(
        self, brain: Brain, conversation_id: int, title: str, user_id: int | None = None
    ) -> Conversation:
        if not title.strip():
            raise InvalidInput("a conversation needs a title")
        return self.store.conversations.rename(brain.id, user_id, conversation_id, title.strip())

    def delete_conversation(
        self, brain: Brain, conversation_id: int, user_id: int | None = None
    ) -> None:
        self.store.conversations.delete(brain.id, user_id, conversation_id)


def _check_count(count: int) -> None:
    if not 1 <= count <= 30:
        raise InvalidInput(f"count must be between 1 and 30, got {count}")
