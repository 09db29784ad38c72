"""How far one fetch may go: which networks it may reach, how much it may read, how long it
may take. Built once from settings, so a bad value fails at startup rather than on the first
fetch; `addresses` and `vetted_transport` enforce it, `fetch` applies it to each download.
`BrowserSettings` are the limits of a page rendered in Chromium (`fetch_browser`); they live here,
without the fetching code, so building the service imports no HTTP client.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cache

from loci import __version__

__all__ = ["MB", "BrowserSettings", "FetchPolicy"]

MB = 1024 * 1024

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class FetchPolicy:
    """Limits for one fetch. The defaults suit fetching public pages for a user.

    `allowed_networks` lists CIDRs reachable even though they are not public (an intranet wiki,
    a test server on 127.0.0.1). `allow_private` opens every non-public address instead
    (loopback, private, link-local, unique-local, …); multicast, broadcast and unspecified
    addresses stay closed either way unless listed, because nothing serves pages there.
    """

    allow_private: bool = False
    allowed_networks: tuple[str, ...] = ()
    max_bytes: int = 20 * MB
    connect_timeout: float = 10.0
    read_timeout: float = 15.0
    total_timeout: float = 20.0
    max_redirects: int = 5
    user_agent: str = f"Loci/{__version__} (+self-hosted second brain)"
    # A PEM bundle trusted in addition to the public CAs: an intranet's own certificate authority.
    ca_file: str | None = None

    def __post_init__(self) -> None:
        # Fail when the policy is built (at startup, from settings), not on the first fetch.
        parse_networks(self.allowed_networks)
        if self.max_bytes <= 0 or self.max_redirects < 0:
            raise ValueError("max_bytes must be positive and max_redirects not negative")
        if min(self.connect_timeout, self.read_timeout, self.total_timeout) <= 0:
            raise ValueError("timeouts must be positive")


@cache
def parse_networks(cidrs: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


@dataclass(frozen=True)
class BrowserSettings:
    enabled: bool = True
    executable: str | None = None  # None: the first Chromium on PATH
    timeout_s: float = 30.0  # the whole render, from navigation to the rendered HTML
    max_requests: int = 300
    max_total_bytes: int = 50 * MB
    # After the load event, how long to wait for the page's own requests to settle.
    settle_s: float = 2.0

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.settle_s < 0 or self.max_requests <= 0:
            raise ValueError("browser timeouts and limits must be positive")
