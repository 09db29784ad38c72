"""What every tool module shares: the toolkit a tool runs with, argument types, error mapping.

A tool raises `ToolError` for anything it anticipated: the model reads `"<code>: <message>"`
and can correct its call. Loci's own errors (`loci.errors`) are exactly those; anything else is
a bug, which the SDK reports as a bare "Error executing tool …" and logs with its traceback.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, ParamSpec, TypeVar

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from loci.errors import LociError
from loci.llm.client import Chat, OpenAICompatibleChat
from loci.mcp.access import Caller
from loci.models import Brain, Document, is_searchable
from loci.names import NAME_SCHEMA_PATTERN
from loci.service import Loci

P = ParamSpec("P")
R = TypeVar("R")

# Who is calling, from the request's context (the transport decides how).
CallerOf = Callable[[ServerRequestContext[Any, Any]], Caller]
# Make documents searchable before a tool returns: index them in this process (stdio), or
# beside the server's worker with a time limit (HTTP). Returns the documents as they are now.
Settle = Callable[[Loci, Brain, Sequence[int]], list[Document]]

NOT_BLANK = r"[^\s\x1c-\x1f]"  # as the HTTP API: text the service would refuse as empty

BrainArg = Annotated[
    str | None,
    Field(
        max_length=64,
        pattern=NAME_SCHEMA_PATTERN,
        description="The brain to use; omit it for the default brain (list_brains names them).",
    ),
]
DocumentId = Annotated[
    int, Field(ge=1, le=2**53 - 1, description="A document id, as search or list_files gave it.")
]
PageRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        pattern=NOT_BLANK,
        description="A brain page's id (from brain_query), or its exact title or an alias.",
    ),
]
SourceRef = Annotated[
    str | None,
    Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,31}:[^\s\]|]{1,220}$",
        description="Where it came from, provider:id (e.g. slack:C01/1712345).",
    ),
]
ExpectedHash = Annotated[
    str | None,
    Field(
        pattern=r"^[0-9a-f]{64}$",
        description="The content_hash you read; if the page changed since, the edit is refused "
        "instead of overwriting it.",
    ),
]


def reading(title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)


def writing(
    title: str, *, destructive: bool = False, idempotent: bool = False, open_world: bool = False
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


def is_write(annotations: ToolAnnotations | None) -> bool:
    """A tool that is not marked read-only needs write scope (unmarked counts as writing)."""
    return annotations is None or not annotations.read_only_hint


def tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Loci's errors become tool errors the model can read and act on."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except LociError as error:
            raise ToolError(f"{error.code}: {error.message}") from error

    return run


@dataclass(frozen=True)
class Toolkit:
    """What every tool runs with, made once per server (`build_server`): the service, who is
    calling (from the request's context) and how added documents become searchable.

    Each tool module holds its tools as the methods of one class over a toolkit, and its
    `register` only offers them to the server. The SDK takes a tool's description from its
    docstring as written, indentation included: a tool moved out of its class would change what
    clients are shown."""

    loci: Loci
    caller_of: CallerOf
    settle: Settle

    def caller(self, ctx: Context) -> Caller:
        return self.caller_of(ctx.request_context)


@contextmanager
def chat_for(caller: Caller) -> Iterator[Chat | None]:
    """The caller's own model (if they set one), closed when the tool is done."""
    chat = caller.chat()
    try:
        yield chat
    finally:
        if isinstance(chat, OpenAICompatibleChat):
            chat.close()


def settle_here(loci: Loci, brain: Brain, ids: Sequence[int]) -> list[Document]:
    """Index in this process, as the CLI does (stdio: no server worker may be running)."""
    return loci.library.wait_for(brain, list(ids))


def settle_within(timeout_s: float) -> Settle:
    """Read the documents' text here too, beside the server's worker (whichever claims a job
    first runs it), until their words find them, and stop waiting after `timeout_s`; the
    server's worker embeds them afterwards (their `vectors_pending` says so meanwhile)."""

    def settle(loci: Loci, brain: Brain, ids: Sequence[int]) -> list[Document]:
        deadline = time.monotonic() + timeout_s

        def settled() -> bool:
            if time.monotonic() > deadline:
                return True
            return all(is_searchable(loci.library.document(brain, i)) for i in ids)

        loci.library.worker().drain(list(ids), settled, only_stage="text")
        return [loci.library.document(brain, i) for i in ids]

    return settle
