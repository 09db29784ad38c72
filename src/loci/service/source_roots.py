"""Where the HTTP API may register a folder: inside one of the server's allowed roots.

A folder named over the API is a path on the server, so registering one is confined to the
directories its administrator listed (`LOCI_SOURCES_ALLOWED_ROOTS`). The path is resolved first
— `..` collapsed and every symlink followed — so a link inside a root that points out of it is
judged by where it leads. The local CLI is the machine's owner and does not pass through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loci.errors import Forbidden, InvalidInput

ROOTS_SETTING = "LOCI_SOURCES_ALLOWED_ROOTS"


def confine(path: str, roots: Sequence[Path]) -> Path:
    """The resolved folder `path` names, if it lies inside one of `roots`; else Forbidden."""
    if not roots:
        raise Forbidden(
            f"this server registers no folders over the API: its administrator lists the"
            f" directories allowed in {ROOTS_SETTING} (or uses `loci sources add` on the server)"
        )
    given = Path(path)
    if not given.is_absolute():
        # A path relative to the server's working directory (or its user's ~) means nothing
        # to the person sending it.
        raise InvalidInput(f"{path!r} is not an absolute path on the server")
    resolved = given.resolve()
    for root in roots:
        allowed = root.resolve()
        if resolved == allowed or allowed in resolved.parents:
            return resolved
    listed = ", ".join(str(r) for r in roots)
    raise Forbidden(f"{path} is not inside a folder this server allows ({listed}; {ROOTS_SETTING})")
