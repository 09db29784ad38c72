"""The chat model a request uses: the caller's own, if they set one (else None: the server's)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from loci.auth.access import Principal
from loci.auth.user_models import UserModels
from loci.llm.client import Chat, OpenAICompatibleChat


@contextmanager
def own_model(models: UserModels, principal: Principal) -> Iterator[Chat | None]:
    """The caller's own model, if they set one, closed when the request is done."""
    chat = models.chat_for(principal.user)
    try:
        yield chat
    finally:
        if isinstance(chat, OpenAICompatibleChat):
            chat.close()
