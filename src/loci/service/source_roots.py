"""Where a folder may be registered: never Loci's own data; over the HTTP API, only inside one
of the server's allowed roots.

A folder named over the API is a path on the server, so registering one is confined to the
directories its administrator listed (`LOCI_SOURCES_ALLOWED_ROOTS`). The path is resolved first
— `..` collapsed and every symlink followed — so a link inside a root that points out of it is
judged by where it leads. The local CLI is the machine's owner and does not pass through here.

Neither surface registers Loci's data directory (its database, `secret.key`, `owner-token`,
blobs) or a folder inside it (`not_own_data`). Over the API a folder that holds the data
directory is refused too: allowed roots that hold it are a misconfiguration, said so at once.
From the CLI the owner may follow such a folder (a whole home folder); its walks never enter the
data directory (`loci.confined_paths`, by device and inode). Registration is only the first
check: a folder is confined again each time it is read or written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loci.confined_paths import NO_FENCE, Fence
from loci.errors import Forbidden, InvalidInput

ROOTS_SETTING = "LOCI_SOURCES_ALLOWED_ROOTS"


def not_own_data(folder: Path, fence: Fence) -> None:
    """Forbidden if the resolved `folder` is Loci's data directory or lies inside it."""
    own = fence.around(folder)
    if own is not None:
        raise Forbidden(
            f"{folder} is Loci's data directory or inside it ({own}): its database, keys and"
            " tokens are never a source"
        )


def confine(path: str, roots: Sequence[Path], fence: Fence = NO_FENCE) -> Path:
    """The resolved folder `path` names, if it lies inside one of `roots` and neither is nor
    holds Loci's own data; else Forbidden."""
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
            not_own_data(resolved, fence)
            held = fence.within(resolved)
            if held is not None:
                raise Forbidden(
                    f"{path} holds Loci's data directory ({held}); over the API a folder that"
                    " holds it is never registered — register the folders beside it"
                )
            return resolved
    listed = ", ".join(str(r) for r in roots)
    raise Forbidden(f"{path} is not inside a folder this server allows ({listed}; {ROOTS_SETTING})")
