"""The relational adapter's methods beside a turn's (:mod:`.relational`): Stammtische and
players, the lists of games, logs and facts read whole, logins of the pub form, failed logins
and the statistics read model, written once for SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from . import records as rec
from .records import FACT_COLUMNS, ROW_TABLES
from .relational import RelationalCore
from .repository import StorageConflict
from .statements import FACT_ORDER, SQL, decode, doc, moment, to_json


class TableMethods(RelationalCore):
    """The port's methods on the tables beside the turn's."""

    # Stammtische and players
    def add_stammtisch(self, stammtisch: rec.Stammtisch) -> rec.Stammtisch:
        s = stammtisch
        params = {"slug": s.slug, "name": s.name, "rules": to_json(s.rules), "private": s.private,
                  "token_hash": s.token_hash, "created_at": self._time(s.created_at),
                  "odds_shown": s.odds_shown}  # fmt: skip
        with self.transaction():
            row = self._one("add_stammtisch", params)
            if row is None:
                raise StorageConflict(f"slug {s.slug!r} taken")
        return replace(s, id=int(row[0]))

    def stammtisch_slugs(self) -> dict[int, str]:
        """Every Stammtisch's slug by its id."""
        return {int(r[0]): str(r[1]) for r in self._all("slugs")}

    def update_stammtisch(self, stammtisch: rec.Stammtisch) -> None:
        s = stammtisch
        params = {"id": s.id, "name": s.name, "rules": to_json(s.rules), "private": s.private,
                  "odds_shown": s.odds_shown}  # fmt: skip
        with self.transaction():
            self._x("update_stammtisch", params)
            self.mark_stats_stale([s.id])

    def replace_key(self, stammtisch_id: int, token_hash: str) -> None:
        with self.transaction():
            self._x("new_key", {"id": stammtisch_id, "token_hash": token_hash})
            self._x("old_logins", {"id": stammtisch_id, "token_hash": token_hash})

    def add_player(self, stammtisch_id: int, name: str, now: datetime) -> rec.Player:
        params = {"stammtisch_id": stammtisch_id, "name": name, "retired": False,
                  "created_at": self._time(now)}  # fmt: skip
        with self.transaction():
            row = self._one("add_player", params)
        return rec.Player(int(row[0]), stammtisch_id, name, False, now, None)

    def list_players(self, stammtisch_id: int) -> list[rec.Player]:
        return [
            rec.Player(r[0], r[1], r[2], bool(r[3]), moment(r[4]), moment(r[5]))
            for r in self._all("list_players", {"stammtisch_id": stammtisch_id})
        ]

    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None:
        at = None if retired_at is None else self._time(retired_at)
        with self.transaction():
            self._x("update_player",
                    {"id": player_id, "name": name, "retired": retired, "retired_at": at})  # fmt: skip
            self._x("mark_player", {"id": player_id})

    # games
    def add_game(self, game: rec.NewGame) -> int:
        params = {
            "stammtisch_id": game.stammtisch_id, "header": to_json(game.header),
            "rules": to_json(game.rules), "options": to_json(game.options),
            "played_at": game.played_at, "played_at_utc": self._time(game.played_at_utc),
            "played_local": self._time(game.played_local), "year": game.year,
            "source": game.source, "created_at": self._time(game.created_at),
        }  # fmt: skip
        with self.transaction():
            game_id = int(self._one("add_game", params)[0])
            seats = [{"game_id": game_id, "seat": p.seat, "player_id": p.player_id,
                      "name": p.name, "starter": p.starter} for p in game.players]  # fmt: skip
            self._many("add_seat", seats)
            self._locked.add(game_id)  # new: no other transaction sees it yet
        return game_id

    def list_games(self, query: rec.GameQuery) -> tuple[list[rec.GameRecord], int]:
        params: dict[str, Any] = {"stammtisch_id": query.stammtisch_id, "year": query.year,
                                  "status": query.status, "player_id": query.player_id}  # fmt: skip
        with self.reading():
            (count,) = self._one("count_games", params)
            rows = self._all("list_games", {**params, "offset": query.offset,
                                            "limit": query.limit})  # fmt: skip
            return self._records(rows), int(count)

    def game_ids(self) -> list[int]:
        return [int(row[0]) for row in self._all("game_ids")]

    def abandon_game(self, game_id: int, at: datetime) -> bool:
        with self.transaction():
            return bool(
                self._x("abandon", {"at": self._time(at), "game_id": game_id}).rowcount == 1
            )

    # the log and its facts
    def load_log(self, game_id: int) -> list[rec.LogEntry]:
        return [
            rec.LogEntry(r[0], r[1], r[2], doc(r[3]), moment(r[4]))
            for r in self._all("load_log", {"game_id": game_id})
        ]

    def append_log_many(self, entries: list[rec.LogEntry]) -> None:
        if not entries:
            return
        with self.transaction():
            for game_id in sorted({e.game_id for e in entries}):
                self._lock_game(game_id)
            self._many("append", [self._entry(e) for e in entries], "log entries taken")

    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        with self.reading():
            for table in ("game_facts", *ROW_TABLES):
                columns, kinds = FACT_COLUMNS[table], dict(self._kinds[table])
                sql = (f"SELECT {', '.join(columns)} FROM {table} "  # noqa: S608 - records.py
                       f"WHERE game_id = :id ORDER BY {FACT_ORDER[table]}")  # fmt: skip
                out[table] = [
                    {c: decode(kinds[c], v) for c, v in zip(columns, row, strict=True)}
                    for row in self._all(sql, {"id": game_id})
                ]
        return out

    def purge_responses(self, before: datetime) -> None:
        with self.transaction():
            self._x("purge_responses", {"before": self._time(before)})

    # logins of the pub form
    def add_web_session(self, login: rec.WebSession) -> None:
        params = {"id_hash": login.id_hash, "stammtisch_id": login.stammtisch_id,
                  "token_hash": login.token_hash, "expires_at": self._time(login.expires_at)}  # fmt: skip
        with self.transaction():
            self._x("add_login", params)

    def get_web_session(self, id_hash: str) -> rec.WebSession | None:
        row = self._one("get_login", {"id_hash": id_hash})
        if row is None:
            return None  # stored as naive UTC
        return rec.WebSession(
            str(row[0]), int(row[1]), str(row[2]), moment(row[3]).replace(tzinfo=UTC)
        )

    def delete_web_session(self, id_hash: str) -> None:
        with self.transaction():
            self._x("delete_login", {"id_hash": id_hash})

    def purge_web_sessions(self, before: datetime) -> None:
        with self.transaction():
            self._x("purge_logins", {"before": self._time(before)})

    # the statistics read model
    def _where(self, table: str, ids: list[int] | None) -> tuple[str, dict[str, Any]]:
        """The filter of ``table``'s rows on the Stammtische ``ids`` (None: all)."""
        if ids is None:
            return "", {}
        marks, params = self._in(ids)
        if table == "stammtische":
            return f" WHERE id IN ({marks})", params
        if "stammtisch_id" in {name for name, _ in self._kinds[table]}:
            return f" WHERE stammtisch_id IN ({marks})", params
        return f" WHERE game_id IN (SELECT id FROM games WHERE stammtisch_id IN ({marks}))", params

    def _check(self, table: str, columns: Sequence[str]) -> None:
        known = {name for name, _ in self._kinds.get(table, ())}
        if not known or set(columns) - known:
            raise ValueError(f"no table {table} with columns {columns}")

    def _selects(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> Iterator[tuple[str, Sequence[str], str, dict[str, Any]]]:
        """Each table checked against the schema, its columns, filter and parameters."""
        ids = None if stammtische is None else sorted(int(s) for s in stammtische)
        for table, columns in tables.items():
            self._check(table, columns)
            yield (table, columns, *self._where(table, ids))

    def stats_rows(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[tuple[Any, ...]]]:
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self.reading():
            for table, columns, where, params in self._selects(tables, stammtische):
                sql = f"SELECT {', '.join(columns)} FROM {table}{where}"  # noqa: S608 - checked
                out[table] = [tuple(r) for r in self._all(sql, params)]
        return out

    def table_rows(self, tables: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of each table (those columns), one consistent moment: :meth:`stats_rows`
        of every Stammtisch, values as stored."""
        return self.stats_rows(tables, None)

    def stammtisch_ids(self) -> list[int]:
        return [int(r[0]) for r in self._all("stammtisch_ids")]

    def luck_pending(self, stammtische: Collection[int]) -> list[tuple[int, int]]:
        marks, params = self._in(sorted(int(s) for s in stammtische))
        return [
            (int(g), int(s)) for g, s in self._all(SQL["luck_pending"].format(ids=marks), params)
        ]

    def write_luck(self, games: Mapping[int, list[dict[str, Any]]]) -> None:
        marks, params = self._in(sorted(games))
        with self.transaction():
            self._x(SQL["delete_luck"].format(ids=marks), params)
            self._many("add_luck", [row for rows in games.values() for row in rows])

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        with self.transaction():
            self._many("mark", [{"id": int(s)} for s in sorted(set(stammtisch_ids))])

    def stale_stats(self) -> dict[int, int]:
        return {int(s): int(v) for s, v in self._all("stale")}

    def write_stats(self, write: rec.StatsWrite) -> None:
        now, versions = self._time(datetime.now(UTC)), write.versions
        with self.transaction():
            if write.stammtisch_ids is None:
                self._x("DELETE FROM stats_periods")
            else:
                where, params = self._where("stats_periods", sorted(write.stammtisch_ids))
                self._x(f"DELETE FROM stats_periods{where}", params)  # noqa: S608
            self._many("add_period", [
                {"st": st, "year": year or 0, "games": games, "body": body, "at": now,
                 "version": versions.get(st, 0)} for st, year, games, body in write.periods
            ])  # fmt: skip
            marks = [{"st": st, "version": v} for st, v in sorted(versions.items())]
            self._many("clear_mark", marks)

    def read_stats(self, stammtisch_id: int, year: int | None) -> str | None:
        row = self._one("read_stats", {"id": stammtisch_id, "year": year or 0})
        return None if row is None else str(row[0])

    def stats_years(self, stammtisch_id: int | None) -> list[tuple[int, int, int]]:
        rows = self._all("stats_years", {"id": stammtisch_id})
        return [(int(s), int(y), int(g)) for s, y, g in rows]

    def stats_computed(self) -> set[int]:
        return {int(r[0]) for r in self._all("stats_computed")}

    # the rate limits' and failed logins' statements (each dialect runs them its own way)
    def _counted(self, name: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        if outcome:
            self._counted("clear_failures", {"who": who})
            return 0, 0.0
        name = "failures" if outcome is None else "note_failure"
        row = self._counted(name, {"who": who, "now": now})
        return (int(row[0]), float(row[1])) if row else (0, 0.0)
