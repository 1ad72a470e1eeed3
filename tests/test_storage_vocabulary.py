"""One source for the tables: the column lists of ``api/storage/records.py`` are what the
migrations create (SQLite's, the store of record, and the DuckDB tables the statistics
snapshot builds from SQLite's first migrations), and every SQL file is read through
``api/storage/sql.py``."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import duckdb
import pytest

from api.bench.bulk import TABLES
from api.bench.snapshot import duckdb_schema
from api.bench.stats_bench import SQLITE_TABLES
from api.storage.records import (
    BASE_COLUMNS,
    FACT_COLUMNS,
    RESPONSE_COLUMNS,
    ROW_TABLES,
    TABLE_COLUMNS,
)
from api.storage.sql import sql_files
from api.storage.sqlite import SQLiteStore

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def schema() -> dict[str, tuple[str, ...]]:
    """Every table of a freshly migrated DuckDB with its columns in order."""
    conn = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        for statement in duckdb_schema():
            conn.execute(statement)
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
        ).fetchall()
    finally:
        conn.close()
    tables: dict[str, tuple[str, ...]] = {}
    for table, column in rows:
        tables[table] = (*tables.get(table, ()), column)
    return tables


def test_the_declared_column_lists_are_the_migrated_tables(schema):
    declared = {**TABLE_COLUMNS, **RESPONSE_COLUMNS}
    assert sorted(schema) == sorted(declared)
    for table, columns in declared.items():
        assert schema[table] == columns, table


def test_the_declared_column_lists_are_the_tables_of_the_sqlite_store(tmp_path):
    from api.storage.convert import COPIED

    SQLiteStore(tmp_path / "s.sqlite3").close()
    conn = sqlite3.connect(tmp_path / "s.sqlite3")
    try:
        for table, columns in {**TABLE_COLUMNS, **RESPONSE_COLUMNS}.items():
            found = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            if table in ("games", "stammtische"):  # 0014's and 0016's columns: copied,
                columns = COPIED[table]  # not bulk-loaded (the bulk load takes the default)
            assert tuple(found) == columns, table
    finally:
        conn.close()


def test_the_lists_derive_from_one_another():
    assert TABLE_COLUMNS == {**BASE_COLUMNS, **FACT_COLUMNS}
    assert set(ROW_TABLES) == set(FACT_COLUMNS) - {"game_facts"}
    assert TABLES is TABLE_COLUMNS  # the bulk loader
    assert set(SQLITE_TABLES) == set(TABLE_COLUMNS) - {"game_log"}  # the benchmark


def test_the_bulk_loader_has_one_statement_per_table():
    assert set(sql_files("api.bench", "load")) == set(TABLE_COLUMNS)


def test_every_statement_is_written_once_for_both_sql_stores():
    """The relational adapter's statements compile for SQLite and PostgreSQL alike; each
    store adds only its own (the outbox write, the claim, locks)."""
    from api.storage import PostgresRepository, SQLiteRepository
    from api.storage.statements import SQL

    for repo in (SQLiteRepository, PostgresRepository):
        assert set(SQL) <= set(repo._sql_of)  # noqa: SLF001
        assert all(s and "{least}" not in s and "{greatest" not in s for s in repo._sql_of.values())  # noqa: SLF001
    assert "%(" in PostgresRepository._sql_of["append"]  # noqa: SLF001 - psycopg's style
    assert ":seq" in SQLiteRepository._sql_of["append"]  # noqa: SLF001 - sqlite3's


def test_sql_files_are_read_only_by_the_one_loader():
    """No other module lists a folder of ``.sql`` files or splits named statements."""
    pattern = re.compile(r"""endswith\(["']\.sql["']\)|-- name: \(|with_name\(["']\w+\.sql""")
    readers = [
        path.relative_to(ROOT).as_posix()
        for package in ("api", "dashboard")
        for path in sorted((ROOT / package).rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert readers == ["api/storage/sql.py"]
