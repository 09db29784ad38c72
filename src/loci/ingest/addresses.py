"""Which addresses a fetch may reach.

A second brain fetches URLs that users, agents and imported documents hand it, so a URL is
untrusted input. Only http and https URLs are fetched, and a host is refused if *any* address it
resolves to is loopback, private, link-local, multicast, reserved or otherwise not public (unless
the policy allows that network). `vetted_transport` runs this check again at connect time and
connects to exactly the address it vetted; `check_url_address` is the same check as a dry run.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING

from loci.errors import BlockedAddress, FetchError, UnsupportedSource
from loci.ingest.fetch_policy import FetchPolicy, parse_networks
from loci.ingest.host_literals import IPAddress, host_address

if TYPE_CHECKING:
    import httpx

__all__ = ["blocked_reason", "check_url_address", "classify_address"]


def check_url_address(url: str, policy: FetchPolicy) -> str:
    """Resolve `url`'s host and check every address against `policy` without connecting.

    Returns the addresses (comma-separated) it would connect to; raises UnsupportedSource for a
    URL that cannot be fetched and BlockedAddress for a forbidden host. What a dry run reports:
    the real fetch checks again at connect time, so a DNS answer that changes is still caught.
    """
    parsed = checked_url(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return ", ".join(vetted_addresses(parsed.host, port, policy))


def checked_url(url: str | httpx.URL) -> httpx.URL:
    """`url` parsed, if it is one Loci may fetch: http or https, with a host that is a name or
    an address in a form Loci reads itself (`host_literals`). The fetch checks every redirect
    hop with this too; the host's addresses are checked when connecting."""
    import httpx  # here: a command that fetches nothing (`loci list`) need not load it

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise UnsupportedSource(f"not a URL Loci can fetch: {url}") from exc
    if parsed.scheme not in ("http", "https"):
        shown = f"{parsed.scheme}:" if parsed.scheme else "a URL without a scheme"
        raise UnsupportedSource(f"only http and https URLs can be fetched, not {shown}")
    if not parsed.host:
        raise UnsupportedSource(f"URL without a host: {url}")
    host_address(parsed.host)  # a zone id, a percent-escape: refused before any lookup
    return parsed


_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
# DNS64 answers with this prefix for IPv4-only sites: judge the IPv4 address inside it.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")

# The special-purpose ranges (IANA registries), spelled out here rather than taken from
# `ipaddress.is_private`, whose tables differ between Python releases. First match wins.
_V4_RANGES: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(cidr), reason)
    for cidr, reason in (
        ("0.0.0.0/8", "unspecified"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),  # includes the cloud metadata service
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.88.99.0/24", "reserved"),  # retired 6to4 relay anycast
        ("192.0.2.0/24", "documentation"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("198.18.0.0/15", "benchmarking"),
    )
)
_V6_RANGES: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(cidr), reason)
    for cidr, reason in (
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
        ("fc00::/7", "unique local (private)"),
        ("64:ff9b:1::/48", "private"),  # local-use NAT64
        ("100::/64", "reserved"),  # discard-only
        # The client half of a Teredo address is obfuscated and the relay goes anywhere.
        ("2001::/32", "Teredo tunnel"),
        ("2001::/23", "reserved"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "reserved"),  # SRv6 segment ids
    )
)


def classify_address(address: str) -> str | None:
    """Why `address` (an IP literal) is not a public unicast address, or None if it is.

    IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by the IPv4
    address inside, since that is where the packets end up.
    """
    return _classify(_parse_ip(address))


def _classify(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        return _classify_v6(ip)
    return _classify_v4(ip)


def _classify_v4(ip: ipaddress.IPv4Address) -> str | None:
    for network, reason in _V4_RANGES:
        if ip in network:
            return reason
    # Whatever this Python's tables know beyond the list above.
    return None if ip.is_global else "non-public"


def _classify_v6(ip: ipaddress.IPv6Address) -> str | None:
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    embedded = _embedded_v4(ip)
    if embedded is not None:
        inner = _classify_v4(embedded)
        return None if inner is None else f"{inner} (inside {_embedding_name(ip)})"
    for network, reason in _V6_RANGES:
        if ip in network:
            return reason
    if ip not in _GLOBAL_UNICAST_V6:
        # Outside 2000::/3 nothing is assigned for global unicast (IPv4-compatible ::a.b.c.d,
        # unallocated space).
        return "reserved"
    return None if ip.is_global else "non-public"


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def _embedding_name(ip: ipaddress.IPv6Address) -> str:
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped IPv6"
    if ip in _NAT64:
        return "NAT64"
    return "6to4"


def _never_a_destination(ip: IPAddress) -> bool:
    """Addresses `allow_private` does not open: no web server answers there."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_v4(ip)
        if embedded is None:
            return ip.is_unspecified or ip.is_multicast
        ip = embedded
    return ip in _THIS_NETWORK or ip.is_multicast or ip == _BROADCAST


def _parse_ip(address: str) -> IPAddress:
    # getaddrinfo reports scoped IPv6 addresses as "fe80::1%eth0"; the scope is not part of it.
    return ipaddress.ip_address(address.split("%", 1)[0])


def blocked_reason(address: str, policy: FetchPolicy) -> str | None:
    """Why `policy` forbids connecting to `address` (an IP literal), or None if it may."""
    return _refusal(_parse_ip(address), policy)


def _refusal(ip: IPAddress, policy: FetchPolicy) -> str | None:
    if any(ip in network for network in parse_networks(policy.allowed_networks)):
        return None
    reason = _classify(ip)
    if reason is None:
        return None
    if policy.allow_private and not _never_a_destination(ip):
        return None
    return reason


def vetted_addresses(host: str, port: int, policy: FetchPolicy) -> list[str]:
    """Resolve `host` once and return its addresses, all of which the policy allows.

    A host that spells an address, in any form, is judged as that address and not looked up.
    """
    literal = host_address(host)
    if literal is not None:
        reason = _refusal(literal, policy)
        if reason is not None:
            shown = host if ":" in host or host == str(literal) else f"{host} ({literal})"
            raise BlockedAddress(f"refusing to fetch from {shown}: {reason} address")
        return [str(literal)]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"could not resolve {host}: {exc}") from exc
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0])
        ip = _parse_ip(address)
        reason = _refusal(ip, policy)
        if reason is not None:
            # One bad answer condemns the host: otherwise a rebinding attacker only needs
            # to list a private address second.
            shown = host if host == address else f"{host} ({address})"
            raise BlockedAddress(f"refusing to fetch from {shown}: {reason} address")
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise FetchError(f"could not resolve {host}: no addresses")
    return addresses
