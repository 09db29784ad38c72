"""The kinds of followed place that are not folders, each a module of this package with an
`open(location, options, secret, fetch) -> Upstream` function, imported only when its kind
is used (a mail or git library is loaded by the sources that need it).

`location` is the source's address (a URL, a path); `options` the kind's own settings as the
source keeps them; `secret` a credential, already unsealed (None: none); `fetch` the fetch
policy every HTTP request of the kind goes through (the SSRF rules, size and time limits).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from loci.errors import InvalidInput
from loci.ingest.fetch_policy import FetchPolicy
from loci.upstream.base import Upstream


class Opener(Protocol):
    def __call__(
        self, location: str, options: Mapping[str, Any], secret: str | None, fetch: FetchPolicy
    ) -> Upstream: ...


@dataclass(frozen=True)
class Kind:
    name: str  # as typed: `loci sources add LOCATION --kind NAME`
    module: str  # loci.upstream.<module>
    what: str  # the place it follows, as a person knows it
    web: bool = False  # a URL fetched over HTTP(S) (the server's host allow-list applies)


KINDS: tuple[Kind, ...] = (
    Kind("feed", "feed", "an RSS, Atom or JSON feed", web=True),
    Kind("page", "pages", "a web page, or a list of them, re-checked", web=True),
    Kind("imap", "imap", "a folder of an IMAP mailbox"),
    Kind("git", "git", "a git repository (a path or a URL)"),
    Kind("webdav", "webdav", "a WebDAV folder (Nextcloud, ownCloud)", web=True),
)
BY_NAME = {k.name: k for k in KINDS}


def kind(name: str) -> Kind:
    found = BY_NAME.get(name)
    if found is None:
        known = ", ".join(k.name for k in KINDS)
        raise InvalidInput(f"no source kind {name!r}; Loci follows: folder, {known}")
    return found


def opener(name: str) -> Opener:
    """The `open` function of a kind's module."""
    module = importlib.import_module(f"loci.upstream.{kind(name).module}")
    found: Opener = module.open
    return found
