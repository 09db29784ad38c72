"""The one rule for the names people give brains and users: what URLs, tokens and the CLI
carry as they are (`loci.api.schemas.common.BRAIN_NAME` is its pattern for the API's schema),
and the one way two user names are compared (`user_key`)."""

from __future__ import annotations

import re
import unicodedata

from loci.errors import InvalidInput

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_name(kind: str, name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidInput(
            f"{kind} name {name!r} must be 1–64 letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    return name


def user_key(name: str) -> str:
    """The form in which user names are looked up, kept unique and counted by the sign-in
    limiter: NFKC, case folded, accents dropped.

    Computed here, once, and never by a database: SQLite's NOCASE folds ASCII only, and
    PostgreSQL's `lower()` follows the server's locale (`lower('İ')` is `i` there, while
    Python's casefold makes it `i` + a combining dot), so letting each side fold its own way
    gave one person several names — and several budgets of failed sign-ins. Stored names are
    ASCII (`check_name`), so every spelling that folds to a stored name's key means that user,
    on every backend; a key outside the name alphabet means no one.
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    bare = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


def is_user_key(key: str) -> bool:
    """Whether a stored user could have this key (if not, a look-up can stop here)."""
    return NAME_PATTERN.fullmatch(key) is not None
