"""Models that say less than the full one: an MCP tool's result shows a subset of the fields the
HTTP API and `--json` show, so that a model reads only what it needs.

A subset is derived, not copied: `subset(Full, "a", "b")` is a base class whose fields are
`Full`'s own declarations (type, default, description), and `derived` builds it from a full
model's values. A field renamed or removed in the full model breaks the subset when it is
defined, not silently on the wire. A description may be reworded for the reader (`describe`);
fields a tool adds (an MCP resource's `uri`) are declared on the subclass:

    _PassageFields = subset(HitOut, "document_id", "name", …)

    class Passage(_PassageFields):  # type: ignore[misc,valid-type]
        uri: str

(a type checker cannot follow a base class made at run time, hence the ignore).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, create_model


class Subset(BaseModel):
    """The base of every derived model (`subset`)."""


Model = TypeVar("Model", bound=BaseModel)


def derived(model: type[Model], full: BaseModel, **more: Any) -> Model:
    """`model` built from `full`'s values for the fields it has (the rest left out), with `more`
    given for the fields only it has or shows otherwise."""
    return model.model_validate({**full.model_dump(), **more})


def subset(
    full: type[BaseModel], *names: str, describe: Mapping[str, str] | None = None
) -> type[Subset]:
    """A base class holding `names` of `full`'s fields, declared as `full` declares them, in the
    order given; `describe` rewords a field's description for this reader."""
    fields: dict[str, Any] = {}
    for name in names:
        info = copy.copy(full.model_fields[name])  # a KeyError names a field `full` lost
        if describe and name in describe:
            info.description = describe[name]
        fields[name] = (info.annotation, info)
    unknown = set(describe or ()) - set(names)
    if unknown:
        raise ValueError(f"describe names fields the subset has not: {sorted(unknown)}")
    return create_model(f"{full.__name__}Subset", __base__=Subset, **fields)
