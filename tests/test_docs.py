"""The documentation as a contract: the generated references (docs/cli.md, docs/configuration.md,
docs/benchmarks.md) are current, every command, option and setting says what it does, the docs
name only settings that exist, every link between the docs lands, and the README stays a page a
newcomer reads in two minutes with a map of every doc."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import typer
from scripts import gen_docs

from loci.cli.main import app
from loci.config import ENVIRONMENT_ONLY, OidcProviderSettings, Settings
from tests.support.paths import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
# Hand-written docs: the generated ones are checked against their sources instead.
WRITTEN = [
    README,
    *(p for p in sorted(DOCS.glob("*.md")) if f"docs/{p.name}" not in gen_docs.GENERATED),
]


def shown_commands() -> list[tuple[str, object]]:
    root = typer.main.get_command(app)
    return [(name, c) for name, c in gen_docs.commands(root) if not getattr(c, "hidden", False)]


def test_the_generated_references_are_current() -> None:
    stale = gen_docs.stale()
    assert stale == [], (
        f"stale: {', '.join(stale)} — run `PYTHONPATH=src python scripts/gen_docs.py`"
    )


def test_the_check_names_the_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in gen_docs.GENERATED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    assert gen_docs.main(["--check"], root=tmp_path) == 0
    cli = tmp_path / "docs" / "cli.md"
    cli.write_text(cli.read_text().replace("## loci add\n", "## loci add-things\n"))
    assert gen_docs.main(["--check"], root=tmp_path) == 1
    assert "docs/cli.md is stale" in capsys.readouterr().err
    assert gen_docs.stale(tmp_path) == ["docs/cli.md"]


def test_every_command_and_option_says_what_it_does() -> None:
    reference = (DOCS / "cli.md").read_text()
    commands = shown_commands()
    assert len(commands) > 80  # the walk found the groups' subcommands too
    for name, command in commands:
        assert gen_docs.help_text(command), f"`{name}` has no help text"
        for param in command.params:  # type: ignore[attr-defined]
            if not getattr(param, "hidden", False):
                assert param.help, f"`{name}`: {param.opts or param.name} has no help"
        if name != "loci":
            assert f"\n## {name}\n" in reference, f"`{name}` is missing from docs/cli.md"


def test_every_setting_says_what_it_does() -> None:
    reference = (DOCS / "configuration.md").read_text()
    for model in (Settings, OidcProviderSettings):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
    for name in Settings.model_fields:
        assert f"| `LOCI_{name.upper()}` |" in reference, f"LOCI_{name.upper()} is not in the docs"
    for name in OidcProviderSettings.model_fields:
        assert f"| `{name}` |" in reference
    for name in ENVIRONMENT_ONLY:
        assert f"| `{name}` |" in reference
    # The one the hand-kept table had lost:
    assert "| `LOCI_JOB_RETRY_BASE_S` |" in reference


def test_the_docs_name_only_settings_that_exist() -> None:
    real = {f"LOCI_{name.upper()}" for name in Settings.model_fields} | set(ENVIRONMENT_ONLY)
    tests = "".join(p.read_text() for p in (REPO / "tests").rglob("*.py"))
    for doc in WRITTEN:
        if doc.name == "benchmarks-journal.md":  # dated notes, kept as they were written
            continue
        for name in set(re.findall(r"LOCI_[A-Z0-9_]+", doc.read_text())):
            if name.endswith("_"):  # `LOCI_LLM_*`: a family of settings
                assert any(r.startswith(name) for r in real), f"{doc.name}: {name}*"
            elif name not in real:
                # A variable of the test suite's own (`LOCI_FUZZ_EXAMPLES`) is real too.
                used_by_tests = f'"{name}"' in tests
                assert used_by_tests, f"{doc.name} names {name}, which is no setting"


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for a Markdown file's headings (repeats get -1, -2, …)."""
    seen: dict[str, int] = {}
    found = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = re.match(r"^#{1,6} (.+)$", line)
        if in_code or heading is None:
            continue
        base = gen_docs.slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("doc", [README, *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_link_between_the_docs_lands(doc: Path) -> None:
    for target in links(doc):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        landing = (doc.parent / file).resolve() if file else doc
        assert landing.exists(), f"{doc.name}: {target} leads to no file"
        if anchor and landing.suffix == ".md":
            assert anchor in anchors(landing), f"{doc.name}: {target} leads to no heading"


def test_the_readme_is_a_page_with_a_map_of_the_docs() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert "make demo" in text and "make test" in text  # .ci/run runs `make test`
    assert "LOCI_HOME" in text and "~/.local/share/loci" in text  # where the data lives
    for doc in sorted(DOCS.glob("*.md")):
        assert f"](docs/{doc.name})" in text, f"the README's map lacks docs/{doc.name}"


def test_the_guide_to_bringing_things_in_names_every_kind_loci_takes() -> None:
    from loci.imports.readers import KINDS as IMPORT_KINDS
    from loci.upstream.kinds import KINDS as SOURCE_KINDS

    guide = (REPO / "docs" / "bringing-things-in.md").read_text()
    for kind in IMPORT_KINDS:
        assert f"`{kind.name}`" in guide, kind.name
    for source in SOURCE_KINDS:
        assert source.name in guide.lower(), source.name
