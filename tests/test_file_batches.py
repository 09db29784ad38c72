"""Files of a folder kept in batches (`add_files`): each ends as `add_bytes` would leave it — a
refused file fails alone, the same bytes dedupe, a path's document is updated in place — and
two writers racing on the same files leave one document a path, on both backends."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from loci.errors import LociError
from loci.models import Brain
from loci.service import Loci
from loci.service.adding import AddResult
from loci.service.file_batches import FileBytes, add_files

pytestmark = pytest.mark.both_backends


def _file(folder: Path, name: str, text: str) -> FileBytes:
    path = folder / name
    return FileBytes(name, text.encode(), str(path), {"file": {"size": len(text)}})


def test_a_batch_keeps_each_file_as_adding_it_alone_would(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    earlier = loci.library.add_bytes(
        brain, "plan.md", b"Plant beans in May.\n", source_path=str(tmp_path / "plan.md")
    ).document
    loci.store.add_tags(earlier.id, ["garden"])
    outcomes = add_files(
        loci.library,
        brain,
        [
            _file(tmp_path, "a.md", "Alpha.\n"),
            _file(tmp_path, "empty.md", ""),  # refused: fails alone
            _file(tmp_path, "copy.md", "Alpha.\n"),  # the same bytes as a.md: one document
            _file(tmp_path, "plan.md", "Plant beans in June.\n"),  # its path's document, updated
            _file(tmp_path, "b.md", "Beta.\n"),
        ],
    )
    a, empty, copy, plan, b = outcomes
    assert isinstance(empty, LociError) and "empty" in empty.message
    assert isinstance(a, AddResult) and isinstance(copy, AddResult)
    assert not a.deduped and copy.deduped and copy.document.id == a.document.id
    assert isinstance(plan, AddResult) and plan.refreshed
    assert plan.document.id == earlier.id and plan.document.tags == ("garden",)
    assert [v.size_bytes for v in loci.versions.list(brain, earlier.id).versions] == [20]
    assert isinstance(b, AddResult) and not b.deduped
    for result in (a, plan, b):
        assert loci.blobs.exists(result.document.content_hash)
    documents = loci.library.wait_for(brain, [a.document.id, plan.document.id, b.document.id])
    assert all(d.status == "ready" for d in documents)


def test_two_writers_racing_on_the_same_files_leave_one_document_a_path(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    files = [_file(tmp_path, f"n{i:02}.md", f"Note {i} of the race.\n") for i in range(40)]
    outcomes: list[list[AddResult | LociError]] = []
    start = threading.Barrier(2)

    def write() -> None:
        start.wait()
        outcomes.append(add_files(loci.library, brain, files))

    threads = [threading.Thread(target=write) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(outcomes) == 2
    assert all(isinstance(o, AddResult) for run in outcomes for o in run)
    paths = [str(d.source_path) for d in loci.library.documents(brain)]
    assert sorted(paths) == sorted(f.source_path for f in files)  # one each, none lost
