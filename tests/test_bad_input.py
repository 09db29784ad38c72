"""Bad input gets a clear reason and loses nothing: every other file in the batch still lands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.store.sqlite import SqliteStore
from loci.store.sqlite.store import ensure_consistent
from tests import fixtures
from tests.conftest import run_cli

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md


def test_a_batch_of_bad_files_fails_file_by_file(tmp_path: Path) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    files: dict[str, bytes] = {
        "good.md": b"# Good\n\nThe lighthouse keeper logs the weather every morning.\n",
        "too-big.txt": b"words " * 4_000_000,  # 22.9 MB, over the 21 MB cap set below
        "empty.txt": b"",
        "truncated.pdf": fixtures.truncated_pdf(),
        "locked.pdf": fixtures.encrypted_pdf(),
        "bomb.docx": fixtures.zip_bomb_docx(),
        "junk.txt": fixtures.binary_junk(),
        "windows-1252.txt": fixtures.cp1252_text(),
        "one-line.txt": fixtures.big_single_line(),
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
    assert found["hits"][0]["citation"]["name"] == "good.md"

    store = SqliteStore(home / "loci.db")
    ensure_consistent(store)
    assert store.pending_jobs() == 0


def test_hostile_file_names_never_become_paths(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import make_service

    loci = make_service(tmp_path / "home", embedder)
    brain = loci.brain()
    for hostile in ("../../etc/passwd", "..\\..\\boot.ini", "a/b/c.txt", "..", "\x00evil.txt"):
        result = loci.add_bytes(brain, hostile, f"content of {hostile!r}".encode())
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
