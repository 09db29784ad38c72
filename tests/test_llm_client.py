"""The chat client against a scripted OpenAI-compatible server: retries, fallbacks, timeouts."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from loci.errors import LLMError, LLMMalformed, LLMTimeout
from loci.llm.client import ChatSettings, Message, OpenAICompatibleChat, parse_json_object
from tests.support.scripted_llm import Reply, ScriptedLLM

ASK: list[Message] = [{"role": "user", "content": "Say hello."}]


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def chat(llm: ScriptedLLM, **overrides: object) -> OpenAICompatibleChat:
    settings = {"base_url": llm.base_url, "model": "main", "api_key": "sk-secret",
                "backoff_base_s": 0.01, **overrides}  # fmt: skip
    return OpenAICompatibleChat(ChatSettings(**settings))  # type: ignore[arg-type]


def test_completion_sends_the_key_and_returns_the_text(llm: ScriptedLLM) -> None:
    llm.script = [Reply("Hello there.")]
    done = chat(llm).complete(ASK)
    assert done.text == "Hello there." and done.model == "main"
    assert llm.requests[0]["_authorization"] == "Bearer sk-secret"
    assert llm.requests[0]["messages"] == ASK


def test_429_is_retried_honouring_retry_after(llm: ScriptedLLM) -> None:
    llm.script = [Reply(status=429, retry_after="0.3"), Reply("after the wait")]
    started = time.monotonic()
    assert chat(llm).complete(ASK).text == "after the wait"
    assert time.monotonic() - started >= 0.3
    assert len(llm.requests) == 2


def test_a_failing_model_hands_over_to_the_fallback(llm: ScriptedLLM) -> None:
    llm.script = [Reply(status=500), Reply(status=502), Reply(status=503), Reply("from backup")]
    done = chat(llm, fallback_models=("backup",)).complete(ASK)
    assert done.text == "from backup" and done.model == "backup"
    assert [r["model"] for r in llm.requests] == ["main", "main", "main", "backup"]


def test_an_unknown_model_goes_straight_to_the_fallback(llm: ScriptedLLM) -> None:
    llm.script = [Reply(status=404, error_message="model not found"), Reply("ok")]
    assert chat(llm, fallback_models=("backup",)).complete(ASK).model == "backup"


def test_a_wrong_key_is_not_retried_and_never_echoed(llm: ScriptedLLM) -> None:
    llm.script = [Reply(status=401, error_message="bad key"), Reply("never")]
    with pytest.raises(LLMError) as caught:
        chat(llm, fallback_models=("backup",)).complete(ASK)
    assert len(llm.requests) == 1 and "sk-secret" not in str(caught.value)


def test_a_slow_model_times_out_within_the_step_budget(llm: ScriptedLLM) -> None:
    llm.script = [Reply("too late", delay_s=2.0)]
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        chat(llm, timeout_s=0.5).complete(ASK)
    assert time.monotonic() - started < 1.5


def test_a_malformed_body_is_reported_as_such(llm: ScriptedLLM) -> None:
    llm.script = [Reply(malformed=True)]
    with pytest.raises(LLMMalformed):
        chat(llm).complete(ASK)


def test_streaming_yields_pieces_as_they_come(llm: ScriptedLLM) -> None:
    llm.script = [Reply("one two three four", token_delay_s=0.05)]
    arrivals = []
    pieces = []
    for piece in chat(llm).stream(ASK):
        pieces.append(piece)
        arrivals.append(time.monotonic())
    assert "".join(pieces) == "one two three four" and len(pieces) == 4
    assert arrivals[-1] - arrivals[0] >= 0.1  # streamed, not delivered at once


def test_a_stream_that_breaks_off_is_an_error_after_its_pieces(llm: ScriptedLLM) -> None:
    llm.script = [Reply("one two three four five six", truncate=True)]
    received = []
    with pytest.raises(LLMError, match="broke off"):
        for piece in chat(llm).stream(ASK):
            received.append(piece)
    assert received  # what arrived was delivered


def test_a_stream_falls_back_before_its_first_token(llm: ScriptedLLM) -> None:
    llm.script = [Reply(status=503), Reply(status=503), Reply(status=503), Reply("backup words")]
    assert "".join(chat(llm, fallback_models=("backup",)).stream(ASK)) == "backup words"


def test_json_answers_are_parsed_through_code_fences() -> None:
    assert parse_json_object('```json\n{"intent": "comparison"}\n```') == {"intent": "comparison"}
    assert parse_json_object('Sure! {"a": 1}') == {"a": 1}
    with pytest.raises(LLMMalformed):
        parse_json_object("no json here")
    with pytest.raises(LLMMalformed):
        parse_json_object("{broken: }")
