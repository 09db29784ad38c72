"""Which files of a followed tree a source takes: globs as a person writes them in .gitignore."""

from __future__ import annotations

import pytest

from loci.errors import InvalidInput
from loci.upstream.paths import path_filter

TREE = [
    "README.md",
    "notes/ideas.md",
    "notes/2026/december.md",
    "docs/guide.md",
    "docs/drafts/wip.md",
    "docs/manual.pdf",
    "src/app.py",
]


def taken(**options: object) -> list[str]:
    files = path_filter(options, max_bytes=1000)
    return [path for path in TREE if files.takes(path, 10)]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, TREE),
        ({"include": "*.md"}, [p for p in TREE if p.endswith(".md")]),
        ({"include": "notes/**/*.md"}, ["notes/ideas.md", "notes/2026/december.md"]),
        ({"include": "notes/*.md"}, ["notes/ideas.md"]),
        ({"include": "/README.md"}, ["README.md"]),
        ({"include": "docs/**"}, ["docs/guide.md", "docs/drafts/wip.md", "docs/manual.pdf"]),
        ({"include": ["*.md", "*.py"], "exclude": ["docs/drafts/**", "/README.md"]},
         ["notes/ideas.md", "notes/2026/december.md", "docs/guide.md", "src/app.py"]),
        ({"exclude": "*.pdf"}, [p for p in TREE if not p.endswith(".pdf")]),
        ({"include": "guide.?d"}, ["docs/guide.md"]),
    ],
)  # fmt: skip
def test_globs_take_what_a_gitignore_reader_expects(
    options: dict[str, object], expected: list[str]
) -> None:
    assert taken(**options) == expected


def test_files_over_the_size_limit_are_left_out() -> None:
    files = path_filter({"max_file_bytes": 100}, max_bytes=1000)
    assert files.takes("small.md", 100)
    assert not files.takes("big.md", 101)


def test_a_default_applies_only_when_nothing_is_included() -> None:
    markdown_only = path_filter({}, max_bytes=1000, default=lambda p: p.endswith(".md"))
    assert markdown_only.takes("a.md") and not markdown_only.takes("a.pdf")
    chosen = path_filter({"include": "*.pdf"}, max_bytes=1000, default=lambda p: False)
    assert chosen.takes("a.pdf")


@pytest.mark.parametrize(
    "options",
    [{"include": ""}, {"include": ["*.md", 3]}, {"exclude": "/"}, {"max_file_bytes": 0},
     {"max_file_bytes": "1 MB"}, {"include": 5}],
)  # fmt: skip
def test_bad_filters_are_refused_when_the_source_is_added(options: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        path_filter(options, max_bytes=1000)
