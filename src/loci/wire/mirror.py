"""`Mirror`: the base of response models that show a domain object field for field.

Both surfaces that speak JSON — the HTTP API's schemas and the MCP server's tool outputs — show
frozen dataclasses from `loci.models` and `loci.graph.results`. Where a response has the same
fields under the same names, it says so by being a Mirror, and `of` copies them (tuples become
lists), so a field added to the domain object cannot be forgotten in a hand-written copy. A
`Location` is one value inside but flat on the wire: its fields show beside the object's own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from loci.models import Location


class Mirror(BaseModel):
    """A response whose fields are, name for name, those of the domain object it shows: `of`
    copies them (tuples become lists). Models that choose or reshape fields write their own."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def of(cls, value: Any) -> Self:
        location = getattr(value, "location", None)
        if isinstance(location, Location) and dataclasses.is_dataclass(value):
            shown = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            del shown["location"]
            return cls.model_validate({**shown, **location.flat()})
        return cls.model_validate(value)
