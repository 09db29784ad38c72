"""How many applications may register (RFC 7591), so that open registration cannot fill the disk.

Registering is open and costs the server a row (at most about 5 KB: `clients`' caps). Two limits:

- **per address**: `per_minute` registrations a minute and `per_hour` an hour from one client
  address — as the trusted proxy reports it (`LOCI_TRUSTED_PROXIES`); an IPv6 address counts
  by its /64, the network one household or host is given. Over it: 429 `rate_limited`.
- **for everyone**: at most `max_unused` registrations that never got a token; each is
  forgotten a day after it was made (`UNUSED_FOR_S`), so the disk registering can take is
  bounded whatever the number of addresses. Over it: 503 `temporarily_unavailable`. An
  application that connected no longer counts.

Both answer with `Retry-After`: when the oldest registration in the way leaves its window.

The counts are the registrations themselves, read in the database in the transaction that
adds the next one (`OAuthStore.register_client`, one at a time), not a tally in this process's
memory as the sign-in limiter keeps (`loci.auth.sign_in_limit`): every process of
`loci serve --workers N`, and every server sharing a PostgreSQL database, sees the same counts,
a restart forgets nothing, and no two registrations can each take the last place. The address
is kept beside the client only as long as a limit counts it: the first registration after an
hour forgets it.

The numbers are for a person, a family or a small team: an application registers once when it
is connected (some again on each connection); a few a minute and some tens an hour from one
address leave room for a household behind one router connecting its assistants, and a few
thousand unused a day is far beyond what real connections leave behind.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial

from authlib.oauth2.rfc6749 import OAuth2Error

from loci.auth.records import OAuthClient, RegistrationLoad
from loci.store.oauth_tables import OAuthStore

PER_MINUTE = 5
PER_HOUR = 50
MAX_UNUSED = 2000
UNUSED_FOR_S = 86400.0  # a registration that got no token in a day is forgotten
MINUTE_S = 60.0
HOUR_S = 3600.0
UNKNOWN_ADDRESS = "unknown"


class _Refused(OAuth2Error):  # type: ignore[misc]
    """A registration refused for now, with when to try again (`Retry-After`, in seconds)."""

    def __init__(self, description: str, retry_after_s: float) -> None:
        super().__init__(description)
        self.retry_after_s = max(1, round(retry_after_s))

    def get_headers(self) -> list[tuple[str, str]]:
        headers: list[tuple[str, str]] = super().get_headers()
        return [*headers, ("Retry-After", str(self.retry_after_s))]


class TooManyFromAddress(_Refused):
    error = "rate_limited"  # the code the API answers its own 429s with
    status_code = 429


class TooManyUnused(_Refused):
    error = "temporarily_unavailable"  # RFC 6749's code for a server that cannot, for now
    status_code = 503


@dataclass(frozen=True)
class RegistrationLimits:
    per_minute: int = PER_MINUTE
    per_hour: int = PER_HOUR
    max_unused: int = MAX_UNUSED

    def register(
        self, store: OAuthStore, client: OAuthClient, address: str | None, now: float
    ) -> OAuthClient:
        """Keep `client`, registered from `address` at `now`, if the limits allow; else raise
        TooManyFromAddress or TooManyUnused."""
        store.purge_clients(timestamp(now - UNUSED_FOR_S))
        return store.register_client(
            replace(client, created_at=timestamp(now)),
            address_key(address),
            since=timestamp(now - HOUR_S),
            admit=partial(self.admit, now=now),
        )

    def admit(self, load: RegistrationLoad, now: float) -> None:
        """Raise if one more registration, from an address that registered at `load.recent`,
        would pass a limit."""
        recent = sorted(seconds(t) for t in load.recent)
        for limit, window, span in (
            (self.per_minute, MINUTE_S, "a minute"),
            (self.per_hour, HOUR_S, "an hour"),
        ):
            inside = [t for t in recent if t > now - window]
            if len(inside) >= limit:
                raise TooManyFromAddress(
                    f"at most {limit} applications may register from one address in {span}",
                    inside[len(inside) - limit] + window - now,  # when one leaves the window
                )
        if load.unused >= self.max_unused:
            oldest = seconds(load.oldest_unused) if load.oldest_unused else now
            raise TooManyUnused(
                f"{load.unused} registered applications have not connected yet, the most this"
                " server keeps: try again later",
                oldest + UNUSED_FOR_S - now,
            )


def address_key(address: str | None) -> str:
    """What registrations are counted by: the address, or for IPv6 its /64 (one host can hold
    a whole /64, so counting its addresses apart would give it 2^64 budgets)."""
    if not address:
        return UNKNOWN_ADDRESS
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:100]  # not an IP (a test client, a Unix socket): counted as it is
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def timestamp(epoch: float) -> str:
    """`epoch` as the stores write times (`created_at`: ISO 8601 in UTC, milliseconds, Z),
    which compare as text in time order."""
    when = datetime.fromtimestamp(epoch, UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()
