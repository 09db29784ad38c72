"""`shown` and `Mirror`: a wire model built from a domain object by its fields' names.

Both surfaces that speak JSON show frozen dataclasses from `loci.models` and
`loci.graph.results`. Where a wire model has the same fields under the same names, `shown` reads
each of them from the object (tuples become lists), so a field added to the domain object cannot
be forgotten in a hand-written copy; what the model shows otherwise (a brain's name, a value
worked out) is given by name. A `Location`, and a `Citation` with its location, are one value
inside but flat on the wire: their fields show beside the object's own. A `Mirror` is a model
that needs nothing given: its `of` is `shown`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict

from loci.models import Citation, Location

Model = TypeVar("Model", bound=BaseModel)


class _Attributes:
    """`value`'s attributes as a wire model reads them: `given` first, then the object's own,
    then its citation's and location's flat fields."""

    def __init__(self, value: Any, given: Mapping[str, Any]) -> None:
        flat: dict[str, Any] = {}
        citation = getattr(value, "citation", None)
        if isinstance(citation, Citation):
            flat.update(citation.flat())
        location = getattr(value, "location", None)
        if isinstance(location, Location):
            # a chunk's character offsets show too; a citation's stay inside (`Location.flat`)
            flat.update(location.flat(), char_start=location.char_start, char_end=location.char_end)
        self._value, self._given, self._flat = value, given, flat

    def __getattr__(self, name: str) -> Any:
        if name in self._given:
            return self._given[name]
        if name in self._flat:
            return self._flat[name]
        return getattr(self._value, name)


def shown(model: type[Model], value: Any, **given: Any) -> Model:
    """`value` as `model`: each field read from `given`, else from `value`'s attribute of that
    name (a citation's and a location's fields flat beside its own)."""
    return model.model_validate(_Attributes(value, given), from_attributes=True)


class Mirror(BaseModel):
    """A response whose fields are, name for name, those of the domain object it shows: `of`
    copies them (tuples become lists). Models that choose or reshape fields write their own."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def of(cls, value: Any) -> Self:
        if isinstance(value, Mapping):
            return cls.model_validate(value)
        return shown(cls, value)
