"""One source for the tables: the column lists of ``api/storage/records.py`` are what the
migrations create (SQLite's, the store of record, and the DuckDB dialect ones the statistics
snapshot builds its in-memory DuckDB from), and every SQL file is read through
``api/storage/sql.py``."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import duckdb
import pytest

from api.bench.bulk import TABLES
from api.bench.stats_bench import SQLITE_TABLES
from api.storage.records import (
    BASE_COLUMNS,
    FACT_COLUMNS,
    RESPONSE_COLUMNS,
    ROW_TABLES,
    TABLE_COLUMNS,
)
from api.storage.sql import migrations, sql_files
from api.storage.sqlite import SQLiteStore
from api.storage.sqlite.sql import queries as sqlite_queries

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def schema() -> dict[str, tuple[str, ...]]:
    """Every table of a freshly migrated DuckDB with its columns in order."""
    conn = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        for _, _, sql in migrations():
            conn.execute(sql)
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
    from api.storage.transfer import COPIED

    SQLiteStore(tmp_path / "s.sqlite3").close()
    conn = sqlite3.connect(tmp_path / "s.sqlite3")
    try:
        for table, columns in {**TABLE_COLUMNS, **RESPONSE_COLUMNS}.items():
            found = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            if table == "games":  # migration 0014's columns: copied, not bulk-loaded
                columns = COPIED["games"]
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


def test_every_table_the_repository_writes_has_its_statements():
    names = sqlite_queries()  # inserts of fact rows: built from the column lists
    for table in ROW_TABLES:
        assert {f"read_{table}", f"delete_{table}"} <= set(names)
    assert {"read_game_facts", "append_log", "insert_game_player"} <= set(names)


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
