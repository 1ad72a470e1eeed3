"""The DuckDB adapter: one connection per process, one cursor per thread.

:class:`DuckDBStore` opens (and creates) the database file, applies pending migrations in
version order, each in its own transaction, and refuses a file written by a newer version.
:meth:`DuckDBStore.repository` hands out the calling thread's
:class:`~api.storage.duck_repository.DuckDBRepository` (its own cursor, reused by the thread's
later requests); the Flask app keeps it on ``g``.

Recording goes through :class:`~api.storage.group_commit.GroupCommitter`: writer threads, each
with a repository on its own cursor, commit the entries that arrive together in one
transaction. The rows themselves are written by :mod:`api.storage.duck_repository`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb

from .duck_repository import DuckDBRepository
from .duck_rows import to_json
from .group_commit import GroupCommitter
from .records import FACT_COLUMNS
from .repository import MigrationError
from .sql import migrations, queries

__all__ = ["DuckDBRepository", "DuckDBStore", "MigrationError"]


class DuckDBStore:
    """The process-wide connection to one DuckDB file (or ``":memory:"``)."""

    def __init__(self, path: str | Path, threads: int | None = None, writers: int = 2) -> None:
        """``threads``: DuckDB's worker threads (None: one per core, for bulk work);
        ``writers``: threads of the group commit, each with its own cursor."""
        path = str(path)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        config: dict[str, Any] = {"autoinstall_known_extensions": False}
        if threads:
            config["threads"] = threads
        self._conn = duckdb.connect(path, config=config)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        try:
            self.migrate()
        except BaseException:
            self._conn.close()
            raise
        self._specs = self._row_specs()
        self._committer = GroupCommitter(
            [
                DuckDBRepository(self._conn.cursor(), self._specs, None, plain=True)
                for _ in range(max(1, writers))
            ]
        )

    def migrate(self) -> list[int]:
        """Apply every pending migration; returns the versions applied now."""
        conn = self._conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations").fetchall()}
        known = migrations()
        newest = max((v for v, _, _ in known), default=0)
        if done and max(done) > newest:
            raise MigrationError(
                f"database {self.path} has schema version {max(done)}, newer than this "
                f"program's {newest}: refusing to touch it"
            )
        applied = []
        for version, name, sql in known:
            if version in done:
                continue
            conn.begin()
            try:
                conn.execute(sql)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)",
                    [version, name],
                )
                conn.commit()
            except Exception:
                conn.rollback()
                raise
            applied.append(version)
        return applied

    def repository(self) -> DuckDBRepository:
        """This thread's repository: one cursor per thread, reused across its requests
        (a cursor must not be shared between threads; opening one per request costs time)."""
        repo: DuckDBRepository | None = getattr(self._local, "repo", None)
        if repo is None:
            with self._lock:  # cursor() on one connection from many threads
                cursor = self._conn.cursor()
            repo = DuckDBRepository(cursor, self._specs, self._committer)
            self._local.repo = repo
            self._cursors.append(cursor)
        return repo

    def _row_specs(self) -> dict[str, str]:
        """Per fact table, the JSON structure ``[{column: type}]`` its rows are read with."""
        specs = {}
        for table in ("game_log", "game_players", *FACT_COLUMNS):
            rows = self._conn.execute(queries(__package__)["column_types"], [table]).fetchall()
            specs[table] = to_json([{name: kind for name, kind in rows}])
        return specs

    def close(self) -> None:
        self._committer.stop()
        for cursor in self._cursors:
            cursor.close()
        self._conn.close()
