"""Use cases: load → rules engine → persist log entry and facts in one transaction → return.

The service layer knows the repository port and the engine, never Flask. Errors it raises
(:class:`ServiceError` subclasses and the engine's :class:`~api.rules.SchockenError`) are mapped
to HTTP in one place (``api/errors.py``).

Writes to one game are serialised by a per-game lock, and each game's engine state is cached
between requests (one process writes the DuckDB file, so the cache sees every change), so
recording a turn costs one engine step, not a replay of the whole game. Its log entry and the
facts it changes are stored atomically by ``Repository.append_entry`` (the DuckDB adapter
commits concurrent entries of different games together). A rejected command leaves nothing
behind: the engine checks before it changes anything, and a runtime that may have changed is
dropped from the cache and replayed from the stored log on the next request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .facts import NO_FACTS, Seating, derive_facts, facts_write, seating_of
from .gameplay import GameRuntime, effective_entries, header_of
from .rules import (
    PRESET_HELP,
    PRESETS,
    DomainEvent,
    GameHeader,
    InvalidRules,
    MalformedInput,
    SchockenError,
    Undone,
    evaluate,
    format_dice,
    parse_header,
    ruleset_from_config,
)
from .storage import (
    GamePlayer,
    GameRecord,
    LogEntry,
    NewGame,
    Player,
    Repository,
    Stammtisch,
    StorageConflict,
)

# ----------------------------------------------------------------------------- errors


class ServiceError(Exception):
    status = 400

    def __init__(self, message: str, errors: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class Invalid(ServiceError):
    status = 422


class Unauthorized(ServiceError):
    status = 401


class Forbidden(ServiceError):
    status = 403


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# ----------------------------------------------------------------------------- helpers


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def slugify(name: str) -> str:
    text = unicodedata.normalize("NFKD", name.lower().translate(_UMLAUTS))
    text = text.encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:40].strip("-")
    return slug or "stammtisch"


def _rules(config: dict[str, Any]) -> Any:
    try:
        return ruleset_from_config(config)
    except InvalidRules as err:
        raise Invalid(err.message, {"json": {"rules": [err.message]}}) from err


def _moment(played_at: str | None, now: datetime) -> tuple[datetime, datetime, int]:
    """(UTC, wall-clock at the table, year at the table) of a played_at string."""
    if played_at is None:
        return now, now, now.year
    moment = datetime.fromisoformat(played_at)
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc, moment.replace(tzinfo=None), moment.year


def describe_entry(kind: str, body: dict[str, Any]) -> str:
    if kind == "penalty":
        p = body["penalty"]
        return f"Strafe für {p['player']} ({p['reason']})"
    if kind == "throw":
        if "dice" not in body:
            return f"{body['player']} hört auf"
        return f"Wurf von {body['player']} ({format_dice(body['dice'])})"
    if "detail" in body:
        return f"Zug von {body['player']} ({len(body['detail'])} Würfe einzeln)"
    return f"Zug von {body['player']} ({format_dice(body['dice'])})"


# ----------------------------------------------------------------------------- views


@dataclass(frozen=True, slots=True)
class GameView:
    """A game's state for clients. The JSON-ready ``data`` is taken when the view is made,
    under the game's lock, so serialising it later never races a concurrent write."""

    record: GameRecord
    stammtisch: str
    runtime: GameRuntime
    data: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", self._snapshot())

    def to_dict(self) -> dict[str, Any]:
        return self.data

    def _snapshot(self) -> dict[str, Any]:
        rt = self.runtime
        game = rt.game
        return {
            "id": self.record.id,
            "stammtisch": self.stammtisch,
            "played_at": self.record.played_at,
            "year": self.record.year,
            "status": "finished" if game.finished else "running",
            "source": self.record.source,
            "players": list(game.players),
            "starter": game.first_starter,
            "rules": rt.rules_config(),
            "options": rt.rules_options(),
            "seq": rt.last_seq,
            "open_turn": None if rt.open_turn is None else rt.open_turn.to_json(),
            "outcome": game.outcome().to_json(),
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    seq: int
    events: list[dict[str, Any]]
    game: GameView

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "events": self.events, "game": self.game.to_dict()}


# ----------------------------------------------------------------------------- shared state


@dataclass
class GameCache:
    """Per process: engine state of recently used games and the Stammtische by slug.

    A game's runtime is used only by the holder of that game's lock (striped: a fixed set of
    locks). DuckDB allows one writing process, so this process sees every change; a
    multi-process adapter (PostgreSQL) would have to check ``last_seq`` against the log."""

    size: int = 256
    _items: OrderedDict[int, GameRuntime] = field(default_factory=OrderedDict)
    # re-entrant: an idempotent or conditional write (api/idempotency.py) holds the game's
    # lock around the whole use case, which takes it again
    _locks: tuple[threading.RLock, ...] = field(
        default_factory=lambda: tuple(threading.RLock() for _ in range(64))
    )
    _guard: threading.Lock = field(default_factory=threading.Lock)
    stammtische: dict[str, Stammtisch] = field(default_factory=dict)

    @contextmanager
    def locked(self, key: int) -> Iterator[None]:
        with self._locks[key % len(self._locks)]:
            yield

    def get(self, game_id: int) -> GameRuntime | None:
        with self._guard:
            rt = self._items.get(game_id)
            if rt is not None:
                self._items.move_to_end(game_id)
            return rt

    def put(self, game_id: int, rt: GameRuntime) -> None:
        with self._guard:
            self._items[game_id] = rt
            self._items.move_to_end(game_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def drop(self, game_id: int) -> None:
        with self._guard:
            self._items.pop(game_id, None)


# ----------------------------------------------------------------------------- services


class Services:
    """The use cases, on one repository (one request)."""

    def __init__(
        self, repo: Repository, cache: GameCache, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.repo = repo
        self.cache = cache
        self.clock = clock

    # ------------------------------------------------------------------ Stammtische and auth
    def create_stammtisch(self, data: dict[str, Any]) -> tuple[Stammtisch, str]:
        rules = _rules(data["rules"]).to_config()
        token = secrets.token_urlsafe(32)
        now = self.clock()
        explicit = data.get("slug")
        base = explicit or slugify(data["name"])
        for attempt in range(1, 1000):
            slug = base if attempt == 1 else f"{base[:36]}-{attempt}"
            if self.repo.get_stammtisch(slug) is None:
                try:
                    with self.repo.transaction():
                        st = self.repo.add_stammtisch(
                            slug, data["name"], rules, data["private"], hash_token(token), now
                        )
                    return st, token
                except StorageConflict:
                    pass
            if explicit:
                raise Conflict(f"Den Stammtisch „{slug}“ gibt es schon.")
        raise Conflict("Kein freier Kurzname gefunden.")  # pragma: no cover

    def stammtisch(self, slug: str) -> Stammtisch:
        st = self.cache.stammtische.get(slug)
        if st is None:
            st = self.repo.get_stammtisch(slug)
            if st is None:
                raise NotFound(f"Keinen Stammtisch „{slug}“ gefunden.")
            self.cache.stammtische[slug] = st
        return st

    @staticmethod
    def authorize(st: Stammtisch, token: str | None) -> None:
        """A write (or a read of a private Stammtisch) needs this Stammtisch's token."""
        if not token:
            raise Unauthorized("Dafür braucht es den Schlüssel des Stammtischs (Bearer-Token).")
        if not hmac.compare_digest(hash_token(token), st.token_hash):
            raise Forbidden("Dieser Schlüssel gehört nicht zu diesem Stammtisch.")

    def readable(self, slug: str, token: str | None) -> Stammtisch:
        st = self.stammtisch(slug)
        if st.private:
            self.authorize(st, token)
        return st

    def writable(self, slug: str, token: str | None) -> Stammtisch:
        st = self.stammtisch(slug)
        self.authorize(st, token)
        return st

    def update_stammtisch(self, st: Stammtisch, data: dict[str, Any]) -> Stammtisch:
        rules = _rules(data["rules"]).to_config() if "rules" in data else st.rules
        name = data.get("name", st.name)
        private = data.get("private", st.private)
        try:
            with self.repo.transaction():
                self.repo.update_stammtisch(st.id, name, rules, private)
        finally:
            self.cache.stammtische.pop(st.slug, None)
        return self.stammtisch(st.slug)

    # ------------------------------------------------------------------ players
    def players(self, st: Stammtisch) -> list[Player]:
        return self.repo.list_players(st.id)

    def _check_free_name(self, st: Stammtisch, name: str, except_id: int | None = None) -> None:
        for p in self.repo.list_players(st.id):
            if p.name == name and p.id != except_id:
                raise Conflict(f"Einen Spieler „{name}“ gibt es an diesem Stammtisch schon.")

    def add_player(self, st: Stammtisch, name: str) -> Player:
        name = name.strip()
        if not name:
            raise Invalid("Der Name ist leer.", {"json": {"name": ["Der Name ist leer."]}})
        with self.cache.locked(-st.id), self.repo.transaction():
            self._check_free_name(st, name)
            return self.repo.add_player(st.id, name, self.clock())

    def player(self, st: Stammtisch, player_id: int) -> Player:
        for p in self.repo.list_players(st.id):
            if p.id == player_id:
                return p
        raise NotFound(f"Keinen Spieler mit der Nummer {player_id} an diesem Stammtisch.")

    def update_player(self, st: Stammtisch, player_id: int, data: dict[str, Any]) -> Player:
        with self.cache.locked(-st.id), self.repo.transaction():
            p = self.player(st, player_id)
            name = data.get("name", p.name).strip()
            if not name:
                raise Invalid("Der Name ist leer.", {"json": {"name": ["Der Name ist leer."]}})
            self._check_free_name(st, name, p.id)
            retired = data.get("retired", p.retired)
            retired_at = (
                p.retired_at if retired == p.retired else (self.clock() if retired else None)
            )
            self.repo.update_player(p.id, name, retired, retired_at)
        return self.player(st, player_id)

    # ------------------------------------------------------------------ rules
    @staticmethod
    def presets() -> list[dict[str, Any]]:
        return [
            {"name": name, "description": PRESET_HELP[name], "options": rules.describe()}
            for name, rules in PRESETS.items()
        ]

    @staticmethod
    def preset(name: str) -> dict[str, Any]:
        if name not in PRESETS:
            raise NotFound(f"Kein Regelwerk „{name}“ (bekannt: {', '.join(PRESETS)}).")
        return {"name": name, "description": PRESET_HELP[name], "options": PRESETS[name].describe()}

    @staticmethod
    def evaluate(data: dict[str, Any]) -> dict[str, Any]:
        rules = _rules(data["rules"])
        if len(data["dice"]) != rules.dice_count:
            msg = f"Nach diesen Hausregeln gehören {rules.dice_count} Würfel zu einem Wurf."
            raise Invalid(msg, {"json": {"dice": [msg]}})
        return evaluate(tuple(data["dice"]), data["hand"], rules).to_json()

    # ------------------------------------------------------------------ games
    def _game(self, st: Stammtisch, game_id: int) -> GameRecord:
        record = self.repo.get_game(st.id, game_id)
        if record is None:
            raise NotFound(f"Kein Spiel {game_id} an diesem Stammtisch.")
        return record

    def _runtime(self, st: Stammtisch, game_id: int) -> GameRuntime:
        """The cached engine state, or a replay of the stored log (caller holds the lock)."""
        rt = self.cache.get(game_id)
        if rt is not None and rt.record is not None:
            if rt.record.stammtisch_id != st.id:
                raise NotFound(f"Kein Spiel {game_id} an diesem Stammtisch.")
            return rt
        record = self._game(st, game_id)
        log = self.repo.load_log(record.id)
        rt = GameRuntime.replay(
            header_of(record), effective_entries(log), log[-1].seq if log else 0
        )
        rt.record = record
        rt.facts = derive_facts(seating_of(record), rt)
        self.cache.put(record.id, rt)
        return rt

    def start_game(self, st: Stammtisch, data: dict[str, Any]) -> GameView:
        config = data.get("rules", st.rules)
        rules = _rules(config)
        known = {p.name: p for p in self.repo.list_players(st.id)}
        missing = [n for n in data["players"] if n not in known]
        if missing:
            msg = f"Unbekannte Spieler: {', '.join(missing)}. Erst als Spieler anlegen."
            raise Invalid(msg, {"json": {"players": [msg]}})
        retired = [n for n in data["players"] if known[n].retired]
        if retired:
            raise Conflict(f"Nicht mehr aktiv: {', '.join(retired)}.")
        now = self.clock()
        played_at = data.get("played_at") or datetime.now(UTC).isoformat(timespec="seconds")
        doc = {
            "played_at": played_at,
            "rules": rules.to_config(),
            "players": list(data["players"]),
            "starter": data["starter"],
        }
        header, _ = parse_header(doc)  # validates players and starter (engine messages)
        return self._create_game(st, doc, header, [], "api", now, known)

    def import_game(self, st: Stammtisch, doc: dict[str, Any]) -> GameView:
        """A whole game log: validated completely, then stored in one transaction.

        Players the Stammtisch does not know yet are added (paper tally sheets bring history)."""
        header, raw_events = parse_header(doc)
        now = self.clock()
        head = {k: v for k, v in doc.items() if k != "events"}
        return self._create_game(st, head, header, raw_events, "import", now)

    def _create_game(
        self,
        st: Stammtisch,
        head: dict[str, Any],
        header: GameHeader,
        raw_events: list[Any],
        source: str,
        now: datetime,
        known: dict[str, Player] | None = None,
    ) -> GameView:
        """Store a new game (and its entries, for an import) in one transaction. ``known``:
        the Stammtisch's players when every player of the game is among them (nothing to
        add); otherwise they are read, and the missing ones added, under the Stammtisch's lock."""
        rt = GameRuntime.new(header)
        entries = []
        for index, raw in enumerate(raw_events):
            if not isinstance(raw, dict):
                raise MalformedInput(f"event {index}: Ein Eintrag muss ein Objekt sein.")
            kind = "penalty" if "penalty" in raw else "turn"
            entry = LogEntry(0, index + 1, kind, raw, now)
            try:
                rt.feed(entry)
            except SchockenError as err:
                raise err.at_event(index) from err
            entries.append(entry)
        utc, local, year = _moment(header.played_at, now)
        with self.cache.locked(-st.id), self.repo.transaction():  # players are added here
            if known is None:
                known = {p.name: p for p in self.repo.list_players(st.id)}
            seats = []
            for seat, name in enumerate(header.players):
                player = known.get(name)
                if player is None:
                    player = self.repo.add_player(st.id, name, now)
                seats.append(GamePlayer(seat, player.id, name, name == header.starter))
            new = NewGame(
                stammtisch_id=st.id,
                header=head,
                rules=header.rules.to_config(),
                options=header.rules.options(),
                played_at=header.played_at,
                played_at_utc=utc,
                played_local=local,
                year=year,
                source=source,
                created_at=now,
                players=tuple(seats),
            )
            game_id = self.repo.add_game(new)
            stored = [LogEntry(game_id, e.seq, e.kind, e.body, e.recorded_at) for e in entries]
            self.repo.append_log_many(stored)
            rt.entries = stored
            facts = derive_facts(Seating(game_id, tuple(seats), st.id, year, local), rt)
            self.repo.write_facts(game_id, facts_write(facts, NO_FACTS))
        rt.facts = facts
        # what get_game would read back, without asking
        record = new.stored(game_id).with_facts(facts["game_facts"][0])
        rt.record = record
        self.cache.put(game_id, rt)
        return GameView(record, st.slug, rt)

    def game(self, st: Stammtisch, game_id: int) -> GameView:
        with self.cache.locked(game_id):
            rt = self._runtime(st, game_id)
            return GameView(rt.record, st.slug, rt)

    def games(self, st: Stammtisch, query: dict[str, Any]) -> dict[str, Any]:
        size = query["page_size"]
        records, total = self.repo.list_games(
            st.id,
            year=query.get("year"),
            status=query.get("status"),
            player_id=query.get("player_id"),
            offset=(query["page"] - 1) * size,
            limit=size,
        )
        return {
            "items": [
                {
                    "id": r.id,
                    "played_at": r.played_at,
                    "year": r.year,
                    "status": r.status,
                    "phase": r.phase,
                    "players": [p.name for p in r.players],
                    "loser": r.loser,
                    "source": r.source,
                }
                for r in records
            ],
            "total": total,
            "page": query["page"],
            "page_size": size,
        }

    def record(self, st: Stammtisch, game_id: int, kind: str, body: dict[str, Any]) -> WriteResult:
        """Record a turn, a throw or a penalty: engine first, then log + facts, atomically."""
        with self.cache.locked(game_id):
            rt = self._runtime(st, game_id)
            record = rt.record
            entry = LogEntry(game_id, rt.last_seq + 1, kind, body, self.clock())
            try:
                events = rt.feed(entry)
                facts = derive_facts(seating_of(record), rt, rt.facts)
                self.repo.append_entry(entry, facts_write(facts, rt.facts))
            except StorageConflict as err:
                self.cache.drop(game_id)
                raise Conflict(
                    "Das Spiel wurde gleichzeitig geändert; bitte den Stand neu laden."
                ) from err
            except BaseException:
                self.cache.drop(game_id)  # the engine state may be half-changed: replay later
                raise
            rt.facts = facts
            view = GameView(record, st.slug, rt)
            return WriteResult(entry.seq, [e.to_json() for e in events], view)

    def undo(self, st: Stammtisch, game_id: int, data: dict[str, Any]) -> WriteResult:
        """Undo the last effective entry; the log keeps an ``undo`` entry as audit record."""
        with self.cache.locked(game_id):
            rt = self._runtime(st, game_id)
            record = rt.record
            if not rt.entries:
                raise Conflict("Es gibt nichts rückgängig zu machen.")
            target = rt.entries[-1]
            seq = rt.last_seq + 1
            body = {"undoes": target.seq, "by": data.get("by"), "reason": data.get("reason")}
            entry = LogEntry(game_id, seq, "undo", body, self.clock())
            new_rt = GameRuntime.replay(header_of(record), rt.entries[:-1], seq)
            new_rt.record = record
            facts = derive_facts(seating_of(record), new_rt)
            try:
                self.repo.append_entry(entry, facts_write(facts, None))
            except StorageConflict as err:
                self.cache.drop(game_id)
                raise Conflict(
                    "Das Spiel wurde gleichzeitig geändert; bitte den Stand neu laden."
                ) from err
            new_rt.facts = facts
            self.cache.put(game_id, new_rt)
            what = describe_entry(target.kind, target.body)
            event = DomainEvent(
                f"Rückgängig gemacht: {what}.", Undone(target.seq, target.kind, target.body)
            )
            return WriteResult(seq, [event.to_json()], GameView(record, st.slug, new_rt))

    def undo_history(self, st: Stammtisch, game_id: int) -> list[dict[str, Any]]:
        self._game(st, game_id)
        log = self.repo.load_log(game_id)
        by_seq = {e.seq: e for e in log}
        return [
            {
                "seq": e.seq,
                "undone_seq": e.body["undoes"],
                "undone_kind": by_seq[e.body["undoes"]].kind,
                "undone": by_seq[e.body["undoes"]].body,
                "by": e.body.get("by"),
                "reason": e.body.get("reason"),
                "recorded_at": e.recorded_at,
            }
            for e in log
            if e.kind == "undo"
        ]

    def export(self, st: Stammtisch, game_id: int) -> dict[str, Any]:
        """The game as a game log: the header as given and every finished turn and penalty
        (an open throw-by-throw turn is not part of it until it ends)."""
        with self.cache.locked(game_id):
            rt = self._runtime(st, game_id)
            return {**rt.record.header, "events": [dict(e) for e in rt.export]}

    # ------------------------------------------------------------------ rebuild
    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Replay every game's log and rewrite all its facts. Returns the number of games."""
        ids = self.repo.game_ids()
        for n, game_id in enumerate(ids, start=1):
            record = self.repo.get_game_by_id(game_id)
            assert record is not None
            with self.cache.locked(game_id):
                log = self.repo.load_log(game_id)
                rt = GameRuntime.replay(
                    header_of(record), effective_entries(log), log[-1].seq if log else 0
                )
                facts = derive_facts(seating_of(record), rt)
                with self.repo.transaction():
                    self.repo.write_facts(game_id, facts_write(facts, None))
                rt.facts = facts
                rt.record = record
                self.cache.put(game_id, rt)
            if progress:
                progress(n, len(ids))
        return len(ids)
