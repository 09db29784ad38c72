"""`loci import keep`: a Google Takeout of Keep (the zip, or the folder it was unpacked into)
read whole, each note a document with its labels as tags, its checklist as a task list, its
dates, pinned and archived kept, its attachments linked; trashed notes skipped; an older
export's HTML-only note read from its HTML; a broken note fails alone."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path

import pytest

from loci.imports.items import ExportRefused, Limits
from loci.models import Brain, Document
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.importing import Importing, ImportReport
from tests.support.exports import zip_of
from tests.support.keep_exports import PHOTO, keep_html, keep_note, keep_sample, keep_takeout, usec

UNTITLED = "Gate code for the allotment is 4711, padlock on the left shed."


def _import(loci: Loci, brain: Brain, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, "keep", path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


def _notes(loci: Loci, brain: Brain) -> dict[str, Document]:
    return {
        d.title or d.name: d
        for d in loci.library.documents(brain)
        if (d.origin or "").startswith("keep:") and "attached_to" not in d.metadata
    }


@pytest.mark.both_backends
def test_each_note_is_a_document_with_its_labels_checklist_dates_and_attachment(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, keep_takeout(tmp_path / "takeout.zip", keep_sample()))
    assert (report.counts["add"], report.counts["skip"], report.counts["fail"]) == (4, 1, 0)
    assert [(o.name, o.reason) for o in report.outcomes if o.action == "skip"] == [
        ("Old passwords", "in Keep's trash")
    ]
    notes = _notes(loci, brain)
    assert set(notes) == {"Bike repair", "Groceries", "Flat hunting 2019", UNTITLED}

    bike = notes["Bike repair"]
    assert bike.origin == "keep:Bike repair"
    assert set(bike.tags) == {"Bike", "Howto"}
    facts = bike.metadata["import"]
    assert facts["created"].startswith("2023-06-01T19:05:00")
    assert facts["updated"].startswith("2023-06-02T08:30:00")
    assert (facts["pinned"], facts["color"]) == (True, "YELLOW")
    assert facts["links"] == [
        "https://www.parktool.com/en-us/blog/repair-help/rear-derailleur-adjustment"
    ]
    hit = loci.searching.search(brain, SearchRequest("barrel adjuster", mode="text", limit=3))[0]
    assert hit.citation.document_id == bike.id
    assert hit.citation.heading_path == ("Bike repair",)
    # The photo the note lists as .jpeg, which Takeout wrote as .jpg, is found and linked.
    [photo] = bike.metadata["attachments"]
    assert photo["name"] == "1f9a7c2b3d.jpg"
    attached = loci.library.document(brain, photo["id"])
    assert attached.metadata["attached_to"] == bike.id
    assert loci.library.original(brain, attached.id) == PHOTO

    groceries = loci.library.document_text(brain, notes["Groceries"].id) or ""
    assert "- [x] oat milk" in groceries and "- [ ] smoked paprika" in groceries
    assert notes["Groceries"].tags == ("Shopping",)

    archived = notes["Flat hunting 2019"].metadata["import"]
    assert (archived["archived"], archived["where"]) == (True, ["Google Keep", "Archive"])
    assert "pinned" not in archived
    # An untitled note is named by its first words and keyed by the name Takeout gave it.
    assert notes[UNTITLED].origin == "keep:2023-07-14T21_14_09.481+02_00"
    assert not any("do not keep this" in (loci.library.document_text(brain, d.id) or "")
                   for d in notes.values())  # fmt: skip


@pytest.mark.both_backends
def test_a_second_run_adds_nothing_and_an_edited_note_updates_its_document(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    notes = keep_sample()
    first = _import(loci, brain, keep_takeout(tmp_path / "a.zip", notes))
    ids = {o.name: o.document_id for o in first.outcomes if o.document_id}
    again = _import(loci, brain, keep_takeout(tmp_path / "a.zip", notes))
    assert again.counts == {"add": 0, "update": 0, "unchanged": 4, "fail": 0, "skip": 1}

    edited = copy.deepcopy(notes)
    edited["Groceries"]["listContent"].append({"text": "sourdough flour", "isChecked": False})
    edited["Groceries"]["userEditedTimestampUsec"] = usec("2023-06-09 09:00")
    report = _import(loci, brain, keep_takeout(tmp_path / "b.zip", edited))
    assert (report.counts["update"], report.counts["unchanged"]) == (1, 3)
    updated = next(o for o in report.outcomes if o.action == "update")
    assert (updated.name, updated.document_id) == ("Groceries", ids["Groceries"])
    assert len(_notes(loci, brain)) == 4
    text = loci.library.document_text(brain, ids["Groceries"]) or ""
    assert "- [ ] sourdough flour" in text

    # The same Takeout unpacked into a folder is the same notes.
    folder = tmp_path / "unpacked"
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        archive.extractall(folder)
    unpacked = _import(loci, brain, folder / "Takeout")
    assert unpacked.counts["unchanged"] == 4 and unpacked.counts["add"] == 0


def test_a_dry_run_says_what_it_would_do_and_writes_nothing(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = loci.importing.run(
        brain, "keep", keep_takeout(tmp_path / "t.zip", keep_sample()), dry_run=True
    )
    assert report.dry_run and (report.counts["add"], report.counts["skip"]) == (4, 1)
    assert next(o for o in report.outcomes if o.name == "Bike repair").attachments == 1
    assert loci.library.documents(brain) == []


def test_a_note_of_an_older_export_is_read_from_its_html(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    html = keep_html(
        "Packing list",
        "For the Dolomites trip\nbring the via ferrata set",
        checklist=[("headlamp", True), ("blister plasters", False)],
        labels=["Travel"],
        archived=True,
    )
    path = keep_takeout(tmp_path / "old.zip", {}, html_only={"Packing list": html})
    report = _import(loci, brain, path)
    assert report.counts["add"] == 1
    [note] = _notes(loci, brain).values()
    assert (note.title, note.tags, note.origin) == (
        "Packing list",
        ("Travel",),
        "keep:Packing list",
    )
    assert note.metadata["import"]["archived"] is True
    text = loci.library.document_text(brain, note.id) or ""
    assert "For the Dolomites trip\nbring the via ferrata set" in text
    assert "- [x] headlamp" in text and "- [ ] blister plasters" in text


def test_entities_in_a_notes_html_are_not_expanded_nor_fetched(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-7781")
    laughs = "".join(
        f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10 if i else "lol"}">' for i in range(9)
    )
    hostile = (
        keep_html("Hostile", "&xxe; &l8;")
        .replace(
            "<!DOCTYPE html>",
            f'<!DOCTYPE html [<!ENTITY xxe SYSTEM "file://{secret}">{laughs}]>',
        )
        .replace("&amp;xxe; &amp;l8;", "&xxe; &l8;")
    )
    report = _import(loci, brain, keep_takeout(tmp_path / "h.zip", {}, html_only={"H": hostile}))
    assert (report.counts["add"], report.counts["fail"]) == (1, 0)
    [note] = _notes(loci, brain).values()
    text = loci.library.document_text(brain, note.id) or ""
    assert note.title == "Hostile"
    assert "TOPSECRET" not in text and text.count("lol") < 10


def test_a_broken_note_fails_alone_and_a_takeout_without_keep_is_refused(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    broken = {
        "Truncated.json": json.dumps(keep_sample()["Groceries"]).encode()[:40],
        "Latin.json": json.dumps({"title": "Café", "textContent": "crème"}).encode("utf-16"),
    }
    # A note whose JSON is cut short is read from its HTML twin, which says the same.
    broken["Pancakes.json"] = b'{"title": "Pancakes", "textContent": "two eggs'
    broken["Pancakes.html"] = keep_html("Pancakes", "two eggs, a cup of buttermilk").encode()
    report = _import(loci, brain, keep_takeout(tmp_path / "b.zip", keep_sample(), raw=broken))
    assert report.counts["add"] == 5
    assert "buttermilk" in (
        loci.library.document_text(brain, _notes(loci, brain)["Pancakes"].id) or ""
    )
    failures = {o.name: o.reason for o in report.outcomes if o.action == "fail"}
    assert set(failures) == {"Truncated.json", "Latin.json"}
    assert (failures["Truncated.json"] or "").startswith("not valid JSON (")
    assert failures["Latin.json"] == "not UTF-8 text, as Takeout writes it"

    whole = keep_takeout(tmp_path / "whole.zip", keep_sample()).read_bytes()
    cut = tmp_path / "takeout-cut.zip"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ExportRefused, match="not a readable zip"):
        loci.importing.run(brain, "keep", cut)
    other = zip_of(tmp_path / "photos.zip", {"Takeout/Google Photos/a.jpg": PHOTO})
    plain = tmp_path / "notes.txt"
    plain.write_text("a note\n")
    for path in (other, plain):
        with pytest.raises(ExportRefused, match="no Google Keep notes"):
            loci.importing.run(brain, "keep", path)
    assert len(loci.library.documents(brain)) == 6  # the five notes and the photo


def test_a_symbolic_link_in_an_unpacked_takeout_is_not_followed(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "diary.json"
    outside.parent.mkdir()
    outside.write_text(json.dumps({"title": "Diary", "textContent": "SECRET-DIARY-5521"}))
    folder = tmp_path / "unpacked"
    with zipfile.ZipFile(keep_takeout(tmp_path / "t.zip", keep_sample())) as archive:
        archive.extractall(folder)
    (folder / "Takeout" / "Keep" / "Diary.json").symlink_to(outside)
    report = _import(loci, brain, folder)
    assert report.counts["add"] == 4
    assert "Diary" not in _notes(loci, brain)


def test_more_notes_than_the_limit_refuse_the_export_before_anything_is_written(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    notes = {f"Note {n}": keep_note(f"Note {n}", textContent=f"line {n}") for n in range(6)}
    small = Importing(loci.library, Limits(max_items=5))
    with pytest.raises(ExportRefused, match="more than 5 items"):
        small.run(brain, "keep", keep_takeout(tmp_path / "t.zip", notes))
    assert loci.library.documents(brain) == []
