"""Games: start one, import a whole game log, read one, list them.

A new game (and, for an import, every entry of its log) is validated by the engine first and
then stored in one transaction with its facts; players the Stammtisch does not know yet are
added under the Stammtisch's lock (imports only: paper tally sheets bring history)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ..rules import (
    DomainEvent,
    GameHeader,
    GameStarted,
    MalformedInput,
    SchockenError,
    parse_header,
)
from ..storage import GamePlayer, LogEntry, NewGame, Player, Stammtisch
from ..storage.records import GameQuery
from .base import UseCases, rules_of
from .errors import Conflict, Invalid
from .facts import NO_FACTS, Seating, derive_facts, facts_write
from .names import check_free, check_reason, new_name
from .runtime import GameRuntime, GameView


def moment(played_at: str | None, now: datetime) -> tuple[datetime, datetime, int]:
    """(UTC, wall-clock at the table, year at the table) of a played_at string."""
    if played_at is None:
        return now, now, now.year
    when = datetime.fromisoformat(played_at)
    utc = when.astimezone(UTC).replace(tzinfo=None)
    return utc, when.replace(tzinfo=None), when.year


def _entries(rt: GameRuntime, raw_events: list[Any], now: datetime) -> list[LogEntry]:
    """Feed a game log's events into a new runtime: every one checked, none stored yet."""
    entries = []
    for index, raw in enumerate(raw_events):
        if not isinstance(raw, dict):
            raise MalformedInput(f"event {index}: Ein Eintrag muss ein Objekt sein.")
        kind = "penalty" if "penalty" in raw else "turn"
        if kind == "penalty" and isinstance(raw["penalty"], dict):
            check_reason(raw["penalty"].get("reason"), f"events[{index}].penalty.reason")
        entry = LogEntry(0, index + 1, kind, raw, now)
        try:
            rt.feed(entry)
        except SchockenError as err:
            raise err.at_event(index) from err
        entries.append(entry)
    return entries


def started(game_id: int, header: GameHeader, source: str) -> dict[str, Any]:
    """The event of a game's start (or import): the first of the game in the outbox."""
    names = list(header.players)
    listed = ", ".join(names[:-1]) + f" und {names[-1]}" if len(names) > 1 else names[0]
    if source == "import":
        message = f"Spiel importiert: {listed}."
    else:
        message = f"Neues Spiel: {listed}. {header.starter} fängt an."
    data = GameStarted(game_id, tuple(names), header.starter, source)
    return DomainEvent(message, data).to_json()


class GameUseCases(UseCases):
    def start_game(self, st: Stammtisch, data: dict[str, Any]) -> GameView:
        rules = rules_of(data.get("rules", st.rules))
        known = {p.name: p for p in self.repo.list_players(st.id)}
        missing = [n for n in data["players"] if n not in known]
        if missing:
            msg = f"Unbekannte Spieler: {', '.join(missing)}. Erst als Spieler anlegen."
            raise Invalid(msg, field="players", code="unknown_player")
        retired = [n for n in data["players"] if known[n].retired]
        if retired:
            raise Conflict(
                f"Nicht mehr aktiv: {', '.join(retired)}.", field="players", code="player_retired"
            )
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

    def _seats(
        self, st: Stammtisch, header: GameHeader, known: dict[str, Player], now: datetime
    ) -> tuple[GamePlayer, ...]:
        """The game's seats; players not yet known are added (caller holds the lock), under
        the rules of a new name: in normal form, visible, not one of the others by its key."""
        seats = []
        for seat, name in enumerate(header.players):
            player = known.get(name)
            if player is None:
                if new_name(name, "players") != name:
                    raise Invalid(
                        f"Der Name „{name}“ ist nicht in Normalform (Leerzeichen, Unicode NFC).",
                        field="players",
                        code="invalid_name",
                    )
                check_free(name, known)
                player = self.repo.add_player(st.id, name, now)
                known = {**known, name: player}
            seats.append(GamePlayer(seat, player.id, name, name == header.starter))
        return tuple(seats)

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
        entries = _entries(rt, raw_events, now)
        utc, local, year = moment(header.played_at, now)
        with self.writing(-st.id):  # players are added here
            if known is None:
                known = {p.name: p for p in self.repo.list_players(st.id)}
            seats = self._seats(st, header, known, now)
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
                players=seats,
            )
            game_id = self.repo.add_game(new)
            number = self.repo.get_game_by_id(game_id)  # its number in the Stammtisch
            stored = [LogEntry(game_id, e.seq, e.kind, e.body, e.recorded_at) for e in entries]
            self.repo.append_log_many(stored)
            rt.entries = stored
            facts = derive_facts(Seating(game_id, seats, st.id, year, local), rt)
            self.repo.write_facts(game_id, facts_write(facts, NO_FACTS))
            self.repo.append_events(st.id, game_id, 0, [started(game_id, header, source)], now)
        rt.facts = facts
        # what get_game would read back, without asking
        record = replace(new.stored(game_id), number=number.number if number else 0)
        record = record.with_facts(facts["game_facts"][0])
        rt.record = record
        self._cache_after_commit(game_id, rt)  # an idempotent POST may still roll back
        return GameView(record, st.slug, rt)

    def game(self, st: Stammtisch, game_id: int) -> GameView:
        with self.cache.locked(game_id):
            rt = self._runtime(st, game_id)
            self.abandoned(rt, game_id)  # called off meanwhile, perhaps in another process
            assert rt.record is not None
            return GameView(rt.record, st.slug, rt)

    def games(self, st: Stammtisch, query: dict[str, Any]) -> dict[str, Any]:
        """One page of the Stammtisch's games, newest first, filtered by year, status, player."""
        size = query["page_size"]
        records, total = self.repo.list_games(
            GameQuery(
                st.id,
                year=query.get("year"),
                status=query.get("status"),
                player_id=query.get("player_id"),
                offset=(query["page"] - 1) * size,
                limit=size,
            )
        )
        return {
            "items": [
                {
                    "id": r.id,
                    "number": r.number,
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
