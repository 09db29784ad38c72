"""Models that say less than the full one: an MCP tool's result shows a subset of the fields the
HTTP API and `--json` show, so that a model reads only what it needs.

A subset is derived, not copied: `@subset(Full, "a", "b")` on a model gives it `Full`'s own
declarations of those fields (type, default, description), before the fields it declares
itself, and `derived` builds it from a full model's values. A field renamed or removed in the
full model breaks the subset when it is defined, not silently on the wire. A description may be
reworded for the reader (`describe`); fields a tool adds (an MCP resource's `uri`) are declared
on the model itself, as is a field it shows otherwise (its own declaration wins):

    @subset(HitOut, "document_id", "name", …)
    class Passage(Subset):
        uri: str

A type checker sees the model as declared, without the fields the decorator adds: read them from
the full model, or from the model's dump.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

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
) -> Callable[[type[Model]], type[Model]]:
    """A class decorator: the model it decorates, with `names` of `full`'s fields declared as
    `full` declares them, in the order given and before the model's own; `describe` rewords a
    field's description for this reader."""
    fields: dict[str, Any] = {}
    for name in names:
        info = copy.copy(full.model_fields[name])  # a KeyError names a field `full` lost
        if describe and name in describe:
            info.description = describe[name]
        fields[name] = (info.annotation, info)
    unknown = set(describe or ()) - set(names)
    if unknown:
        raise ValueError(f"describe names fields the subset has not: {sorted(unknown)}")
    shown = create_model(f"{full.__name__}Subset", __base__=Subset, **fields)

    def build(declared: type[Model]) -> type[Model]:
        # `declared` first, so its own declaration of a field wins; `shown` still comes first
        # in the field order, which follows the bases from the last.
        made = create_model(
            declared.__name__,
            __base__=(declared, shown),
            __module__=declared.__module__,
            __doc__=declared.__doc__,
        )
        return cast("type[Model]", made)  # a subclass of `declared`, as the bases say

    return build
