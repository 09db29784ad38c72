"""Slack identities, webhook signing secrets and handled delivery ids in SQLite (the logic and
SQL are shared: `loci.store.integration_tables`). Every write takes the database's one write
lock, so two handlers of the same retried delivery cannot both win its claim."""

from __future__ import annotations

import apsw

from loci.store.integration_tables import IntegrationTables


class SqliteIntegrations(IntegrationTables):
    foreign_key_error = apsw.ConstraintError
