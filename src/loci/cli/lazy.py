"""A command group that starts without importing its commands.

Importing every command module (and through them the service layer, pydantic and the parsers)
cost `loci --version` most of a second of CPU. The group below knows each command's name, the
modules that make it and the line `loci --help` shows for it; a command's module is imported
only when that command runs or is looked up (`loci brains --help`, the generated docs).
The commands themselves are still made by each module's `register(app)`, so what runs, its
options and its own help are exactly what the module declares.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Entry:
    """One top-level command or group, as `loci --help` lists it."""

    # The `loci.cli` modules whose `register(app)` make it, in the order they must run.
    modules: tuple[str, ...]
    # The first paragraph of its help, exactly as written (tests/test_cli_startup.py checks it).
    summary: str
    hidden: bool = False


class _Commands(MutableMapping[str, Any]):
    """The group's commands by name, in the order of the entries; a command is built from its
    modules the first time it is asked for, with every other command those modules make."""

    def __init__(self, entries: Mapping[str, Entry]) -> None:
        self._entries = entries
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            entry = self._entries[name]  # KeyError for an unknown name, as a dict gives
            self._built.update(
                (made, command)
                for made, command in _build(entry.modules).items()
                if made in self._entries and self._entries[made].modules == entry.modules
            )
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the commands of `loci` are fixed by its entries")

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def _build(modules: tuple[str, ...]) -> Mapping[str, Any]:
    holder = typer.Typer()
    for module in modules:
        importlib.import_module(f"loci.cli.{module}").register(holder)
    return typer.main.get_group(holder).commands


class LazyGroup(TyperGroup):
    """A Typer group whose subcommands are the class's `entries`, imported when used."""

    entries: ClassVar[Mapping[str, Entry]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        if self.commands:  # commands registered on the Typer app itself would be ignored
            raise RuntimeError(f"a lazy group takes its commands from entries: {self.commands}")
        self.commands = _Commands(self.entries)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # The list of commands is drawn from the entries' summaries, loading nothing.
        listing = copy.copy(self)
        listing.commands = {
            name: TyperCommand(name=name, callback=None, help=entry.summary, hidden=entry.hidden)
            for name, entry in self.entries.items()
        }
        TyperGroup.format_help(listing, ctx, formatter)
