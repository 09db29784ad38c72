"""Bad input gets a clear reason and loses nothing: every other file in the batch still lands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from scripts import make_bad_inputs
from scripts.make_bad_inputs import BadInput, corpus

from loci.errors import ParseError
from loci.ingest.parsers import ParseBudgets, parse
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.store import ensure_consistent
from tests.support import office_files, pdf_files, text_files
from tests.support.cli import run_cli

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md


def test_a_batch_of_bad_files_fails_file_by_file(tmp_path: Path) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    files: dict[str, bytes] = {
        "good.md": b"# Good\n\nThe lighthouse keeper logs the weather every morning.\n",
        "too-big.txt": b"words " * 4_000_000,  # 22.9 MB, over the 21 MB cap set below
        "empty.txt": b"",
        "truncated.pdf": pdf_files.truncated_pdf(),
        "locked.pdf": pdf_files.encrypted_pdf(),
        "bomb.docx": office_files.zip_bomb_docx(),
        "junk.txt": text_files.binary_junk(),
        "windows-1252.txt": text_files.cp1252_text(),
        "one-line.txt": text_files.big_single_line(),
        "picture.xyz": b"\x89PNG not really an image",
        "résumé ✓.md": "# Résumé\n\nSpeaks Portuguese and Icelandic.\n".encode(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)

    home = tmp_path / "home"
    env = {"LOCI_MAX_FILE_MB": "21", "LOCI_MAX_CHUNKS_PER_FILE": "40"}
    result = run_cli("add", str(folder), "--json", home=home, env=env)
    assert result.returncode == 4, result.stderr  # partial failure
    outcomes = {Path(o["source"]).name: o for o in json.loads(result.stdout)}
    assert set(outcomes) == set(files)

    def reason(name: str) -> str:
        o = outcomes[name]
        assert not o["ok"], f"{name} should have failed"
        return str(o["error"])

    # refused before anything is stored
    assert "limit is 21 MB" in reason("too-big.txt") and outcomes["too-big.txt"]["document"] is None
    assert "empty" in reason("empty.txt") and outcomes["empty.txt"]["document"] is None
    # stored, then failed with the parser's reason
    assert "password" in reason("locked.pdf")
    assert "budget" in reason("bomb.docx")
    assert "binary" in reason("junk.txt")
    assert "no parser for this type" in reason("picture.xyz")
    assert reason("truncated.pdf")
    for name in ("locked.pdf", "bomb.docx", "junk.txt", "picture.xyz", "truncated.pdf"):
        assert outcomes[name]["document"]["status"] == "failed"

    # the good ones landed, including the awkward ones
    for name in ("good.md", "windows-1252.txt", "one-line.txt", "résumé ✓.md"):
        assert outcomes[name]["ok"], outcomes[name]
        assert outcomes[name]["document"]["status"] == "ready"
    assert "first 40 chunks" in outcomes["one-line.txt"]["document"]["status_reason"]
    assert outcomes["résumé ✓.md"]["document"]["name"] == "résumé ✓.md"

    decoded = json.loads(
        run_cli(
            "show",
            str(outcomes["windows-1252.txt"]["document"]["id"]),
            "--text",
            "--json",
            home=home,
        ).stdout
    )["text"]
    assert "Café résumé" in decoded and "€12" in decoded

    found = json.loads(run_cli("search", "lighthouse keeper weather", "--json", home=home).stdout)
    assert found["hits"][0]["name"] == "good.md"

    store = SqliteStore(home / "loci.db")
    ensure_consistent(store)
    assert store.pending_jobs() == 0


def test_a_password_protected_pdf_gets_the_same_advice_on_every_surface(tmp_path: Path) -> None:
    home = tmp_path / "home"
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(pdf_files.encrypted_pdf())
    advice = "Save a copy without the password and add that."
    added = run_cli("add", str(locked), home=home)
    assert "password" in added.stdout and advice in " ".join(added.stdout.split())
    (document,) = json.loads(run_cli("list", "--json", home=home).stdout)
    assert document["failure"]["what_to_do"].endswith(advice)  # what the web app shows
    shown = run_cli("show", str(document["id"]), home=home)
    assert advice in " ".join(shown.stdout.split())


def test_hostile_file_names_never_become_paths(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    from tests.support.services import make_service

    loci = make_service(tmp_path / "home", embedder)
    brain = loci.brain()
    for hostile in ("../../etc/passwd", "..\\..\\boot.ini", "a/b/c.txt", "..", "\x00evil.txt"):
        result = loci.library.add_bytes(brain, hostile, f"content of {hostile!r}".encode())
        name = result.document.name
        assert (
            "/" not in name and "\\" not in name and name not in ("..", ".") and "\x00" not in name
        )
    stored = list((tmp_path / "home" / "blobs").rglob("*"))
    assert all(p.resolve().is_relative_to((tmp_path / "home" / "blobs").resolve()) for p in stored)
    assert not (tmp_path / "etc").exists()


def test_a_name_cannot_disguise_itself_with_bidirectional_overrides() -> None:
    from loci.ingest.sources import clean_name

    # U+202E would make this display as "invoiceexe.pdf"
    assert clean_name("invoice\u202efdp.exe") == "invoicefdp.exe"
    assert clean_name("a\u2066b\u2069c.txt") == "abc.txt"


# --- a corpus of hostile files: every reason is a sentence a person can act on ---------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{3,}")
_REPR = re.compile(r"<[\w.]+(?: object|>)|object at")
_CLASS_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]*)*(?:Error|Exception)\b|BadZipFile|Traceback")


def assert_readable(reason: str) -> None:
    assert reason and "\n" not in reason and len(reason) < 400, reason
    assert len(re.findall(r"[A-Za-z]{2,}", reason)) >= 4, f"not a sentence: {reason!r}"
    assert not _ADDRESS.search(reason), f"memory address in {reason!r}"
    assert not _REPR.search(reason), f"Python repr in {reason!r}"
    assert not _CLASS_NAME.search(reason), f"exception class name in {reason!r}"


@pytest.fixture(scope="module")
def hostile() -> list[BadInput]:
    return corpus()


def test_the_corpus_formats_parse_when_they_are_not_hostile() -> None:
    # so each hostile variant below fails for its hostility, not for being a broken sample
    for name, data, expected in [
        ("a.docx", make_bad_inputs.docx(), "keeper logs"),
        ("a.xlsx", make_bad_inputs.xlsx(), "Calm"),
        ("a.pptx", make_bad_inputs.pptx(), "Storm warnings"),
        ("a.odt", make_bad_inputs.odt(), "tide came in"),
        ("a.epub", make_bad_inputs.epub(), "tide came in"),
    ]:
        assert expected in parse(data, name, ParseBudgets()).text


def test_every_hostile_file_fails_alone_with_a_readable_reason(hostile: list[BadInput]) -> None:
    for item in hostile:
        try:
            parsed = parse(item.data, item.name, ParseBudgets())
        except ParseError as exc:
            assert_readable(exc.message)
            if item.expected is not None:
                assert item.expected in exc.message, (item.name, exc.message)
            continue
        assert item.expected is None, f"{item.name} parsed, should fail: {item.expected}"
        assert "lollol" not in parsed.text and "ENTITY" not in parsed.text, item.name


def test_an_xml_bomb_is_refused_as_one_in_every_xml_format(hostile: list[BadInput]) -> None:
    # An XLSX with its DOCTYPE behind a long comment used to fail "shared string does not
    # exist"; every Office and OpenDocument format now names the DOCTYPE.
    bombs = [item for item in hostile if item.name.startswith("laughs") and item.expected]
    assert {Path(item.name).suffix for item in bombs} == {".docx", ".xlsx", ".pptx", ".odt"}
    for item in bombs:
        with pytest.raises(ParseError, match="declares a DOCTYPE"):
            parse(item.data, item.name, ParseBudgets())


def test_a_corrupt_image_reason_has_no_python_internals(hostile: list[BadInput]) -> None:
    corrupt = next(item for item in hostile if item.name == "corrupt.jpg")
    with pytest.raises(ParseError) as caught:
        parse(corrupt.data, corrupt.name, ParseBudgets())
    assert "BytesIO" not in caught.value.message
    assert "corrupt JPEG image" in caught.value.message


def test_the_corpus_script_writes_every_file(tmp_path: Path, hostile: list[BadInput]) -> None:
    assert make_bad_inputs.main([str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == {item.name for item in hostile}


def test_the_element_count_does_not_depend_on_where_the_stream_is_cut() -> None:
    from loci.ingest.parsers.xml_scan import scan_xml

    xml = b'<?xml version="1.0"?><!-- x --><a b="1"><c d=\'2\'/>text</a>' * 50
    whole = scan_xml([xml])
    assert whole.nodes >= 4 * 50 and not whole.doctype
    for size in (1, 2, 3, 7, 64):
        cut = scan_xml(xml[i : i + size] for i in range(0, len(xml), size))
        assert cut == whole
    hidden = b"<?xml version='1.0'?><!--" + b" " * 10_000 + b"--><!DOCTYPE a []><a/>"
    assert scan_xml(hidden[i : i + 5] for i in range(0, len(hidden), 5)).doctype
    assert scan_xml(["<!DOCTYPE a []><a/>".encode("utf-16")]).doctype
