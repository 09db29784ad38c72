"""Asking Loci from Slack: a question answered from the asker's linked brain, in its thread.

    question (mention, or "?"/"ask " in a DM) ─ linked user who may read the brain
      └─ (after Slack has its 200) `Answers.converse` in the thread's conversation
           └─ the answer and its numbered sources, as mrkdwn, in the thread

A Slack thread is one conversation per asker: the first question opens it, the thread's
`thread_ts` is kept with its id (`slack_threads`), and every later question in that thread
continues it, so "and the year before?" is read with what came before. Only the linked brain is
searched, as the linked user — never a brain they cannot read. The user's own chat model, if
they set one, answers; else the server's; with none, the answer is extractive.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from loci.answer.events import final_answer
from loci.auth.records import User
from loci.errors import NotFound
from loci.integrations.slack_events import SlackMessage
from loci.integrations.slack_format import answer_message
from loci.llm.client import Chat, OpenAICompatibleChat
from loci.models import Brain
from loci.service import Loci

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Question:
    message: SlackMessage
    user: User
    brain: Brain
    may_save: bool  # "remember that …" in a question saves only for someone who may write


# Which chat model answers a user (`UserModels.chat_for`): their own, or None for the server's.
ChatFor = Callable[[User], Chat | None]


class SlackAnswers:
    def __init__(
        self, loci: Loci, chat_for: ChatFor | None = None, public_url: str | None = None
    ) -> None:
        self.loci = loci
        self.store = loci.store.integrations
        self.chat_for = chat_for
        self.public_url = public_url

    def thread_conversation(self, message: SlackMessage, user: User, brain: Brain) -> int | None:
        return self.store.slack_thread(
            message.team_id, message.channel, message.thread_ts, user.id, brain.id
        )

    def answer(self, question: Question) -> str:
        """The reply to post: the answer with its sources. `LociError` if it cannot be had."""
        message, user, brain = question.message, question.user, question.brain
        conversation_id = self.thread_conversation(message, user, brain)
        if conversation_id is not None:
            try:
                self.loci.answers.conversation(brain, conversation_id, user.id)
            except NotFound:  # deleted in the web app meanwhile: the thread starts afresh
                conversation_id = None
        chat = self.chat_for(user) if self.chat_for is not None else None
        try:
            events = self.loci.answers.converse(
                brain,
                message.text,
                user_id=user.id,
                conversation_id=conversation_id,
                chat=chat,
                may_save=question.may_save,
                actor=user.name,
                origin="slack",
            )
            done = final_answer(events)
        finally:
            if isinstance(chat, OpenAICompatibleChat):
                chat.close()
        conversation_id = done.kept()[0]
        self.store.keep_slack_thread(
            message.team_id, message.channel, message.thread_ts, user.id, brain.id,
            conversation_id,
        )  # fmt: skip
        log.info(
            "slack: answered %s/%s in %s (conversation %s, %d sources)",
            message.team_id, message.user_id, brain.name, conversation_id, len(done.citations),
        )  # fmt: skip
        cited = [c.model_dump() for c in done.citations]
        return answer_message(done.answer, cited, self.public_url)
