"""Ask, streamed as Server-Sent Events, and the caller's conversations in a brain."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent

from loci.answer.events import AskEvent, Failed, final_answer
from loci.api.deps import (
    AccountsDep,
    LociDep,
    OwnBrain,
    PrincipalDep,
    ReadableBrain,
    RowId,
    UserModelsDep,
    WritableBrain,
)
from loci.api.schemas.ask import AskIn, ConversationIn, FeedbackIn, StudyIn
from loci.api.schemas.common import errors
from loci.api.user_chat import own_model
from loci.auth.access import Principal
from loci.errors import Forbidden, LociError, NotFound
from loci.llm.client import Chat
from loci.models import Brain, SearchFilters
from loci.search.filters import check_filters
from loci.service import Loci
from loci.wire.answer import (
    AnswerOut,
    ConversationDetailOut,
    ConversationOut,
    FlashcardOut,
    MessageOut,
    QuizQuestionOut,
    SavedAnswerOut,
)
from loci.wire.graph import GraphSummaryOut

router = APIRouter(prefix="/brains/{brain}", tags=["ask"])


def _owner(loci: Loci, brain: Brain, principal: Principal, conversation_id: int) -> int | None:
    """Whose conversation this is, as the caller may reach it: theirs (their user id), or — for
    an admin — one started on the server's machine by its owner (the CLI, MCP over stdio), which
    has no user (None). Anyone else's is NotFound, as a missing one."""
    try:
        loci.answers.conversation(brain, conversation_id, principal.user.id)
        return principal.user.id
    except NotFound:
        if not principal.user.is_admin:
            raise
    loci.answers.conversation(brain, conversation_id, None)
    return None


@dataclass(frozen=True)
class _Asking:
    body: AskIn
    filters: SearchFilters
    brains: list[Brain]  # besides the path's
    may_save: bool  # "remember that …" saves only for a caller who may write here
    owner: int | None  # whose conversation it goes on (see `_owner`)


def _checked(
    body: AskIn,
    brain: ReadableBrain,
    principal: PrincipalDep,
    accounts: AccountsDep,
    loci: LociDep,
) -> _Asking:
    """Refuse bad filters (400), an unknown conversation and a brain the caller cannot read
    (404) before the stream starts."""
    filters = body.filters.to_filters()
    check_filters(filters)
    owner: int | None = principal.user.id
    if body.conversation_id is not None:
        owner = _owner(loci, brain, principal, body.conversation_id)
    others = [accounts.brain(principal, name, "read")[0] for name in dict.fromkeys(body.brains)]
    try:
        accounts.brain(principal, brain.name, "write")
        may_save = True
    except (Forbidden, NotFound):
        may_save = False
    return _Asking(body, filters, [b for b in others if b.id != brain.id], may_save, owner)


Asking = Annotated[_Asking, Depends(_checked)]


@router.post("/ask", response_class=EventSourceResponse, responses=errors(400, 404))
def ask(
    asking: Asking,
    brain: ReadableBrain,
    principal: PrincipalDep,
    loci: LociDep,
    models: UserModelsDep,
) -> Iterator[ServerSentEvent]:
    """Answer from the brain's documents, as a stream of events: `status`, `route`, `scope`
    (when filters or other brains apply), `rewrite`, `queries`, `grading`, `sources`, then
    `token`s as the answer is written, and `done` with the answer, its numbered citations, the
    intent and each step's time (or `error`). The question and answer are kept in a conversation
    (`conversation_id`, or a new one) — readers, and read-only tokens, may ask."""
    with own_model(models, principal) as chat:
        events = _converse(loci, asking, brain, principal, chat)
        try:
            for event in events:
                yield ServerSentEvent(event=event.type, data=event.to_json())
        except LociError as error:
            failed = Failed(error)
            yield ServerSentEvent(event=failed.type, data=failed.to_json())


@router.post("/answer", response_model=AnswerOut, responses=errors(400, 404))
def answer(
    asking: Asking,
    brain: ReadableBrain,
    principal: PrincipalDep,
    loci: LociDep,
    models: UserModelsDep,
) -> AnswerOut:
    """Answer a question from the user's documents only, in one JSON reply (for clients that
    cannot read a stream, such as a Custom GPT): the answer cites sources as [1], [2], and
    `citations` says which brain, file, page and passage each number is."""
    with own_model(models, principal) as chat:
        events = _converse(loci, asking, brain, principal, chat)
        done = final_answer(events)
    return AnswerOut.of(done)


def _converse(
    loci: Loci, asking: _Asking, brain: Brain, principal: Principal, chat: Chat | None
) -> Iterator[AskEvent]:
    return loci.answers.converse(
        brain,
        asking.body.question,
        user_id=asking.owner,
        conversation_id=asking.body.conversation_id,
        chat=chat,
        filters=asking.filters,
        brains=asking.brains,
        may_save=asking.may_save,
        actor=principal.user.name,
        origin="web" if principal.via_session else "api",
    )


@router.get("/conversations", response_model=list[ConversationOut], responses=errors(404))
def list_conversations(
    brain: ReadableBrain, principal: PrincipalDep, loci: LociDep
) -> list[ConversationOut]:
    """The caller's conversations in this brain, most recent first, wherever they were started
    (the web app, the API, MCP, Slack). An admin also sees those started on the server's
    machine (the CLI, MCP over stdio: `local`), which belong to its owner."""
    found = loci.answers.conversations(brain, principal.user.id)
    if principal.user.is_admin:
        found += loci.answers.conversations(brain, None)
        found.sort(key=lambda c: (c.updated_at, c.id), reverse=True)
    return [ConversationOut.of(c) for c in found]


@router.get(
    "/conversations/{conversation_id}",
    response_model=ConversationDetailOut,
    responses=errors(404),
)
def get_conversation(
    conversation_id: RowId, brain: ReadableBrain, principal: PrincipalDep, loci: LociDep
) -> ConversationDetailOut:
    owner = _owner(loci, brain, principal, conversation_id)
    found, messages = loci.answers.conversation(brain, conversation_id, owner)
    return ConversationDetailOut(
        conversation=ConversationOut.of(found), messages=[MessageOut.of(m) for m in messages]
    )


@router.patch(
    "/conversations/{conversation_id}",
    response_model=ConversationOut,
    responses=errors(400, 403, 404),
)
def rename_conversation(
    conversation_id: RowId,
    body: ConversationIn,
    brain: OwnBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> ConversationOut:
    """Rename your conversation (needs a write token)."""
    owner = _owner(loci, brain, principal, conversation_id)
    renamed = loci.answers.rename_conversation(brain, conversation_id, body.title, owner)
    return ConversationOut.of(renamed)


@router.delete("/conversations/{conversation_id}", status_code=204, responses=errors(403, 404))
def delete_conversation(
    conversation_id: RowId, brain: OwnBrain, principal: PrincipalDep, loci: LociDep
) -> Response:
    """Delete your conversation (needs a write token)."""
    loci.answers.delete_conversation(
        brain, conversation_id, _owner(loci, brain, principal, conversation_id)
    )
    return Response(status_code=204)


@router.post(
    "/conversations/{conversation_id}/messages/{message_id}/save",
    response_model=SavedAnswerOut,
    responses=errors(400, 403, 404),
)
def save_answer(
    conversation_id: RowId,
    message_id: RowId,
    brain: WritableBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> SavedAnswerOut:
    """Keep an answer of your conversation as an `analysis` page in the brain graph's research/
    folder: the question, the answer, its citations as page links, evidence citations or
    source pointers (`file:12`), and a timeline entry "answered in chat" (its source names the
    conversation). Saving the same answer again returns the first page (`created: false`).
    Needs write access to the brain."""
    owner = _owner(loci, brain, principal, conversation_id)
    saved = loci.answers.save_answer(
        brain, conversation_id, message_id, owner, actor=principal.user.name
    )
    return SavedAnswerOut(document=GraphSummaryOut.of(saved.page), created=saved.created)


@router.post(
    "/conversations/{conversation_id}/messages/{message_id}/feedback",
    response_model=MessageOut,
    responses=errors(400, 403, 404),
)
def rate_answer(
    conversation_id: RowId,
    message_id: RowId,
    body: FeedbackIn,
    brain: OwnBrain,
    principal: PrincipalDep,
    loci: LociDep,
) -> MessageOut:
    """Rate an answer of your conversation `up` or `down`, with an optional short reason;
    rating it again replaces the rating (needs a write token). A question is a 400; another
    user's conversation a 404. The conversation's messages show each answer's `feedback`, and
    thumbs-down answers become questions to re-run with `loci eval --from-feedback`."""
    owner = _owner(loci, brain, principal, conversation_id)
    rated = loci.answers.rate_answer(
        brain, conversation_id, message_id, body.rating, body.reason, owner
    )
    return MessageOut.of(rated)


@router.post("/quiz", response_model=list[QuizQuestionOut], responses=errors(400, 404))
def make_quiz(
    body: StudyIn,
    brain: ReadableBrain,
    principal: PrincipalDep,
    loci: LociDep,
    models: UserModelsDep,
) -> list[QuizQuestionOut]:
    """Multiple-choice questions from the brain (or a topic in it), each citing its passage."""
    with own_model(models, principal) as chat:
        questions = loci.answers.quiz(brain, body.topic, body.count, chat)
    return [
        QuizQuestionOut(
            question=q.question,
            choices=list(q.choices),
            answer=q.answer,
            explanation=q.explanation,
            source=q.source.citation(),
        )
        for q in questions
    ]


@router.post("/flashcards", response_model=list[FlashcardOut], responses=errors(400, 404))
def make_flashcards(
    body: StudyIn,
    brain: ReadableBrain,
    principal: PrincipalDep,
    loci: LociDep,
    models: UserModelsDep,
) -> list[FlashcardOut]:
    """Flashcards (front, back) from the brain (or a topic in it), each citing its passage."""
    with own_model(models, principal) as chat:
        cards = loci.answers.flashcards(brain, body.topic, body.count, chat)
    return [FlashcardOut(front=c.front, back=c.back, source=c.source.citation()) for c in cards]
