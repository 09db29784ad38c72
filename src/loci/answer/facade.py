"""Asking, studying and conversations, as methods of the `Loci` facade.

`Loci` inherits these (it is the one object surfaces call); they live here so the facade's file
stays about adding, reading and indexing. They use only what every `Loci` has: the store, its
search, its configured chat model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from loci.answer.events import AskEvent
from loci.answer.pipeline import Asker, Retrieval, Turn
from loci.answer.sources import Source
from loci.answer.sources import number as number_sources
from loci.answer.study import Flashcard, QuizQuestion
from loci.answer.study import flashcards as make_flashcards
from loci.answer.study import quiz as make_quiz
from loci.errors import InvalidInput
from loci.llm.client import Chat
from loci.models import Brain, ChatMessage, Conversation, Hit
from loci.search.engine import SearchRequest, passage_hit
from loci.store.base import Store


class Answering:
    # What `Loci` provides; declared here for the type checker, defined there.
    store: Store

    @property
    def chat(self) -> Chat | None:
        raise NotImplementedError  # Loci: the configured model

    def search(self, brain: Brain, request: SearchRequest) -> list[Hit]:
        raise NotImplementedError  # Loci: hybrid search with citations

    def ask(
        self,
        brain: Brain,
        question: str,
        history: Sequence[Turn] = (),
        chat: Chat | None = None,
    ) -> Iterator[AskEvent]:
        """Answer from the brain's documents, as events (see `loci.answer.pipeline`). `chat`
        overrides the configured model (a user's own key on the server)."""
        if not question.strip():
            raise InvalidInput("the question is empty")

        def search(query: str, limit: int, text_weight: float) -> list[Hit]:
            return self.search(brain, SearchRequest(query, limit=limit, text_weight=text_weight))

        def passages(document_id: int) -> list[Hit]:
            document = self.store.get_document(brain.id, document_id)
            return [passage_hit(c, document) for c in self.store.list_chunks(brain.id, document_id)]

        retrieval = Retrieval(
            brain=brain.name,
            search=search,
            documents=lambda: self.store.list_documents(brain.id),
            passages=passages,
        )
        return Asker(retrieval, chat if chat is not None else self.chat).ask(question, history)

    # study tools --------------------------------------------------------------------------
    def study_sources(self, brain: Brain, topic: str | None, limit: int = 12) -> list[Source]:
        """Passages to study: the best for a topic, or the openings of recent documents."""
        if topic and topic.strip():
            hits = self.search(brain, SearchRequest(topic, limit=min(limit, 30)))
        else:
            # Round robin over recent documents, each read in order: every document and every
            # section of a short one gets its turn before any gets a second passage.
            recent = self.store.list_documents(brain.id, status="ready")[-limit:]
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
        return make_quiz(self.study_sources(brain, topic), count, chat or self.chat)

    def flashcards(
        self, brain: Brain, topic: str | None = None, count: int = 10, chat: Chat | None = None
    ) -> list[Flashcard]:
        _check_count(count)
        return make_flashcards(self.study_sources(brain, topic), count, chat or self.chat)

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
    ) -> Iterator[AskEvent]:
        """`ask` inside a conversation: its history resolves follow-ups, and the question and
        the answer (with citations) are kept. The `done` event names the conversation."""
        conversations = self.store.conversations
        conversation = None
        if conversation_id is not None:
            conversation = conversations.get(brain.id, user_id, conversation_id)
        elif continue_latest:
            conversation = conversations.latest(brain.id, user_id)
        if conversation is None:
            title = " ".join(question.split())[:80] or "Conversation"
            conversation = conversations.create(brain.id, user_id, title)
        history = [Turn(m.role, m.content) for m in conversations.messages(conversation.id)]
        events = self.ask(brain, question, history, chat)  # validates before anything is kept
        conversations.add_message(conversation.id, "user", question)
        for event in events:
            if event.type == "done":
                conversations.add_message(
                    conversation.id,
                    "assistant",
                    event.data["answer"],
                    event.data["citations"],
                    event.data["intent"],
                )
                event = AskEvent("done", {**event.data, "conversation_id": conversation.id})
            yield event

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
