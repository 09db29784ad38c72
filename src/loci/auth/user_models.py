""" "Bring your own key": each user may point Loci's answers at their own chat model.

The API key is sealed before it is stored and opened only to make a request; no response, log
line or error message carries it. The endpoint is a URL a user typed, so it is checked with
the fetch policy when it is saved (a refused address is a 400 naming `base_url`, nothing
stored), and requests to it go through the same connect-time address check as fetched pages:
a user cannot aim the server at its own loopback or private network unless the administrator
allowed that network (LOCI_FETCH_ALLOWED_NETWORKS, LOCI_FETCH_ALLOW_PRIVATE). The server's own
model (LOCI_LLM_*) is the administrator's choice and is not checked: Ollama on localhost is
the usual case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from loci.auth.records import User, UserModel
from loci.auth.secret_box import SecretBox
from loci.errors import BlockedAddress, FetchError, InvalidInput
from loci.ingest.addresses import check_url_address
from loci.ingest.fetch_policy import FetchPolicy
from loci.ingest.vetted_transport import vetted_client
from loci.llm.client import Chat, ChatSettings, OpenAICompatibleChat
from loci.store.account_tables import AccountStore


@dataclass(frozen=True)
class ModelView:
    """What a user sees of their settings: never the key, only whether one is kept."""

    base_url: str
    model: str
    fallback_models: tuple[str, ...]
    has_api_key: bool


class UserModels:
    def __init__(
        self, accounts: AccountStore, box: SecretBox, policy: FetchPolicy, timeout_s: float
    ) -> None:
        self.accounts = accounts
        self.box = box
        self.policy = policy
        self.timeout_s = timeout_s

    def view(self, user: User) -> ModelView | None:
        stored = self.accounts.user_model(user.id)
        if stored is None:
            return None
        return ModelView(
            stored.base_url, stored.model, stored.fallback_models, stored.sealed_api_key is not None
        )

    def save(
        self,
        user: User,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        fallback_models: Sequence[str] = (),
        keep_key: bool = True,
    ) -> ModelView:
        """Store the user's endpoint; `api_key` None with `keep_key` keeps the one stored, for
        the same endpoint only (InvalidInput if it was for another)."""
        try:
            parts = urlsplit(base_url.strip())
            scheme, hostname = parts.scheme, parts.hostname
        except ValueError:  # e.g. "http://[" (an unclosed IPv6 literal)
            scheme, hostname = "", None
        if scheme not in ("http", "https") or not hostname:
            raise InvalidInput("the model endpoint must be an http(s) URL")
        self._check_address(base_url.strip())
        if not model.strip():
            raise InvalidInput("name the model to use")
        endpoint = base_url.strip().rstrip("/")
        sealed = self.box.seal(api_key) if api_key else None
        if api_key is None and keep_key:
            previous = self.accounts.user_model(user.id)
            sealed = previous.sealed_api_key if previous else None
            if previous is not None and sealed is not None and previous.base_url != endpoint:
                # Whoever can point the endpoint elsewhere would receive the key as a bearer.
                raise InvalidInput(
                    f"your saved key is for {previous.base_url} and is never sent to another"
                    " address: send the key for the new one (api_key), or save it without a"
                    " key (keep_api_key false)"
                )
        fallbacks = tuple(m.strip() for m in fallback_models if m.strip())
        self.accounts.set_user_model(user.id, UserModel(endpoint, model.strip(), fallbacks, sealed))
        view = self.view(user)
        assert view is not None
        return view

    def _check_address(self, base_url: str) -> None:
        """Refuse an endpoint the policy forbids now, rather than fall back on every question.

        A host that does not resolve today is kept: the connect-time check still applies.
        """
        try:
            check_url_address(base_url, self.policy)
        except BlockedAddress as error:
            raise BlockedAddress(
                f"base_url: {error.message}; the server's administrator can allow a network "
                "with LOCI_FETCH_ALLOWED_NETWORKS"
            ) from None
        except InvalidInput as error:  # a host in no form Loci can reach (UnsupportedSource)
            raise InvalidInput(f"base_url: {error.message}") from None
        except FetchError:
            pass

    def forget(self, user: User) -> bool:
        return self.accounts.delete_user_model(user.id)

    def chat_for(self, user: User) -> Chat | None:
        """The user's own model, or None (then the server's configured model answers)."""
        stored = self.accounts.user_model(user.id)
        if stored is None:
            return None
        key = self.box.open(stored.sealed_api_key) if stored.sealed_api_key else None
        settings = ChatSettings(
            base_url=stored.base_url,
            model=stored.model,
            api_key=key,
            fallback_models=stored.fallback_models,
            timeout_s=self.timeout_s,
        )
        return OpenAICompatibleChat(settings, vetted_client(self.policy))
