"""What the schema modules share: the error body, and the patterns and bounds several
resources' fields use, and the base every request body derives from."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, BeforeValidator, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from loci.names import NAME_SCHEMA_PATTERN
from loci.nul import PROBLEM, nul_at
from loci.wire.common import ErrorOut

# Brain and user names: letters of any script, digits, '.', '_', '-' (`loci.names.check_name`,
# which also refuses a name mixing Latin with Cyrillic or Greek).
BRAIN_NAME = NAME_SCHEMA_PATTERN


# Text the service refuses as empty (Python's `str.strip` also strips \x1c-\x1f, which a regex
# `\s` does not match) is refused by the schema already.
NOT_BLANK = r"[^\s\x1c-\x1f]"


# The largest id the API takes: ids are sequential, and above 2**53 a JSON number loses digits
# in many clients (and FastAPI writes the schema's bounds as floats).
MAX_ID = 2**53 - 1


def _json_integer(cls: type, value: object) -> object:
    """A field validator: JSON Schema's integer is a number with no fraction (3 or 3.0), never a
    string or a boolean, which pydantic's lax mode would take."""
    if isinstance(value, bool | str):
        raise ValueError("an integer is a JSON number")
    return value


def json_integers(*fields: str) -> Any:
    return field_validator(*fields, mode="before")(classmethod(_json_integer))


NUL_ERROR = "nul_character"  # the error type `loci.api.errors` answers with a 400


def _no_nul(value: object) -> object:
    where = nul_at(value)
    if where is not None:
        # pydantic's location names the field; `where` is the place inside it ("" for itself)
        raise PydanticCustomError(NUL_ERROR, PROBLEM, {"where": where})
    return value


# For a body or form parameter that is not a request model (a free-form JSON item, a form field).
NoNul = BeforeValidator(_no_nul)


class RequestIn(BaseModel):
    """What every request body derives from: no string in it, at any depth, may hold a NUL
    (`loci.nul`), whatever else its fields allow."""

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_nul(cls, value: object, info: ValidationInfo) -> object:
        return _no_nul(value)


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the error statuses a route can answer with."""
    return {status: {"model": ErrorOut} for status in statuses}
