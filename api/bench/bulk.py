"""Bulk loading of whole games into DuckDB: the statistics benchmark and the DuckDB copies of
the tests (api/bench/snapshot.py).

The service layer stores one game per transaction through the repository, which is right for
live games but slow for ten years at once (a DuckDB ``executemany`` manages about a thousand
rows per second here). :class:`BulkLoader` instead collects rows per table, writes them to a
CSV file and appends each file with one ``INSERT … SELECT FROM read_csv`` (the statements are
in ``api/bench/load``): several hundred thousand rows per second, no extra dependency.

:func:`game_rows` turns a game log into the rows of every table with helper code of the API
(:class:`~api.domain.runtime.GameRuntime` replays the log, :func:`~api.domain.facts.derive_facts` derives
the facts), so bulk-loaded games look exactly like games recorded through the API.
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from api.domain.facts import Seating, derive_facts
from api.domain.games import moment
from api.domain.runtime import GameRuntime
from api.rules import parse_header
from api.storage import GamePlayer, LogEntry
from api.storage.records import FACT_COLUMNS, TABLE_COLUMNS
from api.storage.sql import sql_files
from dashboard.stats import Connection

#: tables in load order, with their columns in table order
TABLES = TABLE_COLUMNS

NULL = "\\N"
#: values the CSV writer writes as they are (``bool`` is not ``int`` here: ``type`` is exact)
_PLAIN = frozenset({int, float, str})


def _statements() -> dict[str, str]:
    """The statements of ``api/bench/load``, by file name: one per table."""
    return sql_files("api.bench", "load")


def _text(value: object) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


class BulkLoader:
    """Buffers rows per table; :meth:`flush` appends them all (call it inside a transaction
    to make the load atomic)."""

    def __init__(
        self,
        conn: Connection,
        batch_rows: int = 500_000,
        tables: Mapping[str, Sequence[str]] = TABLES,
    ) -> None:
        self.conn = conn
        self.batch_rows = batch_rows
        self.tables = tables  # the columns of each table in the target (a subset: the read model)
        self.rows: dict[str, list[Sequence[Any]]] = {t: [] for t in tables}
        self.loaded: dict[str, int] = dict.fromkeys(tables, 0)
        self._dir = tempfile.TemporaryDirectory(prefix="schocken-bulk-")

    def add(self, table: str, rows: Iterable[Sequence[Any]]) -> None:
        buffer = self.rows[table]
        buffer.extend(rows)
        if len(buffer) >= self.batch_rows:
            self._flush_table(table)

    def add_game(self, rows: Mapping[str, Iterable[Sequence[Any]]]) -> None:
        for table, table_rows in rows.items():
            self.add(table, table_rows)

    def _flush_table(self, table: str) -> None:
        rows = self.rows[table]
        if not rows:
            return
        path = Path(self._dir.name) / f"{table}.csv"
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerows([v if type(v) in _PLAIN else _text(v) for v in row] for row in rows)
        columns = dict.fromkeys(self.tables[table], "VARCHAR")
        self.conn.execute(_statements()[table], {"path": str(path), "columns": columns})
        self.loaded[table] += len(rows)
        rows.clear()
        path.unlink()

    def flush(self) -> dict[str, int]:
        """Append everything buffered; returns the rows loaded per table so far."""
        for table in self.tables:
            self._flush_table(table)
        return dict(self.loaded)

    def close(self) -> None:
        self._dir.cleanup()


def game_rows(
    game_id: int,
    stammtisch_id: int,
    player_ids: dict[str, int],
    log: dict[str, Any],
    now: datetime,
) -> dict[str, list[tuple[Any, ...]]]:
    """Rows of every table for one finished game log (schemas/GAMELOG.md), as the API would store them."""
    header, raw_events = parse_header(log)
    rt = GameRuntime.new(header)
    utc, local, year = moment(header.played_at, now)
    entries = []
    for seq, raw in enumerate(raw_events, start=1):
        kind = "penalty" if "penalty" in raw else "turn"
        entry = LogEntry(game_id, seq, kind, raw, utc + timedelta(seconds=40 * seq))
        rt.feed(entry)
        entries.append(entry)
    seats = tuple(
        GamePlayer(seat, player_ids[name], name, name == header.starter)
        for seat, name in enumerate(header.players)
    )
    facts = derive_facts(Seating(game_id, seats, stammtisch_id, year, local), rt)
    head = {k: v for k, v in log.items() if k != "events"}
    rows: dict[str, list[tuple[Any, ...]]] = {
        "games": [
            (
                game_id, stammtisch_id, head, header.rules.to_config(), header.rules.options(),
                header.played_at, utc, local, year, "import", now,
            )
        ],
        "game_players": [(game_id, p.seat, p.player_id, p.name, p.starter) for p in seats],
        "game_log": [(game_id, e.seq, e.kind, e.body, e.recorded_at) for e in entries],
    }  # fmt: skip
    for table, columns in FACT_COLUMNS.items():
        rows[table] = [tuple(row[c] for c in columns) for row in facts[table]]
    return rows
