"""Slack identities, webhook signing secrets and handled delivery ids in PostgreSQL (the logic
and SQL are shared: `loci.store.integration_tables`).

Row-level security (migration 8): identities and secrets belong to a brain and carry its policy,
so the one tenant path — a brain's webhook reading its own secrets to verify a signature — runs
scoped to that brain; linking, listing across brains and revoking by id are administration, as
are Slack lookups that happen before the brain is known, and run across brains. Deliveries
belong to no brain: only such system transactions see them.
"""

from __future__ import annotations

from psycopg import errors

from loci.store.integration_tables import IntegrationTables


class PostgresIntegrations(IntegrationTables):
    foreign_key_error = errors.ForeignKeyViolation
