"""The statistics read model of the in-memory fake (the port methods of
:class:`~api.storage.repository.Repository` for it; see api/storage/relational.py)."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from .records import (
    FACT_COLUMNS,
    TABLE_COLUMNS,
    GameRecord,
    LogEntry,
    Player,
    Stammtisch,
    StatsWrite,
)

#: one lock per process for every fake (a fake lives in one process)
_REFRESHER = threading.Lock()


class MemoryStatsMixin:
    stammtische: dict[str, Stammtisch]
    players: dict[int, Player]
    games: dict[int, GameRecord]
    facts: dict[int, dict[str, list[dict[str, Any]]]]
    logs: dict[int, list[LogEntry]]
    #: (stammtisch_id, year or 0) → (games, JSON)
    stats_periods: dict[tuple[int, int], tuple[int, str]]
    stats_stale: dict[int, int]

    _lock: threading.RLock  # the fake's lock (a transaction of the caller holds it too)

    def _game_rows(self, table: str, game: GameRecord, columns: Sequence[str]) -> list[Any]:
        if table == "games":
            return [tuple(getattr(game, c) for c in columns)]
        if table == "game_players":
            seats = [{"game_id": game.id, **vars_of(p)} for p in game.players]
            return [tuple(s[c] for c in columns) for s in seats]
        if table in FACT_COLUMNS:
            rows = self.facts.get(game.id, {}).get(table, [])
            return [tuple(r[c] for c in columns) for r in rows]
        if table == "game_log":
            return [tuple(getattr(e, c, game.id) for c in columns) for e in self.logs[game.id]]
        raise ValueError(f"no table {table}")

    def stats_rows(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[tuple[Any, ...]]]:
        def wanted(stammtisch_id: int) -> bool:
            return stammtische is None or stammtisch_id in stammtische

        out: dict[str, list[tuple[Any, ...]]] = {}
        with self._lock:  # one consistent moment
            for table, columns in tables.items():
                if table not in TABLE_COLUMNS or set(columns) - set(TABLE_COLUMNS[table]):
                    raise ValueError(f"no table {table} with columns {columns}")
                rows: list[Any] = []
                if table == "stammtische":
                    found: Iterable[Any] = [s for s in self.stammtische.values() if wanted(s.id)]
                    rows = [tuple(getattr(s, c) for c in columns) for s in found]
                elif table == "players":
                    found = [p for p in self.players.values() if wanted(p.stammtisch_id)]
                    rows = [tuple(getattr(p, c) for c in columns) for p in found]
                else:
                    for game in self.games.values():
                        if wanted(game.stammtisch_id):
                            rows += self._game_rows(table, game, columns)
                out[table] = rows
        return out

    def stammtisch_ids(self) -> list[int]:
        return sorted(s.id for s in self.stammtische.values())

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        with self._lock:
            for st in set(stammtisch_ids):
                self.stats_stale[st] = self.stats_stale.get(st, 0) + 1

    def stale_stats(self) -> dict[int, int]:
        return dict(self.stats_stale)

    def write_stats(self, write: StatsWrite) -> None:
        with self._lock:
            for key in list(self.stats_periods):
                if write.stammtisch_ids is None or key[0] in write.stammtisch_ids:
                    del self.stats_periods[key]
            for st, year, games, body in write.periods:
                self.stats_periods[(st, year or 0)] = (games, body)
            for st, version in write.versions.items():
                if self.stats_stale.get(st) == version:
                    del self.stats_stale[st]

    def read_stats(self, stammtisch_id: int, year: int | None) -> str | None:
        found = self.stats_periods.get((stammtisch_id, year or 0))
        return None if found is None else found[1]

    def stats_years(self, stammtisch_id: int | None) -> list[tuple[int, int, int]]:
        rows = [
            (st, year, games)
            for (st, year), (games, _) in self.stats_periods.items()
            if year and games and stammtisch_id in (None, st)
        ]
        return sorted(rows, key=lambda r: (r[0], -r[1]))

    def stats_computed(self) -> set[int]:
        return {st for st, year in self.stats_periods if year == 0}

    @contextmanager
    def stats_lock(self, wait: bool | float = True) -> Iterator[bool]:
        taken = (
            _REFRESHER.acquire()
            if wait is True
            else _REFRESHER.acquire(timeout=float(wait))
            if wait
            else _REFRESHER.acquire(blocking=False)
        )
        if not taken:
            yield False
            return
        try:
            yield True
        finally:
            _REFRESHER.release()


def vars_of(seat: Any) -> dict[str, Any]:
    """A seat (GamePlayer) as a dict of its fields."""
    return {f: getattr(seat, f) for f in ("seat", "player_id", "name", "starter")}
