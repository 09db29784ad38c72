"""The core every surface calls (CLI, HTTP, MCP): `Loci` and the services it holds.

`facade` (`Loci`: brains, status, and the services below, wired once), `library` (adding,
reading, changing documents; the worker), `index_jobs` (what the worker runs to index),
`searching` (search, related documents) and `settings`; asking lives in `loci.answer.facade`,
digests in `loci.review.facade`. The names surfaces import are re-exported here so they keep
importing from `loci.service`, whichever module holds them.
"""

from loci.service.adding import AddResult, Upload
from loci.service.facade import Loci, Status
from loci.service.library import Library
from loci.service.searching import Searching
from loci.service.settings import ServiceSettings

__all__ = ["AddResult", "Library", "Loci", "Searching", "ServiceSettings", "Status", "Upload"]
