"""Who is calling a tool, and which brains that lets them reach.

Two kinds of caller. `loci mcp` (stdio) runs as the local owner on the local data directory, as
the CLI does. Over HTTP every request carries a Loci API token; the caller is that token's user
narrowed by the token (its brains, its scope), resolved by the same `Accounts` checks the HTTP
API uses — a brain the token may not read is "not found", whatever exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from loci.auth.access import Need, Principal
from loci.auth.accounts import Accounts
from loci.errors import NotFound
from loci.llm.client import Chat
from loci.models import Brain
from loci.service import Loci


class Caller(Protocol):
    """What a tool needs to know about whoever called it."""

    @property
    def can_write(self) -> bool: ...

    @property
    def actor(self) -> str:
        """The name graph writes and captures record as their author."""
        ...

    @property
    def user_id(self) -> int | None: ...

    def brain(self, name: str | None, need: Need) -> Brain:
        """The brain `name` (None: the default one) if the caller may `need` it."""
        ...

    def brains(self) -> list[tuple[Brain, str]]:
        """Every brain the caller can read, with their role in it."""
        ...

    def chat(self) -> Chat | None:
        """The chat model answers use for this caller (None: the configured one)."""
        ...


@dataclass(frozen=True)
class LocalCaller:
    """The local owner (stdio): every brain of the data directory, read and write."""

    loci: Loci
    default: str | None = None  # the brain used when a tool names none (`loci mcp --brain`)
    actor: str = "mcp"
    can_write: bool = True
    user_id: int | None = None

    def brain(self, name: str | None, need: Need) -> Brain:
        default = self.default or self.loci.settings.default_brain
        if name is None or name == default:
            return self.loci.brain(default)  # created on first use, as the CLI does
        try:
            return self.loci.store.get_brain(name)
        except NotFound:
            # A typo must not create a brain; the names help the model correct itself.
            names = ", ".join(b.name for b in self.loci.brains()) or "none yet"
            raise NotFound(f"no brain named {name!r} (brains: {names})") from None

    def brains(self) -> list[tuple[Brain, str]]:
        return [(b, "owner") for b in self.loci.brains()]

    def chat(self) -> Chat | None:
        return None


@dataclass(frozen=True)
class TokenCaller:
    """A caller over HTTP: a principal authenticated from its bearer token."""

    principal: Principal
    accounts: Accounts
    default_brain: str
    own_chat: Callable[[], Chat | None]

    @property
    def can_write(self) -> bool:
        return self.principal.can_write

    @property
    def actor(self) -> str:
        return self.principal.user.name

    @property
    def user_id(self) -> int | None:
        return self.principal.user.id

    def brain(self, name: str | None, need: Need) -> Brain:
        if name is not None:
            return self.accounts.brain(self.principal, name, need)[0]
        readable = self.accounts.readable_brains(self.principal)
        names = [b.name for b, _ in readable]
        if self.default_brain not in names and self._owns_workspace():
            # The workspace's owner on a fresh server: the default brain starts here, as it
            # does for the local CLI.
            self.accounts.store.ensure_brain(self.default_brain)
            names.append(self.default_brain)
        if self.default_brain in names:
            return self.accounts.brain(self.principal, self.default_brain, need)[0]
        if len(names) == 1:  # a token limited to one brain: that one is its default
            return self.accounts.brain(self.principal, names[0], need)[0]
        listed = ", ".join(names) or "none"
        raise NotFound(f"name a brain: this token reaches {listed}")

    def _owns_workspace(self) -> bool:
        token = self.principal.token
        if not (self.principal.user.is_admin and token.brain_ids is None and self.can_write):
            return False
        try:
            self.accounts.store.get_brain(self.default_brain)
        except NotFound:
            return True
        return False  # it exists and is someone else's: not ours to claim

    def brains(self) -> list[tuple[Brain, str]]:
        return [(b, str(role)) for b, role in self.accounts.readable_brains(self.principal)]

    def chat(self) -> Chat | None:
        return self.own_chat()
