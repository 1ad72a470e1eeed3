"""A game's log fed into the engine: turns, single throws, penalties and undo.

The log (see ``api/storage``) holds what was recorded, in order. :class:`GameRuntime` turns it
into an engine :class:`~api.rules.Game`. Turns and penalties go straight to the engine. Single
throws (throw-by-throw clients) collect in an *open turn* until the player stops, reaches the
round's throw limit, throws blind, or the next player's throw (or turn) arrives; then the open
turn goes to the engine as a turn in detail (GAMELOG.md ``detail``). Each throw is checked when
it arrives: as if the turn ended with it (whose turn, the limit, the dice in the cup) and, when
the player sets dice aside or turns sixes, that a further throw is allowed and legal.

An ``undo`` entry removes the last effective entry: the runtime for the remaining entries is
replayed from the start, so an undone throw can reopen the previous player's turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..rules import (
    Game,
    GameHeader,
    RecordTurn,
    Ruleset,
    RuleViolation,
    SchockenError,
    new_game,
    parse_event,
)
from ..storage import GameRecord, LogEntry

Event = dict[str, Any]  # {"kind", "message", "data"}


@dataclass(slots=True)
class OpenTurn:
    player: str
    throws: list[dict[str, Any]]
    blind: bool = False

    def as_event(self) -> dict[str, Any]:
        event: dict[str, Any] = {"player": self.player, "detail": [dict(t) for t in self.throws]}
        if self.blind:
            event["blind"] = True
        return event


def header_of(record: GameRecord) -> GameHeader:
    """The engine header of a stored game, its ruleset rebuilt from the *expanded* options."""
    from ..rules import ruleset_from_config

    rules = ruleset_from_config({"preset": record.rules["preset"], "overrides": record.options})
    starter = next(p.name for p in record.players if p.starter)
    return GameHeader(rules, tuple(p.name for p in record.players), starter, record.played_at)


def effective_entries(log: list[LogEntry]) -> list[LogEntry]:
    """The entries that count: each ``undo`` removes the last entry still counting."""
    stack: list[LogEntry] = []
    for entry in log:
        if entry.kind == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(entry)
    return stack


def _wuerfel(dice: list[int]) -> str:
    return "-".join(str(p) for p in sorted(dice))


@dataclass(slots=True)
class GameRuntime:
    """The engine game of one stored game plus the open throw-by-throw turn."""

    header: GameHeader
    game: Game
    last_seq: int = 0
    entries: list[LogEntry] = field(default_factory=list)  # effective entries, in order
    cmd_seqs: list[int] = field(default_factory=list)  # seq that produced each game command
    export: list[dict[str, Any]] = field(default_factory=list)  # game-log event per command
    entry_events: list[tuple[int, list[Event]]] = field(default_factory=list)
    open_turn: OpenTurn | None = None
    facts: dict[str, list[dict[str, Any]]] | None = None  # last facts written (for deltas)
    record: GameRecord | None = None  # the stored game (set by the service layer)
    _config: dict[str, Any] | None = None
    _options: dict[str, Any] | None = None

    @classmethod
    def new(cls, header: GameHeader) -> GameRuntime:
        return cls(header=header, game=new_game(header))

    @classmethod
    def replay(cls, header: GameHeader, entries: list[LogEntry], last_seq: int) -> GameRuntime:
        """Feed effective entries; a stored log that no longer replays is a broken database."""
        runtime = cls.new(header)
        for entry in entries:
            try:
                runtime.feed(entry)
            except SchockenError as err:  # pragma: no cover - only with a corrupted log
                raise RuntimeError(
                    f"game log entry {entry.seq} no longer replays: {err.message}"
                ) from err
        runtime.last_seq = last_seq
        return runtime

    @property
    def rules(self) -> Ruleset:
        return self.header.rules

    def rules_config(self) -> dict[str, Any]:
        """``{"preset", "overrides"}`` of the game (computed once: rulesets are frozen)."""
        if self._config is None:
            self._config = self.rules.to_config()
        return self._config

    def rules_options(self) -> dict[str, Any]:
        if self._options is None:
            self._options = self.rules.options()
        return self._options

    # ------------------------------------------------------------------ feeding entries
    def feed(self, entry: LogEntry) -> list[Event]:
        """Apply one entry (turn, throw or penalty). On error the runtime may be half-changed:
        callers drop it and replay from storage."""
        if entry.kind == "throw":
            events = self._throw(entry)
        elif entry.kind == "turn":
            events = self._turn(entry)
        elif entry.kind == "penalty":
            events = self._penalty(entry)
        else:
            raise ValueError(f"cannot feed a {entry.kind!r} entry")
        self.entries.append(entry)
        self.entry_events.append((entry.seq, events))
        self.last_seq = max(self.last_seq, entry.seq)
        return events

    def _apply(self, event: dict[str, Any], seq: int) -> list[Event]:
        command = parse_event(event, self.rules)
        events = [
            {"kind": e.kind.value, "message": e.message, "data": dict(e.data)}
            for e in self.game.apply(command)
        ]
        self.cmd_seqs.append(seq)
        self.export.append(event)
        return events

    def _close_open_turn(self, seq: int) -> list[Event]:
        assert self.open_turn is not None
        events = self._apply(self.open_turn.as_event(), seq)
        self.open_turn = None
        return events

    def _check_no_open_turn_of(self, player: str, what: str) -> None:
        if self.open_turn is not None and self.open_turn.player == player:
            raise RuleViolation(
                f"{player} hat noch einen offenen Zug (Wurf für Wurf): erst mit stop beenden "
                f"oder rückgängig machen, dann {what}."
            )

    def _turn(self, entry: LogEntry) -> list[Event]:
        player = entry.body.get("player")
        events: list[Event] = []
        if self.open_turn is not None:
            self._check_no_open_turn_of(str(player), "den ganzen Zug eintragen")
            events += self._close_open_turn(entry.seq)
        return events + self._apply(entry.body, entry.seq)

    def _penalty(self, entry: LogEntry) -> list[Event]:
        if self.open_turn is not None:
            raise RuleViolation(
                f"Der Zug von {self.open_turn.player} ist noch offen: erst beenden (stop), "
                "dann die Strafe eintragen."
            )
        return self._apply(entry.body, entry.seq)

    def _throw(self, entry: LogEntry) -> list[Event]:
        body = entry.body
        player = body["player"]
        events: list[Event] = []
        if self.open_turn is not None and self.open_turn.player != player:
            events += self._close_open_turn(entry.seq)
        current = self.open_turn
        if "dice" not in body:  # only "stop"
            if current is None:
                raise RuleViolation(f"{player} hat keinen offenen Zug, der beendet werden könnte.")
            return events + self._close_open_turn(entry.seq)
        if body.get("blind") and current is not None:
            raise RuleViolation("Blind kann nur vor dem ersten Wurf angesagt werden.")
        throw: dict[str, Any] = {"dice": list(body["dice"])}
        if body.get("aside"):
            throw["aside"] = list(body["aside"])
        if body.get("sixes"):
            throw["sixes"] = body["sixes"]
        throws = [*(current.throws if current else []), throw]
        blind = bool(body.get("blind")) or (current.blind if current else False)
        number = len(throws)
        # 1. as if the turn ended with this throw: whose turn, the round's limit, dice in cup
        as_final: dict[str, Any] = {
            "player": player,
            "detail": [*throws[:-1], {"dice": throw["dice"]}],
        }
        if blind:
            as_final["blind"] = True
        self.game.copy().apply(parse_event(as_final, self.rules))
        # 2. setting aside or turning sixes needs a further throw, and must itself be legal
        limit = self.game.limit or self.rules.max_throws
        acting = "aside" in throw or "sixes" in throw
        if acting:
            if number >= limit or blind:
                raise RuleViolation(
                    f"Nach dem letzten erlaubten Wurf (Wurf {number}) darf nichts mehr "
                    "herausgelegt oder umgedreht werden."
                )
            kept = sum(len(t.get("aside", ())) + t.get("sixes", 0) for t in throws)
            in_cup = max(self.rules.dice_count - kept, 0)
            parse_event({"player": player, "detail": [*throws, {"dice": [2] * in_cup}]}, self.rules)
        self.open_turn = OpenTurn(player, throws, blind)
        what = f"{player}: Wurf {number} – {_wuerfel(throw['dice'])}"
        if "aside" in throw:
            what += f", legt {_wuerfel(throw['aside'])} heraus"
        if "sixes" in throw:
            what += ", dreht Sechsen um"
        events.append(
            {
                "kind": "throw_recorded",
                "message": what + ".",
                "data": {"player": player, "throw": number, **throw},
            }
        )
        if not acting and (body.get("stop") or blind or number >= limit):
            events += self._close_open_turn(entry.seq)
        return events

    # ------------------------------------------------------------------ views
    def turn_commands(self) -> list[tuple[RecordTurn, int]]:
        return [
            (c, s)
            for c, s in zip(self.game.commands, self.cmd_seqs, strict=True)
            if isinstance(c, RecordTurn)
        ]
