"""Rows to models on PostgreSQL: psycopg decodes json and jsonb columns itself."""

from __future__ import annotations

from loci.store.model_rows import ModelRows

ROWS = ModelRows(lambda value: value)
