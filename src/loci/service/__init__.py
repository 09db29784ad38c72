"""The facade every surface calls (CLI, HTTP, MCP): add, search, ask, list, remove, …

One object, `Loci`, whose methods are split by concept across this package's modules: `facade`
(brains, reading, search, background work, status), `adding` (files, pages, notes, captures,
preflight) and `settings`; asking comes from `loci.answer.facade`. The names surfaces import are
re-exported here so they keep importing from `loci.service`, whichever module holds them.
"""

from loci.service.adding import AddResult, Upload
from loci.service.facade import Loci, Status
from loci.service.settings import ServiceSettings

__all__ = ["AddResult", "Loci", "ServiceSettings", "Status", "Upload"]
