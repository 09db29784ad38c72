"""An IMAP folder followed as an upstream, against a real IMAP server (pymap) on 127.0.0.1:
what is in the folder is listed and fetched as .eml, what leaves it is no longer listed."""

from __future__ import annotations

import imaplib
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.errors import BlockedAddress, FetchError, FileTooLarge, InvalidInput
from loci.ingest.fetch_policy import FetchPolicy
from loci.ingest.parsers import ParseBudgets, parse
from loci.upstream import imap
from loci.upstream.base import Entry
from tests.support.certificates import self_signed
from tests.support.imap_server import ImapServer, append, message
from tests.support.tls_relay import TlsRelay

LOOPBACK = FetchPolicy(allowed_networks=("127.0.0.1/32",))
PASSWORD = "s3cret"


@pytest.fixture(scope="module")
def server() -> Iterator[ImapServer]:
    with ImapServer("alice", PASSWORD) as running:
        yield running


@pytest.fixture
def folder(server: ImapServer, request: pytest.FixtureRequest) -> str:
    """A folder of this test's own, so tests sharing the server do not see each other's mail."""
    name = str(request.node.name).removeprefix("test_")[:40]
    with server.mailbox() as box:
        typ, said = box.create(name)
        assert typ == "OK", said
    return name


def keys(upstream: imap.ImapFolder) -> set[str]:
    return {entry.key for entry in upstream.list({}).entries}


def test_messages_are_listed_and_fetched_as_eml_that_loci_reads(
    server: ImapServer, folder: str
) -> None:
    with server.mailbox() as box:
        append(box, folder, message("Quarterly numbers", "Revenue grew by 12 percent."))
        append(
            box,
            folder,
            message(
                "Minutes", "See the attached minutes.", attachment=("minutes.bin", b"\x00\x01")
            ),
        )
    with imap.open(server.url(folder), {}, PASSWORD, LOOPBACK) as upstream:
        listing = upstream.list({})
        assert len(listing.entries) == 2
        fetched = {}
        for entry in listing.entries:
            one = upstream.fetch(entry)
            fetched[one.title] = one
    assert set(fetched) == {"Quarterly numbers", "Minutes"}
    quarterly = fetched["Quarterly numbers"]
    assert quarterly.name == "Quarterly numbers.eml"
    assert quarterly.mime_type == "message/rfc822"
    assert quarterly.metadata["folder"] == folder
    # The bytes are the message itself: Loci's .eml parser reads its text and its attachment.
    parsed = parse(quarterly.data, quarterly.name, ParseBudgets())
    assert "Revenue grew by 12 percent." in " ".join(block.text for block in parsed.blocks)
    minutes = parse(fetched["Minutes"].data, fetched["Minutes"].name, ParseBudgets())
    assert [a.name for a in minutes.attachments] == ["minutes.bin"]


def test_following_a_folder_marks_nothing_read(server: ImapServer, folder: str) -> None:
    with server.mailbox() as box:
        append(box, folder, message("Unread news", "Still unread after Loci read it."))
    with imap.open(server.url(folder), {}, PASSWORD, LOOPBACK) as upstream:
        for entry in upstream.list({}).entries:
            upstream.fetch(entry)
    with server.mailbox() as box:
        box.select(folder, readonly=True)
        typ, data = box.uid("SEARCH", "UNSEEN")
    assert typ == "OK" and len(data[0].split()) == 1


def test_a_moved_deleted_or_expunged_message_is_no_longer_listed(
    server: ImapServer, folder: str
) -> None:
    with server.mailbox() as box:
        staying = append(box, folder, message("Stays", "This one stays."))
        moving = append(box, folder, message("Moves", "This one is filed away."))
        expunged = append(box, folder, message("Expunged", "This one is deleted for good."))
        flagged = append(box, folder, message("Flagged", "This one waits in the bin."))
    upstream = imap.open(server.url(folder), {}, PASSWORD, LOOPBACK)
    first = upstream.list({})
    uidvalidity = first.state["uidvalidity"]
    assert keys(upstream) == {
        f"{uidvalidity}:{uid}" for uid in (staying, moving, expunged, flagged)
    }

    with server.mailbox() as box:
        box.select(folder)
        assert box.uid("MOVE", str(moving), "INBOX")[0] == "OK"
        box.uid("STORE", str(expunged), "+FLAGS", "(\\Deleted)")
        box.expunge()
        box.uid("STORE", str(flagged), "+FLAGS", "(\\Deleted)")

    # The same connection (as a run reuses it) sees the folder as it is now.
    assert keys(upstream) == {f"{uidvalidity}:{staying}"}
    # A message gone between listing and fetching fails alone, saying so.
    with pytest.raises(FetchError, match=f"message {moving} is no longer in {folder}"):
        upstream.fetch(Entry(f"{uidvalidity}:{moving}", "1"))
    assert upstream.fetch(Entry(f"{uidvalidity}:{staying}", "1")).title == "Stays"
    upstream.close()


def test_a_renumbered_folder_reads_as_every_message_replaced(
    server: ImapServer, folder: str
) -> None:
    with server.mailbox() as box:
        append(box, folder, message("Before", "Written before the folder was rebuilt."))
    upstream = imap.open(server.url(folder), {}, PASSWORD, LOOPBACK)
    before = upstream.list({})

    # The server rebuilds the folder (as after a restore): it gets a new UIDVALIDITY.
    with server.mailbox() as box:
        assert box.delete(folder)[0] == "OK"
        assert box.create(folder)[0] == "OK"
        append(box, folder, message("Before", "Written before the folder was rebuilt."))
    after = upstream.list(before.state)

    assert after.state["uidvalidity"] != before.state["uidvalidity"]
    assert len(after.entries) == 1
    assert not {e.key for e in before.entries} & {e.key for e in after.entries}
    assert upstream.fetch(after.entries[0]).title == "Before"
    with pytest.raises(FetchError, match="renumbered"):
        upstream.fetch(before.entries[0])
    upstream.close()


def test_a_wrong_password_says_login_failed_for_whom_and_where(server: ImapServer) -> None:
    upstream = imap.open(server.url(), {}, "not-the-password", LOOPBACK)
    with pytest.raises(FetchError) as failure:
        upstream.list({})
    said = failure.value.message
    assert said.startswith(f"IMAP login failed for alice on {server.host}")
    assert "not-the-password" not in said and "not-the-password" not in repr(failure.value)


def test_a_folder_that_does_not_exist_is_named_in_the_error(server: ImapServer) -> None:
    upstream = imap.open(server.url("Nowhere"), {}, PASSWORD, LOOPBACK)
    with upstream, pytest.raises(FetchError, match="IMAP folder Nowhere of alice on 127.0.0.1"):
        upstream.list({})


def test_a_folder_with_a_non_ascii_name(server: ImapServer) -> None:
    with server.mailbox() as box:
        assert box.create("Entw&APw-rfe")[0] == "OK"  # "Entwürfe", as clients send it
        append(box, "Entw&APw-rfe", message("Draft", "A draft."))
    with imap.open(server.url("Entw%C3%BCrfe"), {}, PASSWORD, LOOPBACK) as upstream:
        entries = upstream.list({}).entries
        assert [upstream.fetch(e).title for e in entries] == ["Draft"]


def test_a_message_over_the_size_limit_fails_alone(server: ImapServer, folder: str) -> None:
    with server.mailbox() as box:
        small = append(box, folder, message("Small", "short"))
        big = append(box, folder, message("Big", "long " * 2000))
    options = {"max_message_bytes": 4000}
    with imap.open(server.url(folder), options, PASSWORD, LOOPBACK) as upstream:
        uidvalidity = upstream.list({}).state["uidvalidity"]
        with pytest.raises(FileTooLarge, match=f"message {big} in {folder} is"):
            upstream.fetch(Entry(f"{uidvalidity}:{big}", "1"))
        assert upstream.fetch(Entry(f"{uidvalidity}:{small}", "1")).title == "Small"


def test_a_connection_the_server_dropped_is_opened_again() -> None:
    with ImapServer("erin", "pw") as first:
        with first.mailbox() as box:
            append(box, "INBOX", message("Before the restart", "one"))
        upstream = imap.open(first.url(), {}, "pw", LOOPBACK)
        assert len(upstream.list({}).entries) == 1
    # The server restarts (its connections drop) and comes back on the same port.
    with ImapServer("erin", "pw", port=first.port) as second:
        with second.mailbox() as box:
            append(box, "INBOX", message("After the restart", "two"))
        entries = upstream.list({}).entries
        assert [upstream.fetch(e).title for e in entries] == ["After the restart"]
        upstream.close()


def test_loopback_must_be_allowed_by_the_fetch_policy(server: ImapServer) -> None:
    upstream = imap.open(server.url(), {}, PASSWORD, FetchPolicy())
    with pytest.raises(BlockedAddress, match="127.0.0.1"):
        upstream.list({})


def test_starttls_checks_the_certificate(server: ImapServer, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path / "tls")
    with ImapServer("carol", "pw", cert=cert, key=key) as secured:
        with secured.mailbox() as box:
            append(box, "INBOX", message("Over TLS", "sealed"))
        options = {"tls": "starttls"}
        trusting = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(cert))
        with imap.open(secured.url(), options, "pw", trusting) as upstream:
            entries = upstream.list({}).entries
            assert [upstream.fetch(e).title for e in entries] == ["Over TLS"]
        with pytest.raises(FetchError, match="no trusted certificate"):
            imap.open(secured.url(), options, "pw", LOOPBACK).list({})


def test_imaps_speaks_tls_from_the_first_byte_and_checks_the_certificate(
    server: ImapServer, folder: str, tmp_path: Path
) -> None:
    with server.mailbox() as box:
        append(box, folder, message("Sealed", "over imaps"))
    cert, key = self_signed(tmp_path / "tls")
    trusting = FetchPolicy(allowed_networks=("127.0.0.1/32",), ca_file=str(cert))
    with TlsRelay(server.port, cert, key) as relay:
        location = f"imaps://alice@127.0.0.1:{relay.port}/{folder}"
        with imap.open(location, {}, PASSWORD, trusting) as upstream:
            entries = upstream.list({}).entries
            assert [upstream.fetch(e).title for e in entries] == ["Sealed"]
        # A certificate nobody vouched for: nothing is sent, not even the login.
        with pytest.raises(FetchError, match="has no trusted certificate"):
            imap.open(location, {}, PASSWORD, LOOPBACK).list({})


@pytest.mark.parametrize(
    ("location", "options", "reason"),
    [
        ("https://mail.example.org/INBOX", {}, "imaps://user@host/Folder"),
        ("imaps://mail.example.org/INBOX", {}, "no user"),
        ("imaps://alice@mail.example.org/INBOX", {"tls": "none"}, "imaps:// speaks TLS"),
        ("imap://alice@mail.example.org/INBOX", {"tls": "maybe"}, "tls must be one of"),
        ("imaps://alice@mail.example.org/IN%0ABOX", {}, "line break"),
    ],
)
def test_a_location_that_cannot_work_is_refused_when_opened(
    location: str, options: dict[str, str], reason: str
) -> None:
    with pytest.raises(InvalidInput, match=reason):
        imap.open(location, options, PASSWORD, LOOPBACK)


def test_plain_text_to_a_remote_server_is_never_chosen_silently() -> None:
    """imap:// to a host that is not this machine upgrades with STARTTLS unless told not to:
    when the upgrade fails the run stops there, and the password is not sent in clear."""
    with ImapServer("dave", "pw") as plain:
        # 127.0.0.1 counts as this machine; asking for STARTTLS shows what a remote host gets.
        upstream = imap.open(plain.url(), {"tls": "starttls"}, "pw", LOOPBACK)
        with pytest.raises(FetchError, match="STARTTLS"):
            upstream.list({})


def test_a_password_is_needed() -> None:
    with pytest.raises(InvalidInput, match="needs their password"):
        imap.open("imaps://alice@mail.example.org/INBOX", {}, None, LOOPBACK)


def test_imaplib_errors_do_not_leak_out(server: ImapServer) -> None:
    with imap.open(server.url(), {}, PASSWORD, LOOPBACK) as upstream:
        with pytest.raises(InvalidInput):
            upstream.fetch(Entry("not-a-key", "1"))
        try:
            upstream.fetch(Entry("1:999999", "1"))
        except imaplib.IMAP4.error as exc:  # pragma: no cover - what this test guards
            raise AssertionError(f"imaplib's own error escaped: {exc}") from exc
        except FetchError:
            pass
