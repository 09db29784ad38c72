"""Request bodies of the HTTP API: what a client sends, with the bounds and patterns each field
is checked against before a route runs.

One module per resource, as the routers in `loci.api.routes` are split; `common` holds what
several share. What the API answers with lives in `loci.wire`, which the CLI's `--json` and the
MCP tools show too. Import from the resource's module: this package re-exports nothing.
"""
