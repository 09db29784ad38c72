"""The service worker the server serves at /sw.js: `static/sw.js` with the app's shell — every
file the web app is made of — and a digest of their contents filled in. A new version of the app
is so a new worker, and browsers replace the cached shell with it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

# Documentation beside the libraries, and the worker itself: not part of the shell.
_NOT_SHELL = {"sw.js", "README.md", "LICENSES.txt"}


def service_worker(static: Path) -> str:
    files = sorted(p for p in static.rglob("*") if p.is_file() and p.name not in _NOT_SHELL)
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(static).as_posix().encode())
        digest.update(file.read_bytes())
    shell = ["/", "/manifest.webmanifest"]
    shell += [
        f"/static/{p.relative_to(static).as_posix()}" for p in files if p.name != "index.html"
    ]
    source = (static / "sw.js").read_text(encoding="utf-8")
    source = source.replace("const SHELL = [];", f"const SHELL = {json.dumps(shell)};", 1)
    return source.replace('const VERSION = "";', f'const VERSION = "{digest.hexdigest()[:16]}";', 1)
