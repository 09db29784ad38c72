"""Behind a reverse proxy: X-Forwarded-Proto and -For are believed from LOCI_TRUSTED_PROXIES
only, so the session cookie is `Secure` when the browser's request was https — in-process, with
the ASGI client address set as a proxy's or a stranger's would be."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from starlette.testclient import TestClient

from loci.api.deps import SESSION_COOKIE
from loci.app import build_api
from loci.auth.accounts import Accounts
from loci.config import Settings, load_settings
from loci.service import Loci

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

HTTPS = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.20"}


SignIn = Callable[..., list[str]]


@pytest.fixture
def sign_in(loci: Loci, tmp_path: Path) -> SignIn:
    """`sign_in(client, headers, **settings)`: sign in with a token from address `client`
    through the app `loci serve` builds from `settings`; the session cookie's attributes."""
    issued = Accounts(loci.store).bootstrap_owner("owner")
    assert issued is not None

    def attributes(client: str, headers: dict[str, str], **settings: Any) -> list[str]:
        app = build_api(Settings(home=tmp_path / "home", **settings), loci, run_worker=False)
        web = TestClient(app, base_url="http://loci.example.org", client=(client, 40000))
        signed_in = web.post("/api/v1/session", json={"token": issued.secret}, headers=headers)
        assert signed_in.status_code == 200, signed_in.text
        cookie = next(c for c in signed_in.headers.get_list("set-cookie") if SESSION_COOKIE in c)
        return [part.strip().lower() for part in cookie.split(";")]

    return attributes


def test_https_through_the_trusted_proxy_gets_a_secure_cookie(sign_in: SignIn) -> None:
    assert "secure" in sign_in("127.0.0.1", HTTPS)  # the default proxy
    assert "secure" not in sign_in("127.0.0.1", {})  # plain http via it


def test_a_stranger_saying_https_is_not_believed(sign_in: SignIn) -> None:
    attributes = sign_in("203.0.113.7", HTTPS)
    assert "secure" not in attributes and "httponly" in attributes
    # Trusting no one: not even the local address is believed.
    assert "secure" not in sign_in("127.0.0.1", HTTPS, trusted_proxies=[])


def test_a_network_of_proxies(sign_in: SignIn) -> None:
    proxies = ["10.0.0.0/8", "2001:db8::/32"]
    for proxy in ("10.20.30.40", "2001:db8::7"):
        assert "secure" in sign_in(proxy, HTTPS, trusted_proxies=proxies)
    assert "secure" not in sign_in("11.0.0.1", HTTPS, trusted_proxies=proxies)
    assert "secure" not in sign_in("127.0.0.1", HTTPS, trusted_proxies=proxies)


def test_trusted_proxies_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCI_HOME", str(tmp_path))
    assert load_settings().trusted_proxies == ["127.0.0.1"]
    monkeypatch.setenv("LOCI_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.5")
    assert load_settings().trusted_proxies == ["10.0.0.0/8", "192.168.1.5"]
    monkeypatch.setenv("LOCI_TRUSTED_PROXIES", "")
    assert load_settings().trusted_proxies == []
    monkeypatch.setenv("LOCI_TRUSTED_PROXIES", "10.0.0.0/8,nginx")
    with pytest.raises(ValidationError, match="'nginx' is not an IP address or network"):
        load_settings()
