"""`loci import evernote`: ENEX notebooks (a file, a zip or a folder of them), each note a
document with its notebook, tags and dates, its ENML as readable Markdown and its resources as
attachments with their MIME types; entity tricks refused before a note is read, a DTD never
fetched, a broken note failing alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from loci.imports import evernote
from loci.imports.enml import Media, enml_markdown
from loci.imports.items import ExportRefused, Limits
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.importing import ImportReport
from tests.support.evernote_export import (
    PDF_RECEIPT,
    Note,
    Resource,
    billion_laughs,
    enex,
    enex_file,
    external_entity,
    recipes,
)
from tests.support.exports import zip_of
from tests.support.loopback import Loopback, QuietHandler
from tests.support.services import texts


def _import(loci: Loci, brain: Brain, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, "evernote", path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


# the reader --------------------------------------------------------------------------------


def test_a_note_keeps_its_notebook_tags_dates_and_resources(tmp_path: Path) -> None:
    export = evernote.read(enex_file(tmp_path, "Recipes", recipes()), Limits())
    assert export.failed == []
    feijoada, receipts = export.items
    assert feijoada.title == "Feijoada"
    assert feijoada.where == ("Recipes",) and feijoada.extra["notebook"] == "Recipes"
    assert feijoada.tags == ("cooking", "brazil")
    assert (feijoada.created, feijoada.updated) == ("2023-01-05T10:15:00Z", "2023-01-06T08:00:00Z")
    assert feijoada.url == "https://example.org/feijoada" and feijoada.extra["author"] == "Ana"
    # No stable id in ENEX: notebook, created time and title make the key.
    assert feijoada.key == "Recipes/2023-01-05T10:15:00Z/Feijoada"
    (receipt,) = receipts.attachments
    assert (receipt.name, receipt.mime_type, receipt.data) == (
        "receipt.pdf",
        "application/pdf",
        PDF_RECEIPT.data,
    )
    assert receipts.updated is None
    # A resource with no bytes has nothing to keep.
    empty = Note("Empty", "<div>x</div>", resources=(Resource(b"", "image/png", "a.png"),))
    (item,) = evernote.read(enex_file(tmp_path / "e", "E", [empty]), Limits()).items
    assert item.attachments == ()


def test_enml_reads_as_markdown_with_its_lists_tasks_tables_and_media(tmp_path: Path) -> None:
    (feijoada, _) = evernote.read(enex_file(tmp_path, "Recipes", recipes()), Limits()).items
    text = feijoada.body.decode()
    assert text.startswith("# Feijoada\n\n*Recipes · tags: cooking, brazil · created 2023-01-05")
    assert text.count("# Feijoada") == 1  # the note's own heading is its title, once
    assert "A black bean stew with smoked pork" in text  # &nbsp; read as a space
    assert "## Shopping" in text
    assert "- [x] black beans" in text and "- [ ] farofa" in text
    assert "- garlic\n  - two heads" in text
    assert "| Step | Minutes |\n| --- | --- |\n| Simmer the pork | 90 |" in text
    assert "[attachment: beans.txt]" in text  # where the note showed it
    media = enml_markdown(
        '<en-note><div>See <en-media hash="ab12" type="image/png"/> and'
        ' <a href="https://example.org/x">the source</a><br/>next line</div>'
        "<en-crypt>c2VjcmV0</en-crypt></en-note>",
        {"ab12": Media("photo 1.png", "image/png")},
    )
    assert media == (
        "See ![photo 1.png](photo%201.png) and [the source](https://example.org/x)\n"
        "next line\n\n[encrypted text]"
    )


def test_enml_blocks_keep_their_shape() -> None:
    text = enml_markdown(
        "<en-note><ol><li>one</li><li><div>two</div><div>more</div></li></ol>"
        '<ul><li><en-todo checked="true"/>done</li><li><en-todo/>not yet</li></ul>'
        "<blockquote>quoted<br/>words</blockquote><pre>code  here\n  indented</pre><hr/>"
        "<h3>  Spaced   title </h3><table><tr><th>a|b</th></tr><tr><td>1</td><td>2</td></tr>"
        "</table></en-note>",
        {},
    )
    assert text == (
        "1. one\n2. two\n   more\n\n- [x] done\n- [ ] not yet\n\n> quoted\n> words\n\n"
        "```\ncode  here\n  indented\n```\n\n---\n\n### Spaced title\n\n"
        "| a\\|b |  |\n| --- | --- |\n| 1 | 2 |"
    )


def test_a_note_with_broken_enml_fails_alone_with_its_reason(tmp_path: Path) -> None:
    notes = [
        Note("Unclosed", "", raw_content="<en-note><div>half a div</en-note>"),
        Note("Not ENML", "", raw_content="<html><body>hello</body></html>"),
        Note("Own entities", "", raw_content='<!DOCTYPE en-note [<!ENTITY x "y">]><en-note/>'),
        Note("Unknown entity", "<div>&nosuchname; here</div>"),
        Note("Fine", "<div>All good here.</div>"),
    ]
    export = evernote.read(enex_file(tmp_path, "Mixed", notes), Limits())
    assert [i.title for i in export.items] == ["Fine"]
    reasons = {f.name: f.reason for f in export.failed}
    assert "not well-formed" in reasons["Unclosed"] and "mismatch" in reasons["Unclosed"]
    assert reasons["Not ENML"] == "its content is not ENML (<html> where <en-note> belongs)"
    assert "declares XML entities" in reasons["Own entities"]
    assert "nosuchname" in reasons["Unknown entity"]


def test_entity_tricks_are_refused_before_any_note_is_read(tmp_path: Path) -> None:
    laughs = tmp_path / "laughs.enex"
    laughs.write_text(billion_laughs())
    with pytest.raises(ExportRefused, match="declares XML entities"):
        evernote.read(laughs, Limits())
    secret = tmp_path / "secret.txt"
    secret.write_text("the machine's secret")
    xxe = tmp_path / "xxe.enex"
    xxe.write_text(external_entity(secret.as_uri()))
    with pytest.raises(ExportRefused, match="declares XML entities"):
        evernote.read(xxe, Limits())
    # In a zip of notebooks, one hostile notebook refuses the whole export.
    good = enex(recipes()).encode()
    both = zip_of(tmp_path / "both.zip", {"a.enex": good, "b.enex": billion_laughs().encode()})
    with pytest.raises(ExportRefused, match="b.enex declares XML entities"):
        evernote.read(both, Limits())


def test_the_dtd_every_enex_names_is_never_fetched(tmp_path: Path) -> None:
    class Dtd(QuietHandler):
        def do_GET(self) -> None:
            self.send(200, '<!ENTITY nbsp "FETCHED">', "application/xml-dtd")

    with Loopback(Dtd) as site:
        path = enex_file(tmp_path, "Recipes", recipes(), dtd=site.url("/evernote-export4.dtd"))
        export = evernote.read(path, Limits())
        assert len(export.items) == 2
        assert "FETCHED" not in export.items[0].body.decode()
        assert site.connections == []


def test_encodings_declared_are_read_and_wrong_bytes_refused(tmp_path: Path) -> None:
    latin = [Note("Crème brûlée", "<div>Caramélisé au chalumeau</div>")]
    path = enex_file(tmp_path / "latin", "Desserts", latin, encoding="ISO-8859-1")
    (item,) = evernote.read(path, Limits()).items
    assert item.title == "Crème brûlée" and "Caramélisé" in item.body.decode()
    wrong = tmp_path / "wrong.enex"
    wrong.write_bytes(enex(latin).encode("latin-1"))  # says UTF-8, is Latin-1
    with pytest.raises(ExportRefused, match="not in the encoding it declares"):
        evernote.read(wrong, Limits())
    not_enex = tmp_path / "notes.enex"
    not_enex.write_text('<?xml version="1.0"?><notes><note><title>x</title></note></notes>')
    with pytest.raises(ExportRefused, match="not an Evernote export"):
        evernote.read(not_enex, Limits())
    # A prologue padded past the bytes checked for declarations is refused, not trusted.
    padded = tmp_path / "padded.enex"
    padded.write_text(
        '<?xml version="1.0"?><!--' + "x" * 70_000 + "-->" + billion_laughs().split("?>", 1)[1]
    )
    with pytest.raises(ExportRefused, match="no <en-export> in its first 64 KB"):
        evernote.read(padded, Limits())
    utf16 = tmp_path / "utf16.enex"
    utf16.write_bytes(enex(latin, encoding="UTF-16").encode("utf-16"))
    assert evernote.read(utf16, Limits()).items[0].title == "Crème brûlée"


def test_a_folder_or_zip_of_notebooks_each_named_by_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    enex_file(folder, "Recipes", recipes())
    enex_file(folder / "Travel", "Lisbon", [Note("Tram 28", "<div>Take it early.</div>")])
    (folder / "readme.txt").write_text("not a notebook")
    from_folder = evernote.read(folder, Limits())
    assert {(i.title, i.where) for i in from_folder.items} == {
        ("Feijoada", ("Recipes",)),
        ("Receipts", ("Recipes",)),
        ("Tram 28", ("Lisbon",)),
    }
    # A newer export names the notebook itself.
    named = [Note("Tram 28", "<div>Take it early.</div>", notebook="Portugal")]
    archive = zip_of(
        tmp_path / "notebooks.zip",
        {"Recipes.enex": enex(recipes()).encode(), "x/Lisbon.enex": enex(named).encode()},
    )
    from_zip = evernote.read(archive, Limits())
    assert {(i.title, i.where) for i in from_zip.items} == {
        ("Feijoada", ("Recipes",)),
        ("Receipts", ("Recipes",)),
        ("Tram 28", ("Portugal",)),
    }
    # One unreadable notebook among several fails alone, none of its notes taken.
    broken = zip_of(
        tmp_path / "broken.zip",
        {"Recipes.enex": enex(recipes()).encode(), "Cut.enex": enex(named).encode()[:-40]},
    )
    export = evernote.read(broken, Limits())
    assert [i.title for i in export.items] == ["Feijoada", "Receipts"]
    assert [f.name for f in export.failed] == ["Cut.enex"]
    assert "not readable XML" in export.failed[0].reason
    with pytest.raises(ExportRefused, match="no .enex file"):
        evernote.read(_empty(tmp_path), Limits())


def test_an_attachment_over_the_limit_fails_its_note_alone(tmp_path: Path) -> None:
    notes = recipes()
    export = evernote.read(enex_file(tmp_path, "Recipes", notes), Limits(max_item_bytes=45))
    assert [i.title for i in export.items] == ["Feijoada"]  # its attachment is 42 bytes
    ((name, reason),) = [(f.name, f.reason) for f in export.failed]
    assert name == "Receipts" and "'receipt.pdf' is over 45 bytes" in reason


def test_a_file_over_the_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = enex_file(tmp_path, "Recipes", recipes())
    with pytest.raises(ExportRefused, match="Recipes.enex is over 1,000 bytes"):
        evernote.read(path, Limits(max_bytes=1000))


def test_notes_of_one_title_made_in_one_second_are_told_apart(tmp_path: Path) -> None:
    twin = Note("Todo", "<div>first</div>")
    notes = [twin, dataclasses.replace(twin, enml_body="<div>second</div>")]
    keys = [i.key for i in evernote.read(enex_file(tmp_path, "Inbox", notes), Limits()).items]
    assert keys == ["Inbox/2023-01-05T10:15:00Z/Todo", "Inbox/2023-01-05T10:15:00Z/Todo#2"]


# end to end --------------------------------------------------------------------------------


@pytest.mark.both_backends
def test_notes_become_documents_cited_with_their_attachments(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, enex_file(tmp_path, "Recipes", recipes()))
    assert report.counts["add"] == 2 and report.counts["fail"] == 0
    notes = {d.title: d for d in loci.library.documents(brain) if d.origin}
    feijoada = notes["Feijoada"]
    assert feijoada.origin == "evernote:Recipes/2023-01-05T10:15:00Z/Feijoada"
    assert set(feijoada.tags) == {"cooking", "brazil"}
    assert feijoada.metadata["import"]["where"] == ["Recipes"]
    assert feijoada.metadata["import"]["created"] == "2023-01-05T10:15:00Z"
    hit = loci.searching.search(brain, _text("simmer the pork minutes"))[0]
    assert hit.citation.document_id == feijoada.id
    assert hit.citation.heading_path[-1] == "Shopping"
    assert "| Step | Minutes |" in hit.text  # the table's row cited with its header
    # Resources are documents of their own, attached to their note, with their MIME type.
    (attachment,) = feijoada.metadata["attachments"]
    beans = loci.library.document(brain, attachment["id"])
    assert (beans.name, beans.mime_type) == ("beans.txt", "text/plain")
    assert beans.metadata["attached_to"] == feijoada.id
    hit = loci.searching.search(brain, _text("soak beans overnight"))[0]
    assert hit.citation.document_id == beans.id
    receipt_id = notes["Receipts"].metadata["attachments"][0]["id"]
    assert loci.library.document(brain, receipt_id).mime_type == "application/pdf"


@pytest.mark.both_backends
def test_a_second_run_adds_nothing_an_edited_note_updates_its_document(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = enex_file(tmp_path, "Recipes", recipes())
    first = _import(loci, brain, path)
    count = len(loci.library.documents(brain))
    again = _import(loci, brain, path)
    assert again.counts == {"add": 0, "update": 0, "unchanged": 2, "fail": 0, "skip": 0}
    assert len(loci.library.documents(brain)) == count
    edited = recipes()
    edited[1] = dataclasses.replace(
        edited[1],
        updated="20230301T100000Z",
        enml_body="<div>Kept for the tax return: the stove and the fridge receipts.</div>",
    )
    report = _import(loci, brain, enex_file(tmp_path / "later", "Recipes", edited))
    assert report.counts["update"] == 1 and report.counts["unchanged"] == 1
    ids = {o.name: o.document_id for o in first.outcomes}
    assert {o.name: o.document_id for o in report.outcomes} == ids
    assert any("fridge" in t for t in texts(loci, brain, "fridge"))
    assert len(loci.library.documents(brain)) == count


def test_a_dry_run_writes_nothing(loci: Loci, brain: Brain, tmp_path: Path) -> None:
    report = loci.importing.run(
        brain, "evernote", enex_file(tmp_path, "Recipes", recipes()), dry_run=True
    )
    assert report.dry_run and report.counts["add"] == 2
    assert loci.library.documents(brain) == []


@pytest.mark.both_backends
def test_a_hostile_export_imports_nothing_and_a_broken_note_fails_alone(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    laughs = tmp_path / "laughs.enex"
    laughs.write_text(billion_laughs())
    with pytest.raises(ExportRefused, match="declares XML entities"):
        loci.importing.run(brain, "evernote", laughs)
    xxe = tmp_path / "xxe.enex"
    xxe.write_text(external_entity("file:///etc/passwd"))
    with pytest.raises(ExportRefused, match="declares XML entities"):
        loci.importing.run(brain, "evernote", xxe)
    assert loci.library.documents(brain) == []
    notes = [Note("Broken", "", raw_content="<en-note><div>oops</en-note>"), *recipes()]
    report = _import(loci, brain, enex_file(tmp_path, "Mixed", notes))
    assert report.counts["add"] == 2 and report.counts["fail"] == 1
    (failed,) = [o for o in report.outcomes if o.action == "fail"]
    assert failed.name == "Broken" and "not well-formed" in (failed.reason or "")
    assert {d.title for d in loci.library.documents(brain) if d.origin and "#" not in d.origin} == {
        "Feijoada",
        "Receipts",
    }


def _empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.txt").write_text("nothing here")
    return folder


def _text(words: str) -> SearchRequest:
    return SearchRequest(words, mode="text", limit=5)
