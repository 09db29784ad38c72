"""Rows to the store's models (Brain, Document, Chunk, Job), the same on every backend.

Columns are matched to the model's fields by name (`idx` is `index`); columns the model does not
have (`generation` on brains, `brain_id` on chunks) are dropped. JSON columns arrive as the
backend stores them — text in SQLite, decoded values from PostgreSQL — so each backend passes
its decoder; lists become tuples, a document's progress a `Progress`, SQLite's 0/1 a bool. A
chunk's location columns (page, lines, characters, OCR region and confidence, recording time)
become its one `Location`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, TypeVar

from loci.models import Brain, Chunk, Document, Job, Location, Progress, region_of
from loci.store.schema import BOOL, JSON, JSON_ORDERED, columns_of_kind

T = TypeVar("T")
# The columns of the tables read into these models, by their kind in `loci.store.schema`; a
# document's progress is JSON too, made a `Progress` below.
MODEL_TABLES = ("brains", "documents", "chunks", "jobs", "document_versions")
JSON_COLUMNS = (
    columns_of_kind(JSON, MODEL_TABLES) | columns_of_kind(JSON_ORDERED, MODEL_TABLES)
) - {"progress"}
TUPLE_COLUMNS = frozenset({"tags", "heading_path"})
BOOL_COLUMNS = columns_of_kind(BOOL, MODEL_TABLES)  # 0/1 in SQLite
RENAMED = {"idx": "index"}


@functools.cache
def _field_names(cls: type) -> frozenset[str]:  # model classes are hashable
    return frozenset(f.name for f in fields(cls))


class ModelRows:
    def __init__(self, decode_json: Callable[[Any], Any]) -> None:
        self.decode_json = decode_json

    def model(self, cls: type[T], row: Mapping[str, Any]) -> T:
        names = _field_names(cls)  # type: ignore[arg-type]
        values: dict[str, Any] = {}
        for column, value in row.items():
            name = RENAMED.get(column, column)
            if name not in names:
                continue
            if column in JSON_COLUMNS:
                value = self.decode_json(value)
                if column in TUPLE_COLUMNS:
                    value = tuple(value)
            elif column in BOOL_COLUMNS:
                value = bool(value)
            elif column == "progress":
                value = Progress.of(self.decode_json(value) if value is not None else None)
            values[name] = value
        return cls(**values)

    def brain(self, row: Mapping[str, Any]) -> Brain:
        return self.model(Brain, row)

    def document(self, row: Mapping[str, Any]) -> Document:
        return self.model(Document, row)

    def chunk(self, row: Mapping[str, Any]) -> Chunk:
        return self.model(Chunk, {**row, "location": location_of(row)})

    def job(self, row: Mapping[str, Any]) -> Job:
        return self.model(Job, row)


def location_of(row: Mapping[str, Any]) -> Location:
    """A chunk row's location columns as one value (the region is stored as its text)."""
    return Location(
        page=row["page"],
        line_start=row["line_start"],
        line_end=row["line_end"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        region=region_of(row["region"]),
        ocr_confidence=row["ocr_confidence"],
        time_start=row["time_start"],
        time_end=row["time_end"],
    )
