"""The in-memory fake of :class:`~api.storage.repository.Repository` for fast unit tests.

It keeps plain lists behind one lock; a transaction snapshots everything and restores the
snapshot when the block raises, so "a rejected request changes nothing" holds here too.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any

from . import records as rec
from .memory_webhooks import MemoryWebhooksMixin
from .records import FACT_COLUMNS, LUCK_COLUMNS, ROW_TABLES, TABLE_COLUMNS
from .repository import Background, Repository, StorageConflict, StorageUnavailable
from .statements import FACT_ORDER, stats_changed
from .webhook_records import Delivery, Webhook

#: one lock per process for every fake's refresher (a fake lives in one process)
_REFRESHER = threading.Lock()


class MemoryStore:
    """Process-wide state of the fake; :meth:`repository` returns the shared repository."""

    def __init__(self) -> None:
        self._repo = MemoryRepository()
        self.background = Background()

    def repository(self) -> MemoryRepository:
        return self._repo

    def close(self) -> None:
        self.background.stop()


class MemoryRepository(MemoryWebhooksMixin, Repository):
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self.stammtische: dict[str, rec.Stammtisch] = {}
        self.players: dict[int, rec.Player] = {}
        self.games: dict[int, rec.GameRecord] = {}
        self.logs: dict[int, list[rec.LogEntry]] = {}
        self.facts: dict[int, dict[str, list[dict[str, Any]]]] = {}
        self.responses: dict[tuple[int, str], rec.StoredResponse] = {}
        self.stats_periods: dict[tuple[int, int], tuple[int, str]] = {}
        self.stats_stale: dict[int, int] = {}
        self.luck: dict[int, list[dict[str, Any]]] = {}  # game id: its rows of luck_facts
        #: a cause here makes every transaction fail as a full disk would (for tests)
        self.unavailable: str | None = None
        self.buckets: dict[str, tuple[float, float]] = {}  # who -> (tokens, when)
        self.failures: dict[str, tuple[int, float]] = {}  # who -> (in a row, last)
        self.web_sessions: dict[str, rec.WebSession] = {}  # logins of the pub form, by id hash
        self.webhooks: dict[int, Webhook] = {}
        self.deliveries: dict[int, Delivery] = {}  # the webhooks' outbox
        self.busy: dict[int, datetime] = {}  # webhook id: its attempt in flight's lease
        self.events: list[rec.StoredEvents] = []  # the outbox, in commit order
        self._pending: list[Callable[[], None]] = []

    def close(self) -> None:
        pass

    def probe(self) -> None:
        if self.unavailable is not None:
            raise StorageUnavailable(self.unavailable)

    _STATE = (
        "stammtische", "players", "games", "logs", "facts", "responses", "stats_periods",
        "stats_stale", "luck", "web_sessions", "events", "webhooks", "deliveries",
    )  # fmt: skip

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:  # nesting is flat: the outermost block commits or restores
                yield
                return
            self.probe()
            snapshot = {name: copy.deepcopy(getattr(self, name)) for name in self._STATE}
            self._depth, self._pending = 1, []
            try:
                yield
            except BaseException:
                for name, value in snapshot.items():
                    setattr(self, name, value)
                raise
            finally:
                self._depth, (actions, self._pending) = 0, (self._pending, [])
            for action in actions:
                action()

    def on_commit(self, action: Callable[[], None]) -> None:
        with self._lock:
            if self._depth:
                self._pending.append(action)
                return
        action()

    def reading(self) -> Any:
        return self._lock

    def game_version(self, game_id: int) -> int:
        log = self.logs.get(game_id)
        return log[-1].seq if log else 0

    def take_token(self, who: str, now: float, per_second: float, burst: int) -> float:
        with self._lock:
            tokens, when = self.buckets.get(who, (float(burst), now))
            tokens = min(float(burst), tokens + max(0.0, now - when) * per_second)
            granted = tokens >= 1.0
            self.buckets[who] = (tokens - granted, max(when, now))
            return 0.0 if granted else (1.0 - tokens) / per_second

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        with self._lock:
            count, last = self.failures.get(who, (0, 0.0))
            if outcome is False:
                count, last = count + 1, max(last, now)
                self.failures[who] = (count, last)
            elif outcome:
                self.failures.pop(who, None)
                count, last = 0, 0.0
            return count, last

    def purge_tokens(self, before: float) -> None:
        with self._lock:
            for who in [w for w, (_, when) in self.buckets.items() if when < before]:
                del self.buckets[who]

    def add_web_session(self, login: rec.WebSession) -> None:
        with self.transaction():
            if login.id_hash in self.web_sessions:
                raise StorageConflict("session id taken")
            self.web_sessions[login.id_hash] = login

    def get_web_session(self, id_hash: str) -> rec.WebSession | None:
        return self.web_sessions.get(id_hash)

    def delete_web_session(self, id_hash: str) -> None:
        with self.transaction():
            self.web_sessions.pop(id_hash, None)

    def purge_web_sessions(self, before: datetime) -> None:
        with self.transaction():
            for key in [k for k, s in self.web_sessions.items() if s.expires_at < before]:
                del self.web_sessions[key]

    def abandon_game(self, game_id: int, at: datetime) -> bool:
        with self.transaction():
            game = self.games.get(game_id)
            if game is None or game.status == "abandoned":
                return False
            self.games[game_id] = replace(game, status="abandoned")
            return True

    def replace_key(self, stammtisch_id: int, token_hash: str) -> None:
        with self.transaction():
            for slug, record in self.stammtische.items():
                if record.id == stammtisch_id:
                    self.stammtische[slug] = replace(record, token_hash=token_hash)
            for key, login in list(self.web_sessions.items()):
                if login.stammtisch_id == stammtisch_id and login.token_hash != token_hash:
                    del self.web_sessions[key]

    def add_stammtisch(self, stammtisch: rec.Stammtisch) -> rec.Stammtisch:
        with self._lock:
            if stammtisch.slug in self.stammtische:
                raise StorageConflict(f"slug {stammtisch.slug!r} taken")
            record = replace(copy.deepcopy(stammtisch), id=len(self.stammtische) + 1)
            self.stammtische[record.slug] = record
            return copy.deepcopy(record)

    def get_stammtisch(self, slug: str) -> rec.Stammtisch | None:
        return copy.deepcopy(self.stammtische.get(slug))  # a copy, as the SQL stores read

    def update_stammtisch(self, stammtisch: rec.Stammtisch) -> None:
        s = stammtisch
        with self._lock:
            for slug, record in self.stammtische.items():
                if record.id == s.id:
                    self.stammtische[slug] = replace(
                        record,
                        name=s.name,
                        rules=copy.deepcopy(s.rules),
                        private=s.private,
                        odds_shown=s.odds_shown,
                    )
            self.mark_stats_stale([s.id])

    def add_player(self, stammtisch_id: int, name: str, now: datetime) -> rec.Player:
        with self._lock:
            player = rec.Player(len(self.players) + 1, stammtisch_id, name, False, now, None)
            self.players[player.id] = player
            return player

    def list_players(self, stammtisch_id: int) -> list[rec.Player]:
        return [p for p in self.players.values() if p.stammtisch_id == stammtisch_id]

    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None:
        with self._lock:
            self.players[player_id] = replace(
                self.players[player_id], name=name, retired=retired, retired_at=retired_at
            )
            self.mark_stats_stale([self.players[player_id].stammtisch_id])

    def add_game(self, game: rec.NewGame) -> int:
        with self._lock:
            game_id = len(self.games) + 1
            number = 1 + sum(
                1 for g in self.games.values() if g.stammtisch_id == game.stammtisch_id
            )
            self.games[game_id] = replace(copy.deepcopy(game).stored(game_id), number=number)
            self.logs[game_id] = []
            return game_id

    def _with_facts(self, game: rec.GameRecord) -> rec.GameRecord:
        """A copy of the record (as the SQL stores read) with its game row's status."""
        game = copy.deepcopy(game)
        rows = self.facts.get(game.id, {}).get("game_facts")
        if not rows:
            return game
        return game.with_facts(rows[0])

    def get_game_by_id(self, game_id: int) -> rec.GameRecord | None:
        game = self.games.get(game_id)
        return self._with_facts(game) if game else None

    def list_games(self, query: rec.GameQuery) -> tuple[list[rec.GameRecord], int]:
        q = query
        found = [
            g
            for g in map(self._with_facts, self.games.values())
            if g.stammtisch_id == q.stammtisch_id
            and q.year in (None, g.year)
            and q.status in (None, g.status)
            and (q.player_id is None or any(p.player_id == q.player_id for p in g.players))
        ]
        found.sort(key=lambda g: (g.played_at_utc, g.id), reverse=True)
        return found[q.offset : q.offset + q.limit], len(found)

    def game_ids(self) -> list[int]:
        return sorted(self.games)

    def load_log(self, game_id: int) -> list[rec.LogEntry]:
        return copy.deepcopy(self.logs.get(game_id, []))

    def append_log(self, entry: rec.LogEntry) -> None:
        with self._lock:
            log = self.logs.setdefault(entry.game_id, [])
            if any(e.seq == entry.seq for e in log):
                raise StorageConflict(f"game {entry.game_id}: entry {entry.seq} exists")
            log.append(copy.deepcopy(entry))
            log.sort(key=lambda e: e.seq)  # loaded in sequence order, as the SQL stores do

    def append_log_many(self, entries: list[rec.LogEntry]) -> None:
        with self.transaction():  # all or nothing, as the SQL stores' one statement
            for entry in entries:
                self.append_log(entry)

    def append_entry(self, entry: rec.LogEntry, facts: rec.FactsWrite) -> None:
        # no snapshot needed: append_log fails before anything changed, write_facts cannot fail
        with self._lock:
            if not self._depth:
                self.probe()
            self.append_log(entry)
            self.write_facts(entry.game_id, facts)

    def write_facts(self, game_id: int, write: rec.FactsWrite) -> None:
        with self._lock:
            facts = self.facts.setdefault(game_id, {t: [] for t in FACT_COLUMNS})
            if write.game is not None:
                facts["game_facts"] = [dict(write.game)]
            for table, rows in write.replace.items():
                facts[table] = [dict(r) for r in rows]
            for table, rows in write.append.items():
                facts[table].extend(dict(r) for r in rows)
            if stats_changed(write):
                self.mark_stats_stale([self.games[game_id].stammtisch_id])

    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        facts = self.facts.get(game_id, {t: [] for t in FACT_COLUMNS})
        out: dict[str, list[dict[str, Any]]] = {}
        for table in ("game_facts", *ROW_TABLES):
            order = FACT_ORDER[table]
            out[table] = sorted(copy.deepcopy(facts.get(table, [])), key=lambda row: row[order])
        return out

    def append_events(
        self, stammtisch_id: int, game_id: int, seq: int, events: list[dict[str, Any]], at: datetime
    ) -> int:
        with self.transaction():
            position = self.last_event_position(stammtisch_id) + 1
            row = rec.StoredEvents(stammtisch_id, position, game_id, seq, copy.deepcopy(events), at)
            self.events.append(row)
            self.enqueue_deliveries(stammtisch_id, position, [e["kind"] for e in events], at)
        return position

    def stammtisch_events(
        self, stammtisch_id: int, after: int, limit: int
    ) -> list[rec.StoredEvents]:
        rows = [e for e in self.events if e.stammtisch_id == stammtisch_id and e.position > after]
        return copy.deepcopy(rows[:limit])

    def game_events(self, game_id: int, after: int, limit: int) -> list[rec.StoredEvents]:
        rows = sorted((e for e in self.events if e.game_id == game_id and e.seq > after),
                      key=lambda e: e.seq)  # fmt: skip
        return copy.deepcopy(rows[:limit])

    def last_event_position(self, stammtisch_id: int) -> int:
        positions = [e.position for e in self.events if e.stammtisch_id == stammtisch_id]
        return max(positions, default=0)

    def get_response(self, stammtisch_id: int, key_hash: str) -> rec.StoredResponse | None:
        return self.responses.get((stammtisch_id, key_hash))

    def save_response(self, response: rec.StoredResponse) -> None:
        with self._lock:
            key = (response.stammtisch_id, response.key_hash)
            if key in self.responses:
                raise StorageConflict("idempotency key taken")
            self.responses[key] = response

    def purge_responses(self, before: datetime) -> None:
        with self._lock:
            for key in [k for k, r in self.responses.items() if r.created_at < before]:
                del self.responses[key]

    # the statistics read model: stats_periods is (stammtisch_id, year or 0) → (games, JSON)
    def _game_rows(self, table: str, game: rec.GameRecord, columns: Sequence[str]) -> list[Any]:
        if table == "games":
            return [tuple(getattr(game, c) for c in columns)]
        if table == "game_players":  # a seat, and its game_id
            return [tuple(getattr(p, c, game.id) for c in columns) for p in game.players]
        if table in FACT_COLUMNS:
            rows = self.facts.get(game.id, {}).get(table, [])
            return [tuple(r[c] for c in columns) for r in rows]
        if table == "luck_facts":
            return [tuple(r[c] for c in columns) for r in self.luck.get(game.id, [])]
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
                known = LUCK_COLUMNS if table == "luck_facts" else TABLE_COLUMNS.get(table, ())
                if not known or set(columns) - set(known):
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

    def luck_pending(self, stammtische: Collection[int]) -> list[tuple[int, int]]:
        with self._lock:
            found = []
            for game in sorted(self.games.values(), key=lambda g: g.id):
                facts = self.facts.get(game.id, {}).get("game_facts", [])
                if game.stammtisch_id not in stammtische or not facts:
                    continue
                if facts[0]["status"] != "finished" or not self.logs.get(game.id):
                    continue
                seq = self.logs[game.id][-1].seq
                if any(r["seq"] != seq for r in self.luck.get(game.id, [{"seq": None}])):
                    found.append((game.id, seq))
            return found

    def write_luck(self, games: Mapping[int, list[dict[str, Any]]]) -> None:
        with self.transaction():
            for game_id, rows in games.items():
                self.luck[game_id] = [dict(r) for r in rows]

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        with self._lock:
            for st in set(stammtisch_ids):
                self.stats_stale[st] = self.stats_stale.get(st, 0) + 1

    def stale_stats(self) -> dict[int, int]:
        return dict(self.stats_stale)

    def write_stats(self, write: rec.StatsWrite) -> None:
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
        timeout = -1 if wait is True else float(wait)  # -1: as long as it takes
        taken = _REFRESHER.acquire(timeout=timeout) if wait else _REFRESHER.acquire(False)
        if not taken:
            yield False
            return
        try:
            yield True
        finally:
            _REFRESHER.release()
