"""The curation agent's loop: a model whose only tools are the brain's operations.

Each step sends the conversation so far and the tools; the model answers with tool calls (run,
their results appended, next step) or with text alone (done). The loop stops at `max_steps`
model calls or when the overall time budget is spent (also mid-call), whichever comes first;
what the model wrote until then stays written (each write validated, each one a version). A
model that fails within its own step budget (after the client's retries and fallbacks) raises
`LLMError` to the caller: the job retries.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from loci.curate.tools import BrainTools
from loci.errors import LLMTimeout
from loci.llm.client import Chat

log = logging.getLogger(__name__)

Outcome = Literal["finished", "step_limit", "timeout"]


@dataclass(frozen=True)
class AgentLimits:
    max_steps: int = 32
    timeout_s: float = 600.0  # the whole run
    step_timeout_s: float = 120.0  # one model call, within what is left of the whole


@dataclass(frozen=True)
class AgentRun:
    outcome: Outcome
    steps: int  # model calls made
    tool_calls: int
    final: str  # the model's last words ("" when it was cut off)


def run_agent(
    chat: Chat, tools: BrainTools, system: str, task: str, limits: AgentLimits
) -> AgentRun:
    deadline = time.monotonic() + limits.timeout_s
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": task},
    ]
    schemas = tools.schemas()
    calls = 0
    for step in range(1, limits.max_steps + 1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return AgentRun("timeout", step - 1, calls, "")
        try:
            reply = chat.complete_with_tools(
                messages, schemas, timeout_s=min(limits.step_timeout_s, remaining)
            )
        except LLMTimeout:
            if remaining < limits.step_timeout_s:  # the run's time ran out, not the model's
                return AgentRun("timeout", step, calls, "")
            raise
        messages.append(reply.as_message())
        if not reply.tool_calls:
            return AgentRun("finished", step, calls, reply.text.strip())
        for call in reply.tool_calls:
            result = tools.call(call.name, call.arguments)
            calls += 1
            log.debug("curation step %d: %s → %s", step, call.name, result[:200])
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return AgentRun("step_limit", limits.max_steps, calls, "")
