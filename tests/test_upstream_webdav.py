"""A WebDAV folder followed as an upstream, against a real WebDAV server (WsgiDAV) on
127.0.0.1 sharing a folder the test changes, and a scripted server for what WsgiDAV would never
answer (hostile XML, no ETags, a redirect)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lxml import etree

from loci.errors import BlockedAddress, FetchError, FileTooLarge, InvalidInput
from loci.ingest.fetch_policy import FetchPolicy
from loci.upstream import webdav
from loci.upstream.base import Listing
from tests.support.loopback import Loopback, QuietHandler
from tests.support.webdav_server import WebDavServer

LOOPBACK = FetchPolicy(allowed_networks=("127.0.0.1/32",))
PASSWORD = "app-password-1"


@pytest.fixture
def dav(tmp_path: Path) -> Iterator[WebDavServer]:
    with WebDavServer(tmp_path / "share", "alice", PASSWORD) as server:
        yield server


@pytest.fixture
def notes(dav: WebDavServer) -> Path:
    folder = dav.root / "Notes"
    write(folder / "todo.md", "# To do\n\n- water the plants\n")
    write(folder / "projects" / "roof garden.txt", "soil, seeds, a ladder")
    write(folder / "projects" / "Überblick.md", "# Überblick")
    write(dav.root / "Elsewhere" / "private.md", "not in the followed folder")
    return folder


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def follow(dav: WebDavServer, **options: object) -> webdav.WebDavFolder:
    return webdav.open(dav.url("Notes/"), {"user": "alice", **options}, PASSWORD, LOOPBACK)


def versions(listing: Listing) -> dict[str, str]:
    return {entry.key: entry.version for entry in listing.entries}


def server_etag(dav: WebDavServer, path: str) -> str:
    response = httpx.head(dav.url(path), auth=("alice", PASSWORD))
    assert response.status_code == 200
    return response.headers["etag"].strip('"')


def test_files_are_listed_by_path_with_their_etags_and_fetched(
    dav: WebDavServer, notes: Path
) -> None:
    upstream = follow(dav)
    listing = upstream.list({})

    assert versions(listing) == {
        "todo.md": server_etag(dav, "Notes/todo.md"),
        "projects/roof garden.txt": server_etag(dav, "Notes/projects/roof garden.txt"),
        "projects/Überblick.md": server_etag(dav, "Notes/projects/Überblick.md"),
    }
    fetched = {e.key: upstream.fetch(e) for e in listing.entries}
    garden = fetched["projects/roof garden.txt"]
    assert garden.name == "roof garden.txt"
    assert garden.data == b"soil, seeds, a ladder"
    assert garden.mime_type == "text/plain"
    assert garden.metadata["path"] == "projects/roof garden.txt"
    assert fetched["projects/Überblick.md"].data == "# Überblick".encode()


def test_a_folder_whose_name_needs_escaping(dav: WebDavServer) -> None:
    write(dav.root / "Ärger & Co #1" / "100% sure?.md", "quite")
    location = dav.url("Ärger & Co #1/")
    upstream = webdav.open(location, {"user": "alice"}, PASSWORD, LOOPBACK)
    entries = upstream.list({}).entries
    assert [e.key for e in entries] == ["100% sure?.md"]
    assert upstream.fetch(entries[0]).data == b"quite"


def test_an_edit_changes_the_version_and_a_delete_removes_the_file(
    dav: WebDavServer, notes: Path
) -> None:
    upstream = follow(dav)
    before = versions(upstream.list({}))

    write(notes / "todo.md", "# To do\n\n- water the plants\n- fix the gate\n")
    (notes / "projects" / "roof garden.txt").unlink()
    after_listing = upstream.list({})
    after = versions(after_listing)

    assert set(after) == {"todo.md", "projects/Überblick.md"}
    assert after["todo.md"] != before["todo.md"]
    assert after["projects/Überblick.md"] == before["projects/Überblick.md"]
    todo = next(e for e in after_listing.entries if e.key == "todo.md")
    assert b"fix the gate" in upstream.fetch(todo).data


def test_a_folder_that_vanishes_is_a_clear_error(dav: WebDavServer, notes: Path) -> None:
    upstream = follow(dav)
    assert upstream.list({}).entries
    shutil.rmtree(notes)
    with pytest.raises(FetchError, match="the WebDAV folder .*/Notes/ is not there \\(404\\)"):
        upstream.list({})


def test_a_wrong_password_is_a_clear_error(dav: WebDavServer, notes: Path) -> None:
    upstream = webdav.open(dav.url("Notes/"), {"user": "alice"}, "hunter2-wrong", LOOPBACK)
    with pytest.raises(FetchError, match="WebDAV login failed for alice on 127.0.0.1") as failure:
        upstream.list({})
    assert "hunter2" not in failure.value.message


def test_include_exclude_and_size_choose_the_files(dav: WebDavServer, notes: Path) -> None:
    write(notes / "projects" / "drafts" / "wip.md", "not yet")
    write(notes / "big.md", "x" * 5000)
    upstream = follow(dav, include="*.md", exclude="projects/drafts/**", max_file_bytes=1000)
    assert set(versions(upstream.list({}))) == {"todo.md", "projects/Überblick.md"}


def test_a_file_that_grew_past_the_limit_since_the_listing_is_not_read_whole(
    dav: WebDavServer, notes: Path
) -> None:
    upstream = follow(dav, max_file_bytes=1000)
    entries = {e.key: e for e in upstream.list({}).entries}
    write(notes / "todo.md", "x" * 5000)
    with pytest.raises(FileTooLarge, match="todo.md .* is over the 1,000 bytes allowed"):
        upstream.fetch(entries["todo.md"])


def test_a_file_that_went_between_listing_and_fetching_fails_alone(
    dav: WebDavServer, notes: Path
) -> None:
    upstream = follow(dav)
    entries = {e.key: e for e in upstream.list({}).entries}
    (notes / "todo.md").unlink()
    with pytest.raises(FetchError, match="todo.md is not there"):
        upstream.fetch(entries["todo.md"])
    assert upstream.fetch(entries["projects/Überblick.md"]).data == "# Überblick".encode()


def test_the_fetch_policy_decides_which_addresses_are_reached(
    dav: WebDavServer, notes: Path
) -> None:
    upstream = webdav.open(dav.url("Notes/"), {"user": "alice"}, PASSWORD, FetchPolicy())
    with pytest.raises(BlockedAddress, match="127.0.0.1"):
        upstream.list({})


@pytest.mark.parametrize(
    ("location", "options", "reason"),
    [
        ("ftp://files.example.org/Notes", {}, "webdav:// or https://"),
        ("http://cloud.example.org/remote.php/dav/files/alice/", {"user": "alice"}, "in clear"),
        ("https://alice:pw@cloud.example.org/dav/", {}, "not in its URL"),
        ("https://cloud.example.org/dav/", {}, "no user"),
    ],
)
def test_a_location_that_cannot_work_is_refused_when_opened(
    location: str, options: dict[str, str], reason: str
) -> None:
    with pytest.raises(InvalidInput, match=reason):
        webdav.open(location, options, PASSWORD, LOOPBACK)


def test_webdav_urls_mean_https(dav: WebDavServer, notes: Path) -> None:
    """webdav://host/path is the folder over TLS: against a server that speaks only plain
    HTTP, the TLS handshake fails instead of the password going out in clear."""
    location = dav.url("Notes/").replace("http://", "webdav://")
    upstream = webdav.open(location, {"user": "alice"}, PASSWORD, LOOPBACK)
    with pytest.raises(FetchError, match="could not list"):
        upstream.list({})


# What a hostile or unusual server answers, scripted.

_BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE d:multistatus [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<d:multistatus xmlns:d="DAV:">
 <d:response><d:href>/dav/a&lol9;.md</d:href>
  <d:propstat><d:prop><d:resourcetype/><d:getetag>"1"</d:getetag></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/dav/plain.md</d:href>
  <d:propstat><d:prop><d:resourcetype/><d:getetag>"2"</d:getetag></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>"""


def _external_entity(secret_file: Path) -> bytes:
    return f"""<?xml version="1.0"?>
<!DOCTYPE d:multistatus [<!ENTITY leak SYSTEM "file://{secret_file}">]>
<d:multistatus xmlns:d="DAV:">
 <d:response><d:href>/dav/x&leak;.md</d:href>
  <d:propstat><d:prop><d:resourcetype/><d:getetag>"1"</d:getetag></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>""".encode()


_NO_ETAGS = b"""<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:">
 <d:response><d:href>/dav/</d:href>
  <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>http://elsewhere.example/dav/escape.md</d:href>
  <d:propstat><d:prop><d:resourcetype/></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/dav/../etc/passwd</d:href>
  <d:propstat><d:prop><d:resourcetype/></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/dav/plain.md</d:href>
  <d:propstat><d:prop><d:resourcetype/>
   <d:getlastmodified>Tue, 01 Dec 2026 10:00:00 GMT</d:getlastmodified>
   <d:getcontentlength>42</d:getcontentlength></d:prop>
  <d:status>HTTP/1.1 200 OK</d:status></d:propstat>
  <d:propstat><d:prop><d:getetag/></d:prop>
  <d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>
</d:multistatus>"""


def scripted(answers: dict[str, tuple[int, bytes, dict[str, str]]]) -> type[QuietHandler]:
    class Scripted(QuietHandler):
        def do_PROPFIND(self) -> None:  # noqa: N802 - the HTTP method's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, body, headers = answers[self.path]
            self.send(status, body, content_type="application/xml", headers=headers)

    return Scripted


def scripted_folder(site: Loopback) -> webdav.WebDavFolder:
    return webdav.open(site.url("/dav/"), {"user": "alice"}, PASSWORD, LOOPBACK)


def test_an_entity_expansion_bomb_is_refused_unexpanded() -> None:
    site = Loopback(scripted({"/dav/": (207, _BILLION_LAUGHS, {})}))
    with site, pytest.raises(FetchError, match="entity declarations") as failure:
        scripted_folder(site).list({})
    assert "lollol" not in failure.value.message


def test_an_external_entity_reads_no_file_of_this_machine(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("TOP-SECRET")
    site = Loopback(scripted({"/dav/": (207, _external_entity(secret_file), {})}))
    with site, pytest.raises(FetchError, match="entity declarations") as failure:
        scripted_folder(site).list({})
    assert "TOP-SECRET" not in failure.value.message


def test_the_xml_parser_itself_expands_and_loads_nothing(tmp_path: Path) -> None:
    """Behind the refusal of declarations, the parser is safe on its own: no file read, no
    entity expanded (so a check that missed a spelling of DOCTYPE loses nothing)."""
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("TOP-SECRET")
    leaked = etree.fromstring(_external_entity(secret_file), webdav._xml_parser())
    assert b"TOP-SECRET" not in etree.tostring(leaked)
    try:
        bomb = etree.fromstring(_BILLION_LAUGHS, webdav._xml_parser())
    except etree.XMLSyntaxError:
        pass  # libxml2 refuses the amplification outright
    else:
        assert b"lollollol" not in etree.tostring(bomb)


def test_without_etags_the_version_is_the_modification_time_and_size() -> None:
    with Loopback(scripted({"/dav/": (207, _NO_ETAGS, {})})) as site:
        listing = scripted_folder(site).list({})
    # Entries outside the followed folder (another host, a "..") are not taken.
    assert versions(listing) == {"plain.md": "2026-12-01T10:00:00+00:00|42"}


def test_a_redirect_is_reported_not_followed() -> None:
    answers = {"/dav/": (301, b"", {"Location": "https://new.example.org/dav/"})}
    with Loopback(scripted(answers)) as site:
        with pytest.raises(FetchError, match="moved to https://new.example.org/dav/"):
            scripted_folder(site).list({})
        assert len(site.connections) == 1


def test_a_listing_that_is_not_xml_is_a_clear_error() -> None:
    site = Loopback(scripted({"/dav/": (207, b"<html><body>login", {})}))
    with site, pytest.raises(FetchError, match="not a WebDAV multistatus|not XML"):
        scripted_folder(site).list({})
