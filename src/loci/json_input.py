"""Reading JSON someone else wrote (a webhook's body, a file to import).

Python's parser recurses once per nesting level, so a body of 100,000 `[` raises
`RecursionError` rather than `ValueError`; here both are what they are to the sender — input
that cannot be read — and become `InvalidInput` with a reason.
"""

from __future__ import annotations

import json
from typing import Any

from loci.errors import InvalidInput


def read_json(data: str | bytes, what: str) -> Any:
    """`data` parsed; `InvalidInput` naming `what` ("the body", a file's name) if it cannot be."""
    try:
        return json.loads(data)
    except RecursionError:
        raise InvalidInput(f"{what} nests too deeply to be read as JSON") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidInput(f"{what} is not JSON: {error}") from None
