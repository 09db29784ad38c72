"""A document's earlier versions: a file replaced in place (added again after an edit, or synced)
keeps what it had as a numbered version whose blob stays; the versions are listed with dates,
sizes and hashes, diffed as text, and one can be restored (same id, re-indexed: its text is
found again, the replaced text no longer). Retention keeps the newest LOCI_VERSIONS_KEEP and
deletes the blobs of those it drops, and no blob a version needs is ever deleted: not when its
document is removed while other documents share the bytes, not by a graph write, not by a
dedupe."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.errors import InvalidInput, NotFound
from loci.graph.folder_import import FolderImport
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.folders import FIRST, SECOND, THIRD
from tests.support.pdf_files import PdfText, make_pdf
from tests.support.services import make_service, texts

pytestmark = pytest.mark.both_backends


def _add(loci: Loci, brain: Brain, path: Path, text: str) -> int:
    path.write_text(text)
    added = loci.library.add_file(brain, path)
    loci.library.wait_for(brain, [added.document.id])
    return added.document.id


def _blob(loci: Loci, digest: str) -> bool:
    return loci.blobs.exists(digest)


@pytest.fixture
def kept_two(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[Loci]:
    service = make_service(tmp_path / "home2", embedder, database_url, versions_keep=2)
    yield service
    service.store.close()


def test_an_edited_file_keeps_its_old_text_as_a_version_that_can_be_restored(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    lesson = tmp_path / "lesson.md"
    doc_id = _add(loci, brain, lesson, FIRST)
    first = loci.library.document(brain, doc_id)
    assert _add(loci, brain, lesson, SECOND) == doc_id  # the same document, in place

    listed = loci.versions.list(brain, doc_id)
    assert listed.current == 2 and [v.number for v in listed.versions] == [1]
    (old,) = listed.versions
    assert (old.content_hash, old.size_bytes, old.name) == (
        first.content_hash, len(FIRST.encode()), "lesson.md",
    )  # fmt: skip
    assert old.saved_at == first.created_at and old.replaced_at >= old.saved_at
    assert listed.current_since == old.replaced_at
    assert _blob(loci, old.content_hash)  # the old bytes stay
    assert loci.versions.content(brain, doc_id, 1)[1] == FIRST.encode()
    assert not texts(loci, brain, "Tuesday") and texts(loci, brain, "Friday")

    restored = loci.versions.restore(brain, doc_id, 1)
    assert restored.changed and restored.document.id == doc_id
    loci.library.wait_for(brain, [doc_id])
    assert loci.library.document(brain, doc_id).content_hash == first.content_hash
    assert texts(loci, brain, "Tuesday") and not texts(loci, brain, "Friday")
    # Restoring lost nothing: what it replaced is the newest version now.
    again = loci.versions.list(brain, doc_id)
    assert again.current == 3 and [v.number for v in again.versions] == [2, 1]
    assert loci.versions.content(brain, doc_id, 2)[1] == SECOND.encode()
    assert not loci.versions.restore(brain, doc_id, 3).changed  # the current one: nothing to do

    with pytest.raises(NotFound, match="no version 7"):
        loci.versions.restore(brain, doc_id, 7)
    with pytest.raises(NotFound):
        loci.versions.list(loci.brain("other"), doc_id)


def test_a_diff_shows_the_changed_lines_and_a_pdf_says_it_has_no_text_diff(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    lesson = tmp_path / "lesson.md"
    doc_id = _add(loci, brain, lesson, FIRST)
    _add(loci, brain, lesson, SECOND)
    diff = loci.versions.diff(brain, doc_id, 1)
    assert diff.new == 2 and diff.reason is None and diff.diff is not None
    assert "-The piano lesson is on Tuesday at 5pm" in diff.diff
    assert "+The piano lesson is on Friday at 4pm" in diff.diff
    assert "lesson.md (version 1)" in diff.diff
    assert loci.versions.diff(brain, doc_id, 2, 2).diff == ""  # the same text

    report = tmp_path / "report.pdf"
    report.write_bytes(make_pdf([[PdfText(72, 700, "Quarterly figures, first draft.")]]))
    pdf_id = loci.library.add_file(brain, report).document.id
    report.write_bytes(make_pdf([[PdfText(72, 700, "Quarterly figures, final.")]]))
    loci.library.add_file(brain, report)
    no_diff = loci.versions.diff(brain, pdf_id, 1)
    assert no_diff.diff is None and no_diff.reason is not None
    assert "PDF file has no text diff" in no_diff.reason


def test_retention_keeps_the_newest_versions_and_deletes_the_blobs_it_drops(
    kept_two: Loci, tmp_path: Path
) -> None:
    loci = kept_two
    brain = loci.brain()
    lesson = tmp_path / "lesson.md"
    texts = [FIRST, SECOND, THIRD, THIRD + "\nBring the blue book.\n"]
    hashes = []
    for text in texts:
        doc_id = _add(loci, brain, lesson, text)
        hashes.append(loci.library.document(brain, doc_id).content_hash)
    listed = loci.versions.list(brain, doc_id)
    assert [v.number for v in listed.versions] == [3, 2] and listed.current == 4
    assert not _blob(loci, hashes[0])  # version 1 dropped, its blob with it
    assert all(_blob(loci, h) for h in hashes[1:])
    # Removing the document removes its versions' blobs too.
    loci.library.remove(brain, doc_id)
    assert not any(_blob(loci, h) for h in hashes)


def test_with_no_versions_kept_the_old_bytes_go_at_once(
    tmp_path: Path, embedder: Embedder, database_url: str | None
) -> None:
    loci = make_service(tmp_path / "home0", embedder, database_url, versions_keep=0)
    try:
        brain = loci.brain()
        lesson = tmp_path / "lesson.md"
        doc_id = _add(loci, brain, lesson, FIRST)
        old = loci.library.document(brain, doc_id).content_hash
        _add(loci, brain, lesson, SECOND)
        assert loci.versions.list(brain, doc_id).versions == [] and not _blob(loci, old)
    finally:
        loci.store.close()


def test_a_version_blob_shared_with_other_documents_outlives_each_of_them(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    lesson = tmp_path / "lesson.md"
    doc_id = _add(loci, brain, lesson, FIRST)
    _add(loci, brain, lesson, SECOND)
    old = loci.versions.list(brain, doc_id).versions[0].content_hash
    # The same bytes uploaded again, here and in another brain: each its own document.
    copy = loci.library.add_bytes(brain, "copy.md", FIRST.encode()).document
    elsewhere = loci.brain("other")
    other = loci.library.add_bytes(elsewhere, "lesson.md", FIRST.encode()).document
    assert copy.content_hash == other.content_hash == old
    loci.library.remove(brain, copy.id)
    loci.delete_brain(elsewhere)
    assert _blob(loci, old)  # version 1 of the lesson still has them
    assert loci.versions.content(brain, doc_id, 1)[1] == FIRST.encode()

    # A file edited into the bytes another document has is that document now (dedupe): its
    # own document goes, with its versions — but not bytes another document has.
    loci.library.add_bytes(brain, "old-lesson.md", SECOND.encode())  # another path, same bytes
    (tmp_path / "third.md").write_text(THIRD)
    third_id = loci.library.add_file(brain, tmp_path / "third.md").document.id
    lesson.write_text(THIRD)
    assert loci.library.add_file(brain, lesson).deduped
    with pytest.raises(NotFound):
        loci.library.document(brain, doc_id)
    assert not _blob(loci, old)  # nothing has the first text any more
    assert loci.library.document(brain, third_id).content_hash  # untouched

    # Deleting the brain deletes what its versions alone kept.
    notes = tmp_path / "notes.md"
    note_id = _add(loci, brain, notes, "# Notes\n\nBuy rosin for the bow.\n")
    _add(loci, brain, notes, "# Notes\n\nBuy rosin and a new E string.\n")
    kept = loci.versions.list(brain, note_id).versions[0].content_hash
    loci.delete_brain(brain)
    assert not _blob(loci, kept)


def test_a_graph_write_leaves_a_blob_an_earlier_version_has(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    page = (
        "---\nid: tuning\nkind: page\ntype: concept\nfolder: concepts\ntitle: Tuning\n---\n\nA4.\n"
    )
    path = tmp_path / "tuning.md"
    doc_id = _add(loci, brain, path, page)
    _add(loci, brain, path, page + "\nTune before every lesson.\n")
    old = loci.versions.list(brain, doc_id).versions[0].content_hash
    vault = tmp_path / "vault"
    (vault / "concepts").mkdir(parents=True)
    (vault / "concepts" / "tuning.md").write_text(page)
    FolderImport(loci.graph).run(brain, vault, actor="test")
    assert loci.graph.graph.get(brain.id, "tuning").content_hash == old
    loci.graph.delete(brain, "tuning", actor="test", confirm=True)
    assert _blob(loci, old)  # the page went; the file's version 1 still has these bytes


def test_restoring_a_page_or_an_unknown_version_is_refused_with_the_reason(
    loci: Loci, brain: Brain
) -> None:
    page = loci.graph.create(brain, actor="test", doc_type="concept", title="Scales", text="C.")
    assert page.document_id is not None
    with pytest.raises(InvalidInput, match="brain history"):
        loci.versions.restore(brain, page.document_id, 1)


def test_the_commands_list_diff_restore_and_save_versions(
    loci: Loci, brain: Brain, tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "home"
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}

    def cli(*args: str, code: int = 0) -> str:
        done = run_cli(*args, home=home, env=env)
        assert done.returncode == code, done.stderr
        return done.stdout if code == 0 else done.stderr

    lesson = tmp_path / "lesson.md"
    lesson.write_text(FIRST)
    cli("add", str(lesson))
    lesson.write_text(SECOND)
    cli("add", str(lesson))
    (doc,) = loci.library.documents(brain)

    shown = cli("show", str(doc.id), "--versions")
    assert "2 (current)" in shown and doc.content_hash[:12] in shown
    listed = json.loads(cli("show", str(doc.id), "--versions", "--json"))
    assert listed["current"]["number"] == 2
    assert [v["number"] for v in listed["versions"]] == [1]
    assert listed["versions"][0]["size_bytes"] == len(FIRST.encode())

    assert "+The piano lesson is on Friday" in cli("versions", "diff", str(doc.id), "1")

    saved = tmp_path / "first.md"
    cli("versions", "save", str(doc.id), "1", str(saved))
    assert saved.read_text() == FIRST
    assert "exists" in cli("versions", "save", str(doc.id), "1", str(saved), code=1)

    body = json.loads(cli("versions", "restore", str(doc.id), "1", "--json"))
    assert body["changed"] and body["document"]["status"] == "ready"
    assert body["document"]["id"] == doc.id
    assert texts(loci, brain, "Tuesday") and not texts(loci, brain, "Friday")
    assert "no version 9" in cli("versions", "restore", str(doc.id), "9", code=3)
