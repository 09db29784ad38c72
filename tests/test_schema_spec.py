"""The declared schema (`loci.store.schema`) is the schema the migrations make.

On each backend a database is made twice — once by running every migration, once from the spec
alone (`create_all`) — and the two are read back from the database's own catalogue and compared:
tables and their columns in order (type, NOT NULL, default, identity or AUTOINCREMENT,
collation), keys, foreign keys, checks, indexes, triggers, the FTS5 table, PostgreSQL's
functions and row-level security. A migration that changes what the spec does not say, or a
spec edit without its migration, fails here.

Also: every table holding a brain's rows has its row-level security policy on PostgreSQL, and
a new step written once (`schema.Step`) makes what the hand-written steps made.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import apsw
import psycopg
import pytest

from loci.store import schema
from loci.store.postgres.migrations import MIGRATIONS as POSTGRES_MIGRATIONS
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from tests.support.pg import OWNER_ROLE, EmbeddedPostgres

BOOKKEEPING = {"schema_migrations"}  # the migrations' own record, not part of the schema
# The tables that hold no brain's rows and are seen by every transaction: accounts and what
# hangs off them (a user's tokens, sessions, model), and the blob store addressed by hash.
ACCOUNT_WIDE = {"users", "api_tokens", "web_sessions", "user_llm", "blobs"}


def _flat(sql: str) -> str:
    """SQL as a comparable line: comments dropped, whitespace collapsed, none inside brackets."""
    sql = re.sub(r"--[^\n]*", "", sql)
    sql = " ".join(sql.split())
    return sql.replace("( ", "(").replace(" )", ")").strip().rstrip(";").strip()


def _checks(sql: str) -> list[str]:
    """The CHECK clauses of a CREATE TABLE, each with its balanced brackets."""
    found = []
    for match in re.finditer(r"CHECK\s*\(", sql):
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(sql)):
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            if depth == 0:
                break
        found.append(_flat(sql[match.start() : end + 1]))
    return sorted(found)


def _sql_of(conn: apsw.Connection, name: str) -> str:
    return str(
        conn.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (name,)).fetchall()[0][0]
    )


def _sqlite_catalogue(path: Path) -> dict[str, Any]:
    conn = apsw.Connection(str(path))
    try:
        tables: dict[str, Any] = {}
        listed = conn.execute("PRAGMA table_list").fetchall()
        for database, listed_name, kind, _ncol, without_rowid, _strict in listed:
            name = str(listed_name)
            if database != "main" or name in BOOKKEEPING or name.startswith("sqlite_schema"):
                continue
            sql = _sql_of(conn, name)
            if kind == "virtual":
                tables[name] = {"virtual": _flat(sql)}
                continue
            columns = []
            for _cid, column, declared, notnull, default, pk in conn.execute(
                f"PRAGMA table_info('{name}')"
            ):
                # (declared type, collation, NOT NULL, primary key, AUTOINCREMENT)
                metadata = conn.column_metadata("main", name, str(column))
                columns.append((column, declared, notnull, default, pk, metadata))
            keys: dict[int, list[Any]] = {}
            for key_id, _seq, target, source, to, on_update, on_delete, _match in conn.execute(
                f"PRAGMA foreign_key_list('{name}')"
            ):
                keys.setdefault(key_id, [target, [], [], on_update, on_delete])
                keys[key_id][1].append(source)
                keys[key_id][2].append(to)
            indexes = []
            for _seq, index, unique, origin, partial in conn.execute(
                f"PRAGMA index_list('{name}')"
            ):
                indexed = [r[2] for r in conn.execute(f"PRAGMA index_info('{index}')")]
                # An index of a key or UNIQUE constraint is named by its position: compare
                # what it indexes; one made by CREATE INDEX by its name and SQL.
                named = ("", "")
                if origin == "c":
                    named = (str(index), _flat(_sql_of(conn, str(index))))
                indexes.append((origin, unique, partial, indexed, named))
            tables[name] = {
                "kind": kind,
                "without_rowid": without_rowid,
                "columns": columns,
                "foreign_keys": sorted(repr(k) for k in keys.values()),
                "indexes": sorted(repr(i) for i in indexes),
                "checks": _checks(sql),
            }
        triggers = {
            name: _flat(sql)
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'"
            )
        }
        return {"tables": tables, "triggers": triggers}
    finally:
        conn.close()


def _postgres_catalogue(url: str) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    with psycopg.connect(url) as conn:
        for (name,) in conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace"
            " AND relkind = 'r'"
        ):
            if name in BOOKKEEPING:
                continue
            tables[name] = {
                "columns": conn.execute(
                    "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,"
                    " pg_get_expr(d.adbin, d.adrelid), a.attidentity FROM pg_attribute a"
                    " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
                    " WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped"
                    " ORDER BY a.attnum",
                    (name,),
                ).fetchall(),
                "constraints": sorted(
                    conn.execute(
                        "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint"
                        " WHERE conrelid = %s::regclass",
                        (name,),
                    ).fetchall()
                ),
                "indexes": sorted(
                    conn.execute(
                        "SELECT indexname, indexdef FROM pg_indexes"
                        " WHERE schemaname = 'public' AND tablename = %s",
                        (name,),
                    ).fetchall()
                ),
                "security": conn.execute(
                    "SELECT relrowsecurity, relforcerowsecurity FROM pg_class"
                    " WHERE oid = %s::regclass",
                    (name,),
                ).fetchall(),
                "policies": sorted(
                    conn.execute(
                        "SELECT policyname, permissive, roles::text, cmd, qual, with_check"
                        " FROM pg_policies WHERE schemaname = 'public' AND tablename = %s",
                        (name,),
                    ).fetchall()
                ),
            }
        functions = {
            name: _flat(definition)
            for name, definition in conn.execute(
                "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p"
                " WHERE p.pronamespace = 'public'::regnamespace AND NOT EXISTS (SELECT 1"
                " FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')"
            )
        }
        extensions = sorted(r[0] for r in conn.execute("SELECT extname FROM pg_extension"))
    return {"tables": tables, "functions": functions, "extensions": extensions}


def _assert_same(migrated: dict[str, Any], declared: dict[str, Any]) -> None:
    """Table by table, so a failure names the table and what differs."""
    assert sorted(migrated["tables"]) == sorted(declared["tables"])
    for name in migrated["tables"]:
        assert migrated["tables"][name] == declared["tables"][name], name
    for part in set(migrated) - {"tables"}:
        assert migrated[part] == declared[part], part


def test_the_spec_is_what_the_sqlite_migrations_make(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "migrated.db").close()
    built = apsw.Connection(str(tmp_path / "declared.db"))
    built.execute("PRAGMA foreign_keys=ON")
    with built:
        for statement in schema.create_all(schema.SQLITE):
            built.execute(statement)
    built.close()

    migrated = _sqlite_catalogue(tmp_path / "migrated.db")
    assert {"documents", "chunks", "chunks_fts", "vectors", "chunk_log"} <= set(migrated["tables"])
    assert len(migrated["triggers"]) == 3
    _assert_same(migrated, _sqlite_catalogue(tmp_path / "declared.db"))


def test_the_spec_is_what_the_postgres_migrations_make(postgres_server: EmbeddedPostgres) -> None:
    migrated_url = postgres_server.owner_url(postgres_server.new_database())
    name = "loci_declared_schema"
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    declared_url = postgres_server.url(name, OWNER_ROLE)
    try:
        with psycopg.connect(declared_url) as conn:
            for statement in schema.create_all(schema.POSTGRES):
                conn.execute(statement)
        migrated = _postgres_catalogue(migrated_url)
        assert {"documents", "chunks", "chunk_terms", "blobs"} <= set(migrated["tables"])
        assert {"loci_now", "loci_brain", "loci_ensure_vector_index"} <= set(migrated["functions"])
        _assert_same(migrated, _postgres_catalogue(declared_url))
    finally:
        postgres_server.drop_database(migrated_url)
        postgres_server.drop_database(declared_url)


def test_every_table_holding_a_brains_rows_has_its_row_level_security(
    postgres_server: EmbeddedPostgres,
) -> None:
    """Declared: a PostgreSQL table with a brain's id in its rows is scoped to that brain, one
    that has none is seen only across brains or is one of the few account-wide tables. Made:
    the migrated database enables and forces each declared policy, which reads the brain from
    the column the spec names."""
    declared: dict[str, str | None] = {}
    for table in schema.tables_on(schema.POSTGRES):
        names = {c.name for c in table.on(schema.POSTGRES)}
        if table.brain_key in names:
            assert table.rls == "brain", f"{table.name} holds a brain's rows but has no policy"
        elif table.rls is None:
            assert table.name in ACCOUNT_WIDE, f"{table.name}: say who may see its rows (rls)"
        declared[table.name] = table.rls
    assert sum(rls == "brain" for rls in declared.values()) >= 20

    url = postgres_server.owner_url(postgres_server.new_database())
    try:
        with psycopg.connect(url) as conn:
            found = {
                name: (secured, forced)
                for name, secured, forced in conn.execute(
                    "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class"
                    " WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'"
                )
            }
            policies: dict[str, list[tuple[str, str]]] = {}
            for table_name, policy, qual in conn.execute(
                "SELECT tablename, policyname, qual FROM pg_policies WHERE schemaname = 'public'"
            ):
                policies.setdefault(table_name, []).append((policy, qual))
    finally:
        postgres_server.drop_database(url)

    for name, rls in declared.items():
        table = schema.BY_NAME[name]
        if rls is None:
            assert found[name] == (False, False) and name not in policies, name
            continue
        assert found[name] == (True, True), f"{name}: row-level security is not enabled"
        [(policy, qual)] = policies.get(name, [("none", "")])
        if rls == "brain":
            assert policy == "brain_scope", name
            assert f"({table.brain_key} = ( SELECT loci_brain()" in qual, (name, qual)
        else:
            assert (policy, qual) == (
                "system_only",
                "( SELECT loci_all_brains() AS loci_all_brains)",
            )


# The hand-written steps a `Step` would have made as it was written: the same SQL, to the
# letter (whitespace aside), on both backends.
WRITTEN_ONCE = {
    14: schema.Step("Slack threads", tables=("slack_threads",)),
    19: schema.Step("earlier contents", tables=("document_versions",)),
    22: schema.Step("single sign-on", tables=("user_identities",)),
    24: schema.Step("who watches", tables=("source_watches",)),
    26: schema.Step("failure codes", columns=("documents.failure_code",)),
    27: schema.Step("origins", columns=("conversations.origin",)),
    30: schema.Step("gone files", columns=("documents.gone_at",)),
    32: schema.Step("queue order", indexes=("jobs.jobs_queued",)),
    33: schema.Step(
        "registration limits",
        columns=("oauth_clients.registered_from",),
        indexes=("oauth_clients.oauth_clients_registered_from",),
    ),
}


def _statements(sql: str) -> list[str]:
    return [_flat(s) for s in _flat(sql).split(";") if s.strip()]


@pytest.mark.parametrize("number", sorted(WRITTEN_ONCE))
def test_a_step_written_once_makes_what_the_hand_written_steps_made(number: int) -> None:
    step = WRITTEN_ONCE[number]
    for dialect, migrations in (
        (schema.SQLITE, SQLITE_MIGRATIONS),
        (schema.POSTGRES, POSTGRES_MIGRATIONS),
    ):
        written = migrations[number - 1]
        assert isinstance(written, str)
        assert _statements(step.sql(dialect)) == _statements(written), (number, dialect)


def test_steps_follow_the_frozen_baseline_on_both_backends() -> None:
    assert len(SQLITE_MIGRATIONS) == len(POSTGRES_MIGRATIONS) == schema.BASELINE + len(schema.STEPS)
    # A brain-scoped table added by a step comes with its policy on PostgreSQL, not on SQLite.
    step = schema.Step("pages watched", tables=("source_watches",))
    assert "CREATE POLICY brain_scope ON source_watches" in step.sql(schema.POSTGRES)
    assert "POLICY" not in step.sql(schema.SQLITE)
    # What one backend alone has is left out of the other's step.
    only_postgres = schema.Step("BM25 lengths", columns=("documents.lex_length",))
    assert only_postgres.sql(schema.SQLITE) == ""
    assert only_postgres.sql(schema.POSTGRES) == (
        "ALTER TABLE documents ADD COLUMN lex_length integer NOT NULL DEFAULT 0;"
    )


def test_the_spec_is_in_dependency_order() -> None:
    """Each table comes after those it points at: the order a whole schema is created in and
    `loci migrate` copies rows in."""
    seen: set[str] = set()
    for table in schema.TABLES:
        targets = {c.references.split(".")[0] for c in table.columns if c.references}
        targets |= {fk.table for fk in table.foreign_keys}
        assert targets - {table.name} <= seen, table.name
        seen.add(table.name)
