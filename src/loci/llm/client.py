"""A chat client for OpenAI-compatible endpoints (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp).

    POST {base_url}/chat/completions
    {"model": …, "messages": [{"role": …, "content": …}], "stream": false|true, …}

Each call is one pipeline step with a time budget (10 s by default: seven steps without timeouts
would make a person wait forever on one stuck call). Within the budget a 429 or 5xx is retried,
honouring `Retry-After`; a model that still fails, or that the server does not know, hands over to
the next model of the fallback list. Streaming falls back only before the first token: once words
reached the reader, a broken stream is an error the caller handles.

`complete_with_tools` sends OpenAI-style function tools (`tools`) and reads the `tool_calls` the
model answers with, for agent loops; it retries and falls back exactly as `complete` does.

The API key is sent as a bearer header and never appears in an error message or a log line."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict

from loci.errors import BlockedAddress, LLMError, LLMMalformed, LLMTimeout
from loci.http_retry import (
    backoff_delay,
    describe_failure,
    describe_transport,
    is_retryable,
    retry_after_seconds,
)

if TYPE_CHECKING:  # imported where used: every command imports this module, few call out
    import httpx

log = logging.getLogger(__name__)


class Message(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatSettings:
    base_url: str
    model: str
    api_key: str | None = None
    fallback_models: tuple[str, ...] = ()
    timeout_s: float = 10.0  # per step: the whole call, retries and fallbacks included
    max_retries: int = 2
    backoff_base_s: float = 0.5
    extra_headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    text: str
    model: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it: the caller parses and judges it


@dataclass(frozen=True)
class ToolCompletion:
    text: str  # "" when the model only called tools
    tool_calls: tuple[ToolCall, ...]
    model: str

    def as_message(self) -> dict[str, Any]:
        """The assistant turn to send back with the tools' results."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]  # fmt: skip
        return message


# A message of a tool conversation: Message, an assistant turn with `tool_calls`, or a
# `{"role": "tool", "tool_call_id": …, "content": …}` result.
ToolMessage = Mapping[str, Any]


class Chat(Protocol):
    """The seam to a chat model; the pipeline depends on this, tests may pass another."""

    @property
    def model(self) -> str: ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        json_object: bool = False,
        timeout_s: float | None = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
    ) -> Iterator[str]: ...

    def complete_with_tools(
        self,
        messages: Sequence[ToolMessage],
        tools: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
    ) -> ToolCompletion: ...


class _Refused(Exception):
    """This model will not answer (unknown model, bad request): try the next one."""


class OpenAICompatibleChat:
    def __init__(self, settings: ChatSettings, client: httpx.Client | None = None) -> None:
        import httpx

        self.settings = settings
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        headers = {"Accept": "application/json", **settings.extra_headers}
        if settings.api_key:
            headers["Authorization"] = f"Bearer {settings.api_key}"
        self._client = client or httpx.Client(headers=headers)
        if client is not None:
            self._client.headers.update(headers)

    @property
    def model(self) -> str:
        return self.settings.model

    def close(self) -> None:
        self._client.close()

    # plain completions --------------------------------------------------------------------
    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        json_object: bool = False,
        timeout_s: float | None = None,
    ) -> Completion:
        deadline = time.monotonic() + (timeout_s or self.settings.timeout_s)
        problems: list[str] = []
        for model in self._models():
            payload = self._payload(model, messages, max_tokens, stream=False)
            if json_object:
                payload["response_format"] = {"type": "json_object"}
            try:
                response = self._post(payload, deadline, problems, model)
            except _Refused:
                continue
            return Completion(_message_text(response, model), model)
        raise self._failure(problems, deadline)

    # tool calls ---------------------------------------------------------------------------
    def complete_with_tools(
        self,
        messages: Sequence[ToolMessage],
        tools: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
    ) -> ToolCompletion:
        """One step of an agent loop: the model answers with text, tool calls, or both."""
        deadline = time.monotonic() + (timeout_s or self.settings.timeout_s)
        problems: list[str] = []
        for model in self._models():
            payload = self._payload(model, messages, max_tokens, stream=False)
            if tools:
                payload["tools"] = [dict(t) for t in tools]
                payload["tool_choice"] = "auto"
            try:
                response = self._post(payload, deadline, problems, model)
            except _Refused:
                continue
            return _tool_completion(response, model)
        raise self._failure(problems, deadline)

    # streamed completions -----------------------------------------------------------------
    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
    ) -> Iterator[str]:
        """Yield the answer's text as it arrives. The budget bounds the wait for the first
        token and every gap between tokens, not the length of the whole answer."""
        budget = timeout_s or self.settings.timeout_s
        deadline = time.monotonic() + budget
        problems: list[str] = []
        for model in self._models():
            payload = self._payload(model, messages, max_tokens, stream=True)
            started = False
            try:
                for piece in self._stream_once(payload, deadline, budget, problems, model):
                    started = True
                    yield piece
                return
            except _Refused:
                if started:
                    raise LLMError(f"the answer from {model} broke off mid-way") from None
                continue
        raise self._failure(problems, deadline)

    def _stream_once(
        self,
        payload: dict[str, Any],
        deadline: float,
        budget: float,
        problems: list[str],
        model: str,
    ) -> Iterator[str]:
        import httpx

        for attempt in range(self.settings.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Refused()
            timeout = httpx.Timeout(connect=remaining, read=budget, write=remaining, pool=remaining)
            finished = False
            yielded = False
            try:
                with self._client.stream("POST", self._url, json=payload, timeout=timeout) as r:
                    if not r.is_success:
                        r.read()
                        self._judge(r, attempt, deadline, problems, model)
                        continue
                    for line in r.iter_lines():
                        if not line.startswith("data:"):
                            continue
                        data = line[5:].strip()
                        if data == "[DONE]":
                            finished = True
                            break
                        piece = _delta_text(data, model)
                        if piece:
                            yielded = True
                            yield piece
            except BlockedAddress as error:
                raise _unreachable(error) from None
            except httpx.TimeoutException:
                problems.append(f"{model}: no token within {budget:.0f} s")
                if yielded:
                    raise LLMTimeout(f"{model} stopped answering for {budget:.0f} s") from None
                raise _Refused() from None
            except httpx.TransportError as error:
                problems.append(f"{model}: {describe_transport(error)}")
                if yielded:
                    raise LLMError(f"the answer from {model} broke off mid-way") from None
                self._sleep(attempt, None, deadline)
                continue
            if not finished:
                raise LLMError(f"the answer from {model} broke off mid-way (no end marker)")
            return
        raise _Refused()

    # shared -------------------------------------------------------------------------------
    def _models(self) -> list[str]:
        return list(dict.fromkeys((self.settings.model, *self.settings.fallback_models)))

    @staticmethod
    def _payload(
        model: str,
        messages: Sequence[Message] | Sequence[ToolMessage],
        max_tokens: int | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in messages],
            "temperature": 0,
            "stream": stream,
        }
        if max_tokens:
            payload["max_tokens"] = max_tokens
        return payload

    def _post(
        self, payload: dict[str, Any], deadline: float, problems: list[str], model: str
    ) -> httpx.Response:
        import httpx

        for attempt in range(self.settings.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                response = self._client.post(self._url, json=payload, timeout=remaining)
            except BlockedAddress as error:
                raise _unreachable(error) from None
            except httpx.TimeoutException:
                problems.append(f"{model}: no answer in time")
                break
            except httpx.TransportError as error:
                problems.append(f"{model}: {describe_transport(error)}")
                self._sleep(attempt, None, deadline)
                continue
            if response.is_success:
                return response
            self._judge(response, attempt, deadline, problems, model)
        raise _Refused()

    def _judge(
        self,
        response: httpx.Response,
        attempt: int,
        deadline: float,
        problems: list[str],
        model: str,
    ) -> None:
        """After a failed response: wait and return (retry), or raise `_Refused` / `LLMError`."""
        problems.append(f"{model}: {describe_failure(response)}")
        if response.status_code in (401, 403):
            # The key is wrong for every model: no fallback will do better.
            raise LLMError(f"the chat endpoint refused the API key ({response.status_code})")
        if not is_retryable(response.status_code):
            raise _Refused()
        if attempt >= self.settings.max_retries:
            raise _Refused()
        self._sleep(attempt, retry_after_seconds(response), deadline)

    def _sleep(self, attempt: int, retry_after: float | None, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        delay = backoff_delay(attempt, retry_after, self.settings.backoff_base_s, remaining)
        if delay >= remaining:
            raise _Refused()
        log.info("chat request failed; retrying in %.2fs", delay)
        time.sleep(delay)

    def _failure(self, problems: list[str], deadline: float) -> LLMError:
        detail = "; ".join(problems[-3:]) or "no response"
        if time.monotonic() >= deadline - 0.05:
            return LLMTimeout(f"the chat model did not answer within the time budget ({detail})")
        return LLMError(f"the chat model failed: {detail}")


def _unreachable(error: BlockedAddress) -> LLMError:
    return LLMError(f"the chat endpoint is at an address this server may not reach: {error}")


def _message_text(response: httpx.Response, model: str) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMMalformed(f"{model} returned a body that is not a chat completion") from None
    if not isinstance(content, str):
        raise LLMMalformed(f"{model} returned no text")
    return content


def _tool_completion(response: httpx.Response, model: str) -> ToolCompletion:
    try:
        message = response.json()["choices"][0]["message"]
        content = message.get("content") or ""
        raw_calls = message.get("tool_calls") or []
        calls = []
        for number, raw in enumerate(raw_calls):
            function = raw["function"]
            arguments = function.get("arguments")
            if not isinstance(arguments, str):  # some servers send the object itself
                arguments = json.dumps(arguments if arguments is not None else {})
            calls.append(
                ToolCall(str(raw.get("id") or f"call_{number}"), str(function["name"]), arguments)
            )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise LLMMalformed(f"{model} returned a body that is not a chat completion") from None
    if not isinstance(content, str):
        raise LLMMalformed(f"{model} returned a message whose content is not text")
    return ToolCompletion(content, tuple(calls), model)


def _delta_text(data: str, model: str) -> str:
    try:
        choice = json.loads(data)["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMMalformed(f"{model} streamed a chunk that is not a completion delta") from None
    content = (choice.get("delta") or {}).get("content")
    return content if isinstance(content, str) else ""


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer, tolerating a Markdown code fence around it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end <= start:
        raise LLMMalformed("the model's answer holds no JSON object")
    try:
        value = json.loads(body[start : end + 1])
    except ValueError:
        raise LLMMalformed("the model's answer is not valid JSON") from None
    if not isinstance(value, dict):
        raise LLMMalformed("the model's answer is not a JSON object")
    return value
