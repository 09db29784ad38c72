"""Signed webhooks: a provider pushes items to `POST /brains/{brain}/sources/{provider}` signed
with a per-integration secret instead of carrying a Loci token.

A secret belongs to one brain and one provider, is random (`whsec_…`, 256 bits), is shown once
when created, and is stored sealed with the server's key: checking an HMAC needs the secret
itself, so a hash would not do. Several may be live at once, to rotate without a gap. Whether a
request is signed, fresh and untouched is decided in `loci.integrations.signing`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from loci.auth.secret_box import SecretBox
from loci.auth.secrets import new_secret, shown_prefix
from loci.curate.items import PROVIDER
from loci.errors import InvalidInput, NotFound, Unauthenticated
from loci.integrations.records import WebhookSecret
from loci.integrations.signing import verify_webhook
from loci.models import Brain
from loci.store.base import Store

SECRET_PREFIX = "whsec_"
SIGNATURE_HEADER = "X-Loci-Signature"


@dataclass(frozen=True)
class IssuedWebhookSecret:
    """A secret as created: the only moment it exists outside the store's seal."""

    record: WebhookSecret
    secret: str


class Webhooks:
    def __init__(
        self, store: Store, box: SecretBox, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.box = box
        self.clock = clock

    def create(self, brain: Brain, provider: str) -> IssuedWebhookSecret:
        if not PROVIDER.match(provider):
            raise InvalidInput(
                f"provider {provider!r} must be a lowercase slug (a-z, 0-9, '-', '_'), "
                "at most 32 characters"
            )
        secret = new_secret(SECRET_PREFIX)
        record = self.store.integrations.create_webhook_secret(
            brain.id, provider, shown_prefix(secret), self.box.seal(secret)
        )
        return IssuedWebhookSecret(record, secret)

    def list(self, brain: Brain | None = None) -> list[WebhookSecret]:
        return self.store.integrations.webhook_secrets(brain.id if brain else None)

    def revoke(self, secret_id: int) -> None:
        if not self.store.integrations.revoke_webhook_secret(secret_id, self.clock()):
            raise NotFound(f"no live webhook secret with id {secret_id}")

    def verify(self, brain_name: str, provider: str, header: str | None, body: bytes) -> Brain:
        """The brain a correctly signed push goes to; `Unauthenticated` otherwise — the same
        answer for a brain that does not exist or has no secret for this provider."""
        try:
            brain = self.store.get_brain(brain_name)
        except NotFound:
            brain = None
        sealed = self.store.integrations.sealed_webhook_secrets(brain.id, provider) if brain else []
        verify_webhook([self.box.open(s) for s in sealed], header, body, self.clock())
        if brain is None:  # unreachable: no secrets never verify; kept for the type checker
            raise Unauthenticated("the request's signature does not match")
        return brain
