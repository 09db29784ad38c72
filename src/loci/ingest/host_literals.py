"""What IP address a URL's host spells, in every form something on the way would read as one.

A host that is an address must be judged as that address, never handed to the resolver as a
name: glibc's resolver reads "2130706433", "0x7f.1" and "0177.0.0.1" as 127.0.0.1, browsers
do the same and also decode percent-escapes in hosts, and an IPv6 zone id ("[fe80::1%25eth0]")
names an interface of this machine. So a host is read here first:

- an IPv6 literal with a zone id, or any percent-escape that decodes to an address, is refused
  outright (BlockedAddress), whatever the policy: no public page needs either;
- any other percent-escape in a host is not a host name at all (UnsupportedSource);
- the legacy IPv4 forms (one to four dot-separated parts, each decimal, 0-octal or 0x-hex, an
  optional trailing dot) are converted to the address they mean;
- anything else is a name, for the resolver.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

from loci.errors import BlockedAddress, UnsupportedSource

__all__ = ["IPAddress", "host_address", "is_loopback_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_IPV4_PART = r"(?:0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)"
_LEGACY_IPV4 = re.compile(rf"{_IPV4_PART}(?:\.{_IPV4_PART}){{0,3}}\.?", re.IGNORECASE)


def host_address(host: str) -> IPAddress | None:
    """The address `host` (a URL's host, IPv6 without brackets) spells, or None for a name.

    Raises BlockedAddress for a zone id or a percent-encoded address, UnsupportedSource for a
    host that is neither a valid address nor a valid name in the forms above.
    """
    if ":" in host:
        return _ipv6(host)
    if "%" in host:
        decoded = unquote(host)
        if decoded != host and _address(decoded) is not None:
            raise BlockedAddress(
                f"refusing to fetch from {host}: a percent-encoded address ({decoded}); "
                "write the host plainly"
            )
        raise UnsupportedSource(f"a host name cannot contain percent-escapes: {host}")
    return _address(host)


def _ipv6(host: str) -> ipaddress.IPv6Address:
    address, percent, zone = host.partition("%")
    if percent:
        shown = unquote(f"%{zone}").removeprefix("%")  # "%25eth0" in a URL, "%eth0" meant
        raise BlockedAddress(
            f"refusing to fetch from [{host}]: an IPv6 zone id ({shown or 'empty'}) names a "
            "network interface of this machine"
        )
    try:
        return ipaddress.IPv6Address(address)
    except ValueError as exc:
        raise UnsupportedSource(f"not a valid IPv6 address: [{host}]") from exc


def _address(host: str) -> IPAddress | None:
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            return None
    if not _LEGACY_IPV4.fullmatch(host):
        return None
    parts = [_number(part) for part in host.removesuffix(".").split(".")]
    *leading, last = parts
    # As inet_aton: the last part fills every byte the leading ones leave.
    if any(part > 0xFF for part in leading) or last >= 256 ** (4 - len(leading)):
        raise UnsupportedSource(f"not a valid IPv4 address: {host}")
    value = last
    for shift, part in enumerate(reversed(leading), start=4 - len(leading)):
        value |= part << (8 * shift)
    return ipaddress.IPv4Address(value)


def _number(part: str) -> int:
    lowered = part.lower()
    if lowered.startswith("0x"):
        return int(lowered[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part)


def is_loopback_host(host: str) -> bool:
    """`host` is this machine (localhost, or an address in 127.0.0.0/8 or ::1, in any form
    `host_address` reads): plain text to it never crosses a network."""
    if host.lower() == "localhost":
        return True
    try:
        address = host_address(host)
    except (BlockedAddress, UnsupportedSource):
        return False
    return address is not None and address.is_loopback
