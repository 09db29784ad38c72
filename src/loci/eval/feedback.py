"""Questions to re-run from the answers people rated down (`loci eval --from-feedback`).

Each thumbs-down answer becomes a line of a questions file (see `loci.eval.questions`): the
question that was asked, what the person said was wrong (`reason`), and where it came from
(`from`: the conversation, the answer's message, when it was rated, the documents it cited).
Its `expect` is left empty: a reason is a remark ("it's in the 2023 return"), not a phrase a
passage must contain, so a person fills in the document or phrase; until then the question is
run and its top documents shown, but not judged.
"""

from __future__ import annotations

from typing import Any

from loci.answer.records import RatedAnswer


def feedback_questions(rated: list[RatedAnswer]) -> list[dict[str, Any]]:
    lines = []
    for item in rated:
        answer = item.answer
        if answer.feedback is None or answer.feedback.rating != "down":
            continue
        cited = list(dict.fromkeys(str(c.get("name", "")) for c in answer.citations))
        lines.append(
            {
                "question": item.question,
                "expect": {},
                "reason": answer.feedback.reason,
                "from": {
                    "conversation_id": answer.conversation_id,
                    "message_id": answer.id,
                    "rated_at": answer.feedback.rated_at,
                    "cited": [name for name in cited if name],
                },
            }
        )
    return lines
