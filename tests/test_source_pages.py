"""A vault followed as pages (`loci sources add VAULT --as pages`): what `loci brain import`
does once, kept in step on every sync — new notes become pages, edited ones update their page,
a renamed one keeps its page, a deleted one's page goes (or stays), wikilinks resolve again when
their target appears — and edits made in Loci are written back to the files, with `brain
sync`'s rule: a file changed on both sides is a conflict, reported, nothing overwritten, until
the person keeps one side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.graph.document import parse
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.sources import SourceSync
from tests.support.cli import run_cli

pytestmark = pytest.mark.both_backends

# A brain document that names no folder, in people/: its folder is the one it sits in.
BEN = "---\nid: ben\nkind: page\ntype: person\ntitle: Ben Okafor\n---\n\nBen bakes sourdough.\n"
GARDEN = "# The Garden\n\nRun by [[Ben Okafor|Ben]], fed by the [[Compost]] heap. [[Seeds]].\n"
SEEDS = "---\ntags: [garden]\n---\nSwap seeds each spring at the library.\n"


def _counts(result: SourceSync) -> dict[str, int]:
    report = result.as_report()
    keys = ("added", "updated", "renamed", "removed", "gone", "written", "unchanged")
    return {k: report[k] for k in keys if report[k]}


def _sync(loci: Loci, brain: Brain) -> SourceSync:
    (result,) = loci.sources.sync(brain).sources
    loci.library.wait_for(brain, result.queued)
    return result


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "notes").mkdir()
    (vault / ".obsidian").mkdir()
    (vault / "people" / "ben.md").write_text(BEN)
    (vault / "Garden.md").write_text(GARDEN)
    (vault / "notes" / "Seeds.md").write_text(SEEDS)
    (vault / ".obsidian" / "app.json").write_text("{}")
    return vault


def test_a_vault_is_kept_as_pages_as_its_files_change(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    vault = _vault(tmp_path)
    source = loci.sources.add(brain, vault, mode="pages")
    assert source.mode == "pages"
    first = _sync(loci, brain)
    assert _counts(first) == {"added": 3} and first.files == 3 and not first.failed
    ben = loci.graph.get(brain, "ben")
    assert ben.summary.path == "people/ben.md"  # no folder in its frontmatter: where it sits
    assert ben.content == BEN.replace("title: Ben Okafor\n", "title: Ben Okafor\nfolder: people\n")
    garden = loci.graph.get(brain, "garden").doc
    assert "[[page:ben|Ben]]" in garden.truth and "[[Compost]]" in garden.truth  # no such page
    hits = loci.searching.search(brain, SearchRequest("sourdough", mode="text"))
    assert hits and hits[0].citation.name == "people/ben.md"
    assert not loci.library.documents(brain, kind="file")  # pages, not file documents

    # The target of a link appears: the note that names it links to it now.
    (vault / "Compost.md").write_text("Worms, leaves and coffee grounds.\n")
    second = _sync(loci, brain)
    assert _counts(second) == {"added": 1, "updated": 1, "unchanged": 2}
    assert "[[page:compost|Compost]]" in loci.graph.get(brain, "garden").doc.truth

    # Edited, renamed and deleted files.
    (vault / "people" / "ben.md").write_text(BEN.replace("sourdough", "rye bread"))
    (vault / "notes" / "Seeds.md").rename(vault / "notes" / "Seed swap.md")
    (vault / "Compost.md").unlink()
    third = _sync(loci, brain)
    # The garden note links to no page now: its link is plain again (no broken page link).
    assert _counts(third) == {"updated": 2, "renamed": 1, "removed": 1}
    assert "rye bread" in loci.graph.get(brain, "ben").content
    assert "[[Compost]]" in loci.graph.get(brain, "garden").doc.truth
    seeds = loci.graph.get(brain, "seeds").doc  # the same page, from its new file
    assert seeds.extra["importedFrom"] == "notes/Seed swap.md"
    assert seeds.folder == "notes"
    # A link to the renamed note still reaches its page, by the old name or the new one.
    assert "[[page:seeds|Seeds]]" in loci.graph.get(brain, "garden").doc.truth
    (vault / "Library.md").write_text("The [[Seed swap]] is on Saturdays.\n")
    assert _counts(_sync(loci, brain)) == {"added": 1, "unchanged": 3}
    assert "[[page:seeds|Seed swap]]" in loci.graph.get(brain, "library").doc.truth
    (vault / "Library.md").unlink()
    with pytest.raises(Exception, match="compost"):
        loci.graph.get(brain, "compost")
    # Nothing changed: a sync changes nothing (but forget the library note).
    assert _counts(_sync(loci, brain)) == {"removed": 1, "unchanged": 3}
    assert _counts(_sync(loci, brain)) == {"unchanged": 3}


def test_edits_made_in_loci_are_written_to_the_files_and_a_double_edit_is_a_conflict(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    vault = _vault(tmp_path)
    source = loci.sources.add(brain, vault, mode="pages")
    _sync(loci, brain)
    ben_file = vault / "people" / "ben.md"

    # An agent's edit reaches the file at once (a hook on the graph's writes).
    loci.graph.append_timeline(brain, "ben", "Opened a bakery.", actor="agent", at="2026-05-01")
    assert ben_file.read_text() == loci.graph.get(brain, "ben").content
    assert "Opened a bakery." in ben_file.read_text()
    # A plain note Loci changed is written in the page's format: it is a brain document now.
    loci.graph.rewrite(brain, "garden", "Run by [[page:ben|Ben]]; no heap yet.", actor="web")
    garden_file = vault / "Garden.md"
    assert garden_file.read_text() == loci.graph.get(brain, "garden").content
    assert _counts(_sync(loci, brain)) == {"unchanged": 3}  # in step: nothing to do

    # Changed on both sides: a conflict, and neither side is overwritten.
    mine = ben_file.read_text().replace("Ben bakes sourdough.", "Ben bakes bagels.")
    ben_file.write_text(mine)
    loci.graph.rewrite(brain, "ben", "Ben bakes croissants.", actor="web")
    conflicted = _sync(loci, brain)
    assert [c.path for c in conflicted.conflicts] == ["people/ben.md"]
    assert "changed both in Loci and in its file" in conflicted.conflicts[0].reason
    assert ben_file.read_text() == mine
    assert "croissants" in loci.graph.get(brain, "ben").content
    assert not loci.sources.sync(brain).ok
    (listed,) = loci.sources.list(brain)
    assert listed.last_report and listed.last_report["conflicts"][0]["path"] == "people/ben.md"

    # Keeping the file's side: its text goes into the page; Loci's stays in the history.
    resolved = loci.sources.resolve(brain, source.id, "people/ben.md", "file")
    assert not resolved.conflicts and resolved.updated == 1
    assert loci.graph.get(brain, "ben").content == mine
    assert any("croissants" in v.content for v in loci.graph.history(brain, "ben"))

    # Keeping Loci's side: the page is written to the file.
    ben_file.write_text(mine.replace("bagels", "pretzels"))
    loci.graph.rewrite(brain, "ben", "Ben bakes baguettes.", actor="web")
    assert _sync(loci, brain).conflicts
    loci.sources.resolve(brain, source.id, "people/ben.md", "loci")
    assert "baguettes" in ben_file.read_text()
    assert _counts(_sync(loci, brain)) == {"unchanged": 3}

    # A page given a new id in Loci keeps its file; the pages linking to it follow, files too.
    loci.graph.move(brain, "ben", new_id="ben-okafor", actor="web")
    assert parse(ben_file.read_text()).id == "ben-okafor"
    assert "[[page:ben-okafor|Ben]]" in garden_file.read_text()
    assert _counts(_sync(loci, brain)) == {"unchanged": 3}

    # A page deleted in Loci: its file goes to the vault's .trash/, not into oblivion.
    loci.graph.delete(brain, "seeds", actor="web", confirm=True)
    assert not (vault / "notes" / "Seeds.md").exists()
    assert (vault / ".trash" / "notes" / "Seeds.md").read_text() == SEEDS
    assert _counts(_sync(loci, brain)) == {"unchanged": 2}


def test_a_kept_deleted_file_leaves_its_page_and_an_unmounted_vault_deletes_nothing(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    vault = _vault(tmp_path)
    loci.sources.add(brain, vault, mode="pages", on_delete="keep")
    _sync(loci, brain)
    (vault / "Garden.md").unlink()
    assert _counts(_sync(loci, brain)) == {"gone": 1, "unchanged": 2}
    assert loci.graph.get(brain, "garden").doc.title == "The Garden"

    for path in sorted(vault.rglob("*"), reverse=True):  # the drive is not mounted
        path.unlink() if path.is_file() else path.rmdir()
    unmounted = _sync(loci, brain)
    assert unmounted.unreachable is not None and "not mounted" in unmounted.unreachable
    assert loci.graph.get(brain, "ben").summary.path == "people/ben.md"


def test_the_commands_follow_a_vault_as_pages_and_resolve_a_conflict(
    tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "home"
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    vault = _vault(tmp_path)

    def cli(*args: str, code: int = 0) -> object:
        done = run_cli(*args, home=home, env=env)
        assert done.returncode == code, done.stderr
        return json.loads(done.stdout) if "--json" in args else done.stdout

    added = cli("sources", "add", str(vault), "--as", "pages", "--json")
    assert isinstance(added, dict) and added["mode"] == "pages"
    synced = cli("sync", "--json")
    assert isinstance(synced, dict) and synced["ok"] and synced["sources"][0]["added"] == 3
    edited = cli("brain", "append-timeline", "ben", "Won the village show.")
    assert "ben" in str(edited)
    ben_file = vault / "people" / "ben.md"
    assert "Won the village show." in ben_file.read_text()  # written back by the command

    ben_file.write_text(ben_file.read_text().replace("sourdough", "spelt"))
    cli("brain", "rewrite", "ben", "Ben bakes in the mornings.")
    conflicted = cli("sync", "--json", code=4)
    assert isinstance(conflicted, dict) and not conflicted["ok"]
    assert conflicted["sources"][0]["conflicts"][0]["path"] == "people/ben.md"
    listed = cli("sources", "list", "--json")
    assert isinstance(listed, list) and listed[0]["conflicts"][0]["path"] == "people/ben.md"
    shown = str(cli("sources", "list"))
    assert "pages" in shown
    resolved = cli("sources", "resolve", str(added["id"]), "people/ben.md", "--keep", "loci")
    assert "1 written" in str(resolved)
    assert "Ben bakes in the mornings." in ben_file.read_text()
    assert parse(ben_file.read_text()).folder == "people"
