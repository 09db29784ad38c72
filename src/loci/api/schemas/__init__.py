"""Request and response bodies of the HTTP API — separate from the storage rows they show.

One module per resource, as the routers in `loci.api.routes` are split; `common` holds what
several share. Each response model has a `of(...)` constructor from the domain model, so what
the API exposes is chosen field by field (a token's hash, for one, never leaves the store).
Import from the resource's module: this package re-exports nothing.
"""
