"""Everything the CLI shows a person: results on stdout, progress and errors on stderr.

With `--json`, stdout carries exactly one JSON document and nothing else, so scripts can pipe it.
Where the HTTP API shows the same thing (a document, a search hit, a preflight item, a graph page),
the command passes the API's response model (`loci.wire`), so both give the same fields
under the same names; the models are imported inside the commands, where they are used.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

# Exit codes, documented in docs/usage.md.
OK, FAILED, USAGE, NOT_FOUND, PARTIAL = 0, 1, 2, 3, 4


def to_jsonable(value: Any) -> Any:
    # A response model of `loci.wire` (tested by its method: importing pydantic here
    # would cost every command its start-up time, and few print JSON).
    if hasattr(value, "model_dump") and not isinstance(value, type):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for extra in ("matched_by",):
            if hasattr(value, extra):
                data[extra] = getattr(value, extra)
        return data
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2) + "\n")


def render_snippet(snippet: str, highlights: Sequence[tuple[int, int]], indent: int = 3) -> Text:
    """A search snippet with its matched terms highlighted from the offsets search returned;
    the text is shown as it is (`**` and `[` included: it is never read as markup)."""
    text = Text(" " * indent + snippet)
    for start, end in highlights:
        text.stylize("bold yellow", start + indent, end + indent)
    return text


def error_line(message: str) -> None:
    err.print(f"[red]error:[/red] {escape(' '.join(message.split()))}")


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def gone_mark(gone_at: str | None) -> str:
    """ " · file deleted 2026-12-04" for a document kept after its file was deleted."""
    return f" [yellow]· file deleted {gone_at[:10]}[/yellow]" if gone_at else ""
