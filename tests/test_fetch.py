"""The URL fetcher against a real HTTP server on 127.0.0.1.

Every test here keeps its packets on loopback: refusals must happen before any connection, and
`loopback_only` turns an attempt to connect anywhere else into a test failure instead of a packet.
Host names other than "localhost" are answered by a scripted resolver, never by DNS.
"""

from __future__ import annotations

import contextlib
import gzip
import ipaddress
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from loci import __version__
from loci.errors import BlockedAddress, ChallengePage, FetchError, UnsupportedSource
from loci.ingest.addresses import blocked_reason, classify_address
from loci.ingest.fetch import fetch, fetch_web_page
from loci.ingest.fetch_policy import FetchPolicy
from tests.support.loopback import Loopback, QuietHandler

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

LOOPBACK = FetchPolicy(allowed_networks=("127.0.0.1/32",))

ARTICLE = (
    "<!doctype html><html><head><title>Memory palaces</title></head><body><article>"
    "<h1>Memory palaces</h1>"
    + "<p>A walk through a familiar house gives every fact a place to wait.</p>" * 40
    + "</article></body></html>"
).encode()

CLOUDFLARE_CHALLENGE = b"""<!DOCTYPE html><html><head><title>Just a moment...</title></head>
<body><h2>Verifying you are human. This may take a few seconds.</h2><noscript>Enable JavaScript
and cookies to continue</noscript><script>window._cf_chl_opt={cvId:'3',cType:'managed'};
</script></body></html>"""

JS_SHELL = b"""<!doctype html><html><head><title>App</title>
<script defer src="/static/js/main.js"></script></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
</body></html>"""

ACCESS_DENIED = b"""<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>
You don't have permission to access "http&#58;&#47;&#47;example&#46;com&#47;" on this server.<P>
Reference&#32;&#35;18&#46;5e2c1cb8&#46;1700000000&#46;1a2b3c4d</BODY></HTML>"""

NGINX_FORBIDDEN = b"""<html><head><title>403 Forbidden</title></head><body>
<center><h1>403 Forbidden</h1></center><hr><center>nginx</center></body></html>"""


# --- a real server ----------------------------------------------------------------------------


@dataclass
class Seen:
    path: str
    headers: dict[str, str]


@dataclass
class Server:
    """What the fixture site saw, and the means to reach it."""

    web: Loopback = field(init=False)
    requests: list[Seen] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)  # TLS SNI, as received
    release: threading.Event = field(default_factory=threading.Event)  # wakes slow handlers

    @property
    def port(self) -> int:
        return self.web.port

    @property
    def connections(self) -> int:
        """TCP connections accepted, not just requests."""
        return len(self.web.connections)

    def url(self, path: str = "/article", host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"


class _Handler(QuietHandler):
    site: ClassVar[Server]

    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        self.site.requests.append(Seen(self.path, dict(self.headers.items())))
        route = ROUTES.get(self.path.split("?", 1)[0])
        if route is None:
            self.send(404, b"<html><body>not here</body></html>")
            return
        # The fetcher hangs up after a timeout or a size cut, as it should.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            route(self)

    def _redirect(self, location: str, status: int = 302) -> None:
        self.send(status, b"", headers={"Location": location})


@contextlib.contextmanager
def _serve(tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    site = Server()

    class Handler(_Handler):
        pass

    Handler.site = site
    with Loopback(Handler, tls=tls) as web:
        site.web = web
        try:
            yield site
        finally:
            site.release.set()


def _slow(handler: _Handler) -> None:
    handler.site.release.wait(10)
    handler.send(200, ARTICLE)


def _drip(handler: _Handler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    for _ in range(100000):
        if handler.site.release.wait(0.05):
            return
        handler.wfile.write(b"x")
        handler.wfile.flush()


def _big_chunked(handler: _Handler) -> None:
    # HTTP/1.0 without Content-Length: the body runs until the server closes.
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.end_headers()
    for _ in range(64):
        handler.wfile.write(b"y" * 64 * 1024)


GZIP_BOMB = gzip.compress(b"\0" * 50 * 1024 * 1024)  # ~50 KB on the wire, 50 MB inflated

ROUTES: dict[str, Callable[[_Handler], None]] = {
    "/article": lambda h: h.send(200, ARTICLE, headers={"ETag": '"v1"', "X-Other": "no"}),
    "/text": lambda h: h.send(200, "café".encode("latin-1"), "text/plain; charset=ISO-8859-1"),
    "/markdown": lambda h: h.send(200, b"# Title\n", "text/markdown"),
    "/pdf": lambda h: h.send(200, b"%PDF-1.4\n%%EOF\n", "application/pdf"),
    "/binary": lambda h: h.send(200, b"\x00\x01\x02", "application/octet-stream"),
    "/json": lambda h: h.send(200, b"{}", "application/json"),
    "/untyped": lambda h: h.send(200, b"what am I", None),
    "/cloudflare": lambda h: h.send(503, CLOUDFLARE_CHALLENGE, headers={"Server": "cloudflare"}),
    "/js-shell": lambda h: h.send(200, JS_SHELL),
    "/denied": lambda h: h.send(403, ACCESS_DENIED, headers={"Server": "AkamaiGHost"}),
    "/forbidden": lambda h: h.send(403, NGINX_FORBIDDEN),
    "/broken": lambda h: h.send(500, b"<html><body>oops</body></html>"),
    "/gzip": lambda h: h.send(200, gzip.compress(ARTICLE), headers={"Content-Encoding": "gzip"}),
    "/gzip-bomb": lambda h: h.send(200, GZIP_BOMB, "text/plain", {"Content-Encoding": "gzip"}),
    "/brotli": lambda h: h.send(200, b"\x0b\x02\x80hi\x03", headers={"Content-Encoding": "br"}),
    "/big": lambda h: h.send(200, b"z" * (2 * 1024 * 1024), "text/plain"),
    "/big-chunked": _big_chunked,
    "/slow": _slow,
    "/drip": _drip,
    "/redirect/3": lambda h: h._redirect("/redirect/2", 301),
    "/redirect/2": lambda h: h._redirect(h.site.url("/redirect/1"), 307),
    "/redirect/1": lambda h: h._redirect("article", 303),
    "/redirect/article": lambda h: h.send(200, ARTICLE),
    "/loop": lambda h: h._redirect("/loop"),
    "/no-location": lambda h: h.send(302, b""),
    "/to-other-loopback": lambda h: h._redirect(f"http://127.0.0.2:{h.site.port}/article"),
    "/to-file": lambda h: h._redirect("file:///etc/passwd"),
    "/to-ftp": lambda h: h._redirect("ftp://127.0.0.1/pub"),
}


@pytest.fixture
def server() -> Iterator[Server]:
    with _serve() as site:
        yield site


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for the name "tls.test" only (no IP address in it)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=tls.test", "-addext", "subjectAltName=DNS:tls.test",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_server(certificate: tuple[Path, Path]) -> Iterator[Server]:
    cert, key = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []

    def remember_name(_sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = remember_name
    # The handshake runs in accept(); a client that rejects the certificate only costs an
    # OSError there, which socketserver ignores.
    with _serve(tls=context) as site:
        site.server_names = names
        yield site


def _is_loopback(host: str) -> bool:
    return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that tries to open a connection off the loopback interface."""
    real_connect = socket.socket.connect

    def guarded(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            assert _is_loopback(address[0]), f"test tried to connect to {address[0]}"
        real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket.socket, "connect_ex", None)  # not used by the fetcher


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[list[str]]]:
    """Scripted answers for made-up host names; each lookup pops the next answer.

    Names not listed go to the real resolver (IP literals, "localhost").
    """
    answers: dict[str, list[list[str]]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, bytes):
            host = host.decode()
        if host not in answers:
            return real(host, port, *args, **kwargs)
        addresses = answers[host].pop(0) if len(answers[host]) > 1 else answers[host][0]
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                socket.IPPROTO_TCP,
                "",
                (address, port, 0, 0) if ":" in address else (address, port),
            )
            for address in addresses
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    calls: dict[str, list[list[str]]] = answers
    return calls


# --- fetching -----------------------------------------------------------------------------------


def test_fetches_a_page(server: Server) -> None:
    page = fetch(server.url(), LOOPBACK)

    assert page.status == 200
    assert page.url == server.url()
    assert page.content_type == "text/html"
    assert page.charset == "utf-8"
    assert page.body == ARTICLE
    assert page.headers == {"content-type": "text/html; charset=utf-8", "etag": '"v1"'}
    sent = server.requests[0].headers
    assert sent["User-Agent"] == f"Loci/{__version__} (+self-hosted second brain)"
    assert "gzip" in sent["Accept-Encoding"] and "br" not in sent["Accept-Encoding"]


def test_host_header_keeps_the_hostname(server: Server) -> None:
    page = fetch(server.url(host="localhost"), FetchPolicy(allowed_networks=("127.0.0.0/8",)))
    assert page.body == ARTICLE
    assert server.requests[0].headers["Host"] == f"localhost:{server.port}"


def test_connects_to_the_address_it_vetted(
    server: Server, resolver: dict[str, list[list[str]]]
) -> None:
    """DNS rebinding: the first answer is checked and used; a later, different answer (here an
    address the policy forbids) is never asked for, because nothing resolves the name again."""
    resolver["rebind.test"] = [["127.0.0.1"], ["10.0.0.1"]]

    page = fetch(f"http://rebind.test:{server.port}/article", LOOPBACK)

    assert page.body == ARTICLE
    assert resolver["rebind.test"] == [["10.0.0.1"]]  # exactly one lookup was made
    assert server.requests[0].headers["Host"] == f"rebind.test:{server.port}"


def test_one_forbidden_address_condemns_the_host(
    server: Server, resolver: dict[str, list[list[str]]]
) -> None:
    resolver["mixed.test"] = [["127.0.0.1", "10.1.2.3"]]

    with pytest.raises(BlockedAddress, match=r"mixed\.test \(10\.1\.2\.3\).*private"):
        fetch(f"http://mixed.test:{server.port}/article", LOOPBACK)
    assert server.connections == 0


def test_unresolvable_host_is_a_fetch_error(resolver: dict[str, list[list[str]]]) -> None:
    resolver["nowhere.test"] = [[]]
    with pytest.raises(FetchError, match="could not resolve nowhere.test"):
        fetch("http://nowhere.test/", LOOPBACK)


def test_text_markdown_and_pdf_are_accepted(server: Server) -> None:
    text = fetch(server.url("/text"), LOOPBACK)
    assert (text.content_type, text.charset) == ("text/plain", "iso-8859-1")
    assert text.body.decode("latin-1") == "café"
    assert fetch(server.url("/markdown"), LOOPBACK).content_type == "text/markdown"
    assert fetch(server.url("/pdf"), LOOPBACK).body.startswith(b"%PDF")


def test_gzip_body_is_decoded(server: Server) -> None:
    assert fetch(server.url("/gzip"), LOOPBACK).body == ARTICLE


# --- TLS ---------------------------------------------------------------------------------------


def test_https_checks_the_certificate_against_the_hostname(
    tls_server: Server, certificate: tuple[Path, Path], resolver: dict[str, list[list[str]]]
) -> None:
    """The socket goes to the vetted IP, but SNI and certificate checks use the URL's name:
    the certificate names only tls.test, so checking it against 127.0.0.1 would fail."""
    resolver["tls.test"] = [["127.0.0.1"]]
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(certificate[0]))

    page = fetch(tls_server.url(host="tls.test", scheme="https"), policy)

    assert page.body == ARTICLE
    assert tls_server.server_names == ["tls.test"]
    assert tls_server.requests[0].headers["Host"] == f"tls.test:{tls_server.port}"


def test_https_refuses_an_untrusted_or_mismatched_certificate(
    tls_server: Server, certificate: tuple[Path, Path], resolver: dict[str, list[list[str]]]
) -> None:
    resolver["tls.test"] = [["127.0.0.1"]]
    resolver["other.test"] = [["127.0.0.1"]]
    trusting = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(certificate[0]))

    with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
        fetch(tls_server.url(host="tls.test", scheme="https"), LOOPBACK)
    with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
        fetch(tls_server.url(host="other.test", scheme="https"), trusting)
    with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
        fetch(tls_server.url(scheme="https"), trusting)
    assert tls_server.requests == []


def test_unreadable_ca_file_is_a_fetch_error(tmp_path: Path) -> None:
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(tmp_path / "none.pem"))
    with pytest.raises(FetchError, match="could not load the CA file"):
        fetch("https://127.0.0.1:9/", policy)


# --- redirects ----------------------------------------------------------------------------------


def test_follows_a_redirect_chain(server: Server) -> None:
    page = fetch(server.url("/redirect/3"), LOOPBACK)
    assert page.url == server.url("/redirect/article")
    assert page.body == ARTICLE
    assert [seen.path for seen in server.requests] == [
        "/redirect/3",
        "/redirect/2",
        "/redirect/1",
        "/redirect/article",
    ]


def test_redirect_limit(server: Server) -> None:
    with pytest.raises(FetchError, match="too many redirects"):
        fetch(server.url("/loop"), LOOPBACK)
    assert len(server.requests) == LOOPBACK.max_redirects + 1

    with pytest.raises(FetchError, match="too many redirects"):
        fetch(
            server.url("/redirect/3"),
            FetchPolicy(allowed_networks=("127.0.0.1/32",), max_redirects=2),
        )


def test_redirect_without_location(server: Server) -> None:
    with pytest.raises(FetchError, match="without a Location"):
        fetch(server.url("/no-location"), LOOPBACK)


def test_redirect_to_a_forbidden_address_is_refused_before_connecting(server: Server) -> None:
    with pytest.raises(BlockedAddress, match=r"127\.0\.0\.2.*loopback"):
        fetch(server.url("/to-other-loopback"), LOOPBACK)
    # The only connection was the first hop's, to the allowed 127.0.0.1.
    assert server.connections == 1


@pytest.mark.parametrize("path", ["/to-file", "/to-ftp"])
def test_redirect_to_another_scheme_is_refused(server: Server, path: str) -> None:
    with pytest.raises(UnsupportedSource, match="only http and https"):
        fetch(server.url(path), LOOPBACK)
    assert len(server.requests) == 1


# --- refused before connecting ----------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "127.1",
        "2130706433",
        "0x7f000001",
        "0",
        "[::]",
    ],
)
def test_default_policy_refuses_loopback(server: Server, host: str) -> None:
    with pytest.raises(BlockedAddress):
        fetch(f"http://{host}:{server.port}/article", FetchPolicy())
    assert server.connections == 0


def test_allowing_one_address_does_not_open_ipv6_loopback(server: Server) -> None:
    with pytest.raises(BlockedAddress, match="loopback"):
        fetch(f"http://[::1]:{server.port}/article", LOOPBACK)
    assert server.connections == 0


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every host handed to the resolver."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(host.decode() if isinstance(host, bytes) else str(host))
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("[::ffff:127.0.0.1]", "loopback (inside IPv4-mapped IPv6)"),
        ("[::ffff:7f00:1]", "loopback (inside IPv4-mapped IPv6)"),
        ("[::ffff:a9fe:a9fe]", "link-local (inside IPv4-mapped IPv6)"),
        ("[0:0:0:0:0:0:0:1]", "loopback"),
        ("2130706433", "(127.0.0.1): loopback"),  # decimal
        ("017700000001", "(127.0.0.1): loopback"),  # octal
        ("0x7f000001", "(127.0.0.1): loopback"),  # hex
        ("0x7f.1", "(127.0.0.1): loopback"),
        ("0177.0.1", "(127.0.0.1): loopback"),
        ("127.0.0.1.", "(127.0.0.1): loopback"),
        ("0xa9.0xfe.0xa9.0xfe", "(169.254.169.254): link-local"),
        ("3232235521", "(192.168.0.1): private"),
        ("%31%32%37.0.0.1", "a percent-encoded address (127.0.0.1)"),
        ("127.0.0.%31", "a percent-encoded address (127.0.0.1)"),
    ],
)
def test_an_address_in_any_form_is_refused_without_a_lookup(
    server: Server, lookups: list[str], host: str, reason: str
) -> None:
    with pytest.raises(BlockedAddress, match=re.escape(reason)):
        fetch(f"http://{host}:{server.port}/article", FetchPolicy())
    assert lookups == []
    assert server.connections == 0


@pytest.mark.parametrize(
    ("host", "zone"),
    [
        ("[::1%25lo]", "lo"),
        ("[fe80::1%25eth0]", "eth0"),
        ("[::1%lo]", "lo"),
        ("[2001:4860:4860::8888%25eth0]", "eth0"),
    ],
)
def test_an_ipv6_zone_id_is_refused_whatever_the_policy(
    server: Server, lookups: list[str], host: str, zone: str
) -> None:
    """A zone id names an interface of this machine: not opened even by allow_private."""
    for policy in (FetchPolicy(), FetchPolicy(allow_private=True)):
        with pytest.raises(BlockedAddress, match=rf"zone id \({zone}\) names a network interface"):
            fetch(f"http://{host}:{server.port}/article", policy)
    assert lookups == []
    assert server.connections == 0


@pytest.mark.parametrize(
    ("host", "problem"),
    [
        ("ex%61mple.com", "cannot contain percent-escapes"),
        ("4294967296", "not a valid IPv4 address"),
        ("0x100.1", "not a valid IPv4 address"),
        ("0177.0.0.1", "not a URL Loci can fetch"),
    ],
)
def test_a_host_that_is_neither_name_nor_address_is_unsupported(
    lookups: list[str], host: str, problem: str
) -> None:
    with pytest.raises(UnsupportedSource, match=re.escape(problem)):
        fetch(f"http://{host}/article", FetchPolicy())
    assert lookups == []


def test_an_allowed_address_in_decimal_form_is_fetched_from_that_address(
    server: Server, lookups: list[str]
) -> None:
    page = fetch(f"http://2130706433:{server.port}/article", LOOPBACK)
    assert page.body == ARTICLE
    # Read as 127.0.0.1, never asked of the resolver as a name. (The socket layer passes the
    # canonical literal to getaddrinfo to build the address: no lookup happens there.)
    assert "2130706433" not in lookups and set(lookups) <= {"127.0.0.1"}


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://127.0.0.1/pub/file.txt",
        "gopher://127.0.0.1:70/",
        "javascript:alert(1)",
        "data:text/html,<h1>hi</h1>",
        "example.com/page",
        "http:///no-host",
    ],
)
def test_non_http_urls_are_unsupported(url: str) -> None:
    with pytest.raises(UnsupportedSource):
        fetch(url, LOOPBACK)


# --- limits -------------------------------------------------------------------------------------


def test_slow_server_times_out(server: Server) -> None:
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), read_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"timed out after 0\.\d s"):
        fetch(server.url("/slow"), policy)
    assert time.monotonic() - started < 2


def test_total_deadline_stops_a_dripping_server(server: Server) -> None:
    # Each byte arrives well within the read timeout; only the overall deadline can stop this.
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), read_timeout=5, total_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        fetch(server.url("/drip"), policy)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("path", ["/big", "/big-chunked", "/gzip-bomb"])
def test_body_is_cut_at_max_bytes(server: Server, path: str) -> None:
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), max_bytes=1024 * 1024)
    with pytest.raises(FetchError, match="page larger than 1 MB"):
        fetch(server.url(path), policy)


def test_unknown_content_encoding_is_refused(server: Server) -> None:
    with pytest.raises(FetchError, match="unsupported content encoding: br"):
        fetch(server.url("/brotli"), LOOPBACK)


# --- content types and statuses ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "shown"), [("/binary", "application/octet-stream"), ("/json", "application/json")]
)
def test_other_content_types_are_unsupported(server: Server, path: str, shown: str) -> None:
    with pytest.raises(UnsupportedSource, match=shown):
        fetch(server.url(path), LOOPBACK)


def test_missing_content_type_is_unsupported(server: Server) -> None:
    with pytest.raises(UnsupportedSource, match="no Content-Type"):
        fetch(server.url("/untyped"), LOOPBACK)


def test_caller_can_accept_more_types(server: Server) -> None:
    page = fetch(server.url("/json"), LOOPBACK, accept={"application/json"})
    assert page.content_type == "application/json"
    assert fetch(server.url("/binary"), LOOPBACK, accept={"application/*"}).body == b"\0\1\2"
    with pytest.raises(UnsupportedSource):
        fetch(server.url("/article"), LOOPBACK, accept={"application/json"})


@pytest.mark.parametrize(
    ("path", "status"), [("/missing", 404), ("/broken", 500), ("/forbidden", 403)]
)
def test_error_statuses_are_fetch_errors(server: Server, path: str, status: int) -> None:
    with pytest.raises(FetchError, match=f"HTTP {status}") as raised:
        fetch(server.url(path), LOOPBACK)
    assert not isinstance(raised.value, ChallengePage)


def test_cloudflare_challenge_status_is_a_challenge_page(server: Server) -> None:
    with pytest.raises(ChallengePage, match="Cloudflare challenge page"):
        fetch(server.url("/cloudflare"), LOOPBACK)


def test_access_denied_page_is_a_challenge_page(server: Server) -> None:
    with pytest.raises(ChallengePage, match="access denied page"):
        fetch(server.url("/denied"), LOOPBACK)


def test_javascript_shell_is_caught_by_fetch_web_page_only(server: Server) -> None:
    # fetch() returns what the server sent; fetch_web_page() judges a 200 HTML page too.
    assert fetch(server.url("/js-shell"), LOOPBACK).body == JS_SHELL
    with pytest.raises(ChallengePage, match="asks to enable JavaScript"):
        fetch_web_page(server.url("/js-shell"), LOOPBACK)
    assert fetch_web_page(server.url("/article"), LOOPBACK).body == ARTICLE


# --- the address classifier (no network) ------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata endpoint
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.127.255.254", "carrier-grade NAT"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.10", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("203.0.113.7", "documentation"),
        ("192.0.0.8", "reserved"),  # IETF protocol assignments
        ("192.88.99.1", "reserved"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fec0::1", "site-local"),
        ("fc00::1", "unique local (private)"),
        ("fd12:3456:789a::1", "unique local (private)"),
        ("64:ff9b:1::a00:1", "private"),  # local-use NAT64
        ("ff02::1", "multicast"),
        ("ff0e::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback (inside IPv4-mapped IPv6)"),
        ("::ffff:10.0.0.1", "private (inside IPv4-mapped IPv6)"),
        ("::ffff:169.254.169.254", "link-local (inside IPv4-mapped IPv6)"),
        ("::ffff:0.0.0.0", "unspecified (inside IPv4-mapped IPv6)"),
        ("64:ff9b::7f00:1", "loopback (inside NAT64)"),
        ("64:ff9b::a9fe:a9fe", "link-local (inside NAT64)"),
        ("2002:7f00:1::", "loopback (inside 6to4)"),
        ("2002:c0a8:101::1", "private (inside 6to4)"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo tunnel"),
        ("::127.0.0.1", "reserved"),  # deprecated IPv4-compatible form
        ("::8.8.8.8", "reserved"),
        ("4000::1", "reserved"),  # outside 2000::/3
        ("2001:db8::1", "documentation"),
        ("2001:2::1", "reserved"),  # benchmarking
        ("100::1", "reserved"),  # discard-only
    ],
)
def test_classifier_refuses_non_public_addresses(address: str, reason: str) -> None:
    assert classify_address(address) == reason


@pytest.mark.parametrize(
    "address",
    [
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
        "100.63.255.255",  # just below CGNAT
        "100.128.0.0",  # just above
        "172.32.0.1",  # just above 172.16/12
        "2606:4700:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",  # DNS64 answer for 8.8.8.8
        "2002:808:808::1",  # 6to4 for 8.8.8.8
    ],
)
def test_classifier_passes_public_addresses(address: str) -> None:
    assert classify_address(address) is None


def test_policy_opens_listed_networks_only() -> None:
    policy = FetchPolicy(allowed_networks=("10.0.0.0/8", "fd00::/8"))
    assert blocked_reason("10.2.3.4", policy) is None
    assert blocked_reason("fd00::5", policy) is None
    assert blocked_reason("192.168.0.1", policy) == "private"
    assert blocked_reason("127.0.0.1", policy) == "loopback"
    assert blocked_reason("8.8.8.8", policy) is None


def test_allow_private_still_refuses_non_destinations() -> None:
    policy = FetchPolicy(allow_private=True)
    for address in ("127.0.0.1", "10.0.0.1", "169.254.1.1", "100.64.0.1", "::1", "fd00::1"):
        assert blocked_reason(address, policy) is None, address
    for address in ("0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "ff02::1", "::ffff:0.0.0.0"):
        assert blocked_reason(address, policy) is not None, address
    # …unless listed explicitly.
    assert blocked_reason("224.0.0.1", FetchPolicy(allowed_networks=("224.0.0.0/4",))) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allowed_networks": ("not-a-network",)},
        {"allowed_networks": ("10.0.0.0/33",)},
        {"max_bytes": 0},
        {"max_redirects": -1},
        {"total_timeout": 0},
    ],
)
def test_invalid_policy_is_rejected_when_built(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        FetchPolicy(**kwargs)
