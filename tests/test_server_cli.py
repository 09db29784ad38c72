"""`loci serve`, `loci users` and `loci tokens` as a person runs them, in real processes."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from loci.embed.base import Embedder
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer, free_port
from tests.support.services import make_service
from tests.support.waiting import wait_up
from tests.support.web_pages import site  # noqa: F401  (fixture)


def _serve(home: Path, port: int, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "loci", "serve", "--port", str(port), "--no-worker", *options],
        env={**os.environ, "LOCI_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_first_start_creates_the_owner_and_shows_the_token_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = _serve(home, port)
    try:
        wait_up(url, first)
        assert first.stdout is not None
        token = first.stdout.readline().strip()
        assert token.startswith("loci_")
        saved = home / "owner-token"
        assert saved.read_text().strip() == token
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        me = httpx.get(url + "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert me.status_code == 200 and me.json()["user"]["is_admin"] is True
    finally:
        first.terminate()
        first.wait(timeout=30)

    second = _serve(home, port)
    try:
        wait_up(url, second)
    finally:
        second.terminate()
        out, _ = second.communicate(timeout=30)
    assert "loci_" not in out  # the token is shown on the first start only


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files: what a person makes with openssl."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def test_serve_https_with_a_certificate_gives_a_secure_session_cookie(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    trust = ssl.create_default_context(cafile=str(cert))
    process = _serve(
        tmp_path / "home", port, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)
    )
    try:
        wait_up(url, process, verify=trust)
        assert process.stdout is not None
        token = process.stdout.readline().strip()
        signed_in = httpx.post(url + "/api/v1/session", json={"token": token}, verify=trust)
        assert signed_in.status_code == 200, signed_in.text
        cookie = signed_in.headers["set-cookie"].lower()
        assert "loci_session=" in cookie and "; secure" in cookie and "httponly" in cookie
        with pytest.raises(httpx.TransportError):  # it speaks https only
            httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=5)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert f"Loci is serving on https://127.0.0.1:{port}/" in errors


def test_serve_needs_both_halves_of_a_certificate(tmp_path: Path) -> None:
    cert, _ = _self_signed(tmp_path)
    half = run_cli("serve", "--ssl-certfile", str(cert), home=tmp_path / "home", timeout=60)
    assert half.returncode == 1
    assert "https needs both --ssl-certfile and --ssl-keyfile" in half.stderr


def test_users_and_tokens_commands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("tokens", "list", home=home).returncode == 1  # no accounts yet: clear error
    added = run_cli("users", "add", "carol", "--admin", "--json", home=home)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["secret"].startswith("loci_")
    assert run_cli("users", "add", "carol", home=home).returncode == 1  # taken
    run_cli("add", "--no-wait", str(Path(__file__).parent / "test_api.py"), "-b", "work", home=home)

    made = run_cli(
        "tokens", "create", "--name", "gpt", "--read-only", "--brain", "work",
        "--expires-days", "7", "--json", home=home,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    assert token["scope"] == "read" and token["brain_ids"] and token["expires_at"]

    listed = json.loads(run_cli("tokens", "list", "--json", home=home).stdout)
    assert {t["name"] for t in listed} == {"sign-in", "gpt"}
    assert all("secret" not in t and "secret_hash" not in t for t in listed)
    assert run_cli("tokens", "revoke", str(token["id"]), home=home).returncode == 0
    assert run_cli("tokens", "revoke", str(token["id"]), home=home).returncode == 3  # not found
    listed = json.loads(run_cli("tokens", "list", "--json", home=home).stdout)
    assert [t["revoked_at"] is not None for t in listed if t["name"] == "gpt"] == [True]


def test_add_a_web_page_through_the_api(
    site: str,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    loci = make_service(tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"])
    server = LiveServer(loci).start()
    try:
        with server.client() as api:
            api.post("/brains", json={"name": "web"})
            added = api.post("/brains/web/urls", json={"url": f"{site}/kelp", "tags": ["sea"]})
            assert added.status_code == 202
            doc = server.wait_ready(api, "web", added.json()["document"]["id"])
            assert doc["kind"] == "web" and doc["source_url"] == f"{site}/kelp"
            assert doc["title"] == "How kelp forests grow"
            challenge = api.post("/brains/web/urls", json={"url": f"{site}/challenge"})
            assert challenge.status_code == 422
            assert challenge.json()["error"] == "challenge_page"
            private = api.post("/brains/web/urls", json={"url": f"{site}/to-private"})
            assert private.status_code == 400 and private.json()["error"] == "blocked_address"
            assert len(api.get("/brains/web/files").json()) == 1  # nothing junk was stored
    finally:
        server.stop()


@pytest.mark.parametrize("visibility", ["restricted", "workspace"])
def test_cli_made_brains_belong_to_admins_until_shared(
    tmp_path: Path, embedder: Embedder, visibility: str
) -> None:
    loci = make_service(tmp_path / "home", embedder)
    loci.brain("local")  # made by the CLI before any account existed
    server = LiveServer(loci).start()
    try:
        bob, bob_token = server.accounts.add_user("bob")
        with server.client() as owner:
            assert owner.get("/brains/local").json()["role"] == "owner"
            assert owner.patch("/brains/local", json={"visibility": visibility}).status_code == 200
            # sharing claims the brain for the admin first, so sharing never locks them out
            owner.put("/brains/local/members/bob", json={"role": "viewer"})
            members = {m["user"]: m["role"] for m in owner.get("/brains/local/members").json()}
            assert members == {"owner": "owner", "bob": "viewer"}
        with server.client(bob_token.secret) as api:
            assert api.get("/brains/local").json()["role"] == "viewer"
            assert api.post("/brains/local/notes", json={"text": "x"}).status_code == 403
    finally:
        server.stop()
    assert bob.is_admin is False


def test_serve_with_several_processes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "loci", "serve", "--port", str(port), "--workers", "2",
         "--no-worker"],
        env={**os.environ, "LOCI_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        wait_up(url, process)
        assert process.stdout is not None
        token = process.stdout.readline().strip()
        headers = {"Authorization": f"Bearer {token}"}
        made = httpx.post(url + "/api/v1/brains", json={"name": "shared"}, headers=headers)
        assert made.status_code == 201
        # every process serves the same data directory
        for _ in range(6):
            names = [b["name"] for b in httpx.get(url + "/api/v1/brains", headers=headers).json()]
            assert names == ["shared"]
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=60)
    assert errors.count("Started server process") == 2
