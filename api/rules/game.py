"""The game state machine: rounds, Deckel, halves, the Finale and Blattschuss.

The life of a game::

    Hälfte 1 ──(one player holds every Deckel)──▶ Hälfte 2 ──▶ same loser: Blattschuss, over
                                                           └─▶ two losers: Finale ──▶ over

The life of a round: the starter throws up to ``max_throws`` times; the number of throws they
used becomes the round's limit for everybody else. The active players follow clockwise (seat
order). When all have thrown (or, under ``schock_aus_ends_round``, a Schock aus is shown after
another result), the round is resolved: the best and the worst result are found with the
ruleset's tie rule; the worst receives as many Deckel as the best is worth, from the Mitte while
it holds any (phase 1), afterwards from the best player (phase 2), each capped by what is there.
Once the Mitte is empty a player without Deckel is out. The half ends when one player holds
every Deckel.

:meth:`Game.apply` takes one command and returns the domain events it caused. It checks
everything before it changes anything, so a rejected command leaves the game exactly as it was.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from .errors import MalformedInput, RuleViolation
from .results import Evaluation, evaluation_table
from .ruleset import FinaleOpener, NextStarter, PenaltyMode, Ruleset, Ties
from .turns import MAX_NAME, Command, RecordPenalty, RecordTurn, parse_player

MIN_PLAYERS = 2
MAX_PLAYERS = 20


class Phase(StrEnum):
    HALF1 = "half1"
    HALF2 = "half2"
    FINALE = "finale"
    FINISHED = "finished"


class EventKind(StrEnum):
    TURN_RECORDED = "turn_recorded"
    ROUND_LOST = "round_lost"
    ROUND_REPEATED = "round_repeated"
    PLAYER_OUT = "player_out"
    PENALTY = "penalty"
    HALF_LOST = "half_lost"
    FINALE_STARTED = "finale_started"
    BLATTSCHUSS = "blattschuss"
    GAME_LOST = "game_lost"


class DomainEvent(NamedTuple):
    """Something that happened, with a German sentence a client can show as it is."""

    kind: EventKind
    message: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "message": self.message, **self.data}


HALF_LABEL = {Phase.HALF1: 1, Phase.HALF2: 2, Phase.FINALE: "finale"}
HALF_NAME = {Phase.HALF1: "die erste Hälfte", Phase.HALF2: "die zweite Hälfte"}


def _deckel_word(n: int) -> str:
    return "1 Deckel" if n == 1 else f"{n} Deckel"


@dataclass(slots=True)
class _Turn:
    player: str
    ev: Evaluation
    throws: int
    blind: bool
    order: int  # position in the round, 0 = starter
    sort: int  # the tie rule's sort key, see Game._sort_key
    half: int | str  # 1, 2 or "finale"
    round: int  # index of the round in Game.rounds
    hand: bool


_WURF = {n: "1 Wurf" if n == 1 else f"{n} Würfe" for n in range(1, 6)}


def _turn_fact(t: _Turn) -> dict[str, Any]:
    ev = t.ev
    return {
        "half": t.half,
        "round": t.round,
        "order": t.order,
        "player": t.player,
        "dice": ev.notation,
        "throws": t.throws,
        "hand": t.hand,
        "blind": t.blind,
        "category": ev.category.value,
        "name": ev.name,
        "deckel": ev.deckel,
        "key": ev.key,
    }


class Game:
    """One game of Schocken under one ruleset. Use :meth:`start`."""

    def __init__(self, rules: Ruleset, players: tuple[str, ...], starter: str) -> None:
        self.rules = rules
        self.players = players
        self.seat = {p: i for i, p in enumerate(players)}
        self.total = rules.deckel
        self._table = evaluation_table(rules)
        self._ties = rules.ties
        self.first_starter = starter
        self.phase = Phase.HALF1
        self._half_label: int | str = 1  # HALF_LABEL[self.phase], kept for the hot path
        self.mitte = rules.deckel
        self.stacks: dict[str, int] = dict.fromkeys(players, 0)
        self.active: list[str] = list(players)
        self.starter = starter
        self.order: list[str] = self._order_from(starter)
        self.round_turns: list[_Turn] = []
        self.limit: int | None = None
        self.rounds: list[dict[str, Any]] = []
        self.half_losers: list[str] = []
        self.finale: list[str] | None = None
        self.blattschuss = False
        self.loser: str | None = None
        self.last_receiver: str | None = None
        self.forced_loser: str | None = None
        self._turn_log: list[_Turn] = []  # every accepted turn, in order
        self.penalties: list[dict[str, Any]] = []
        self.commands: list[Command] = []  # every accepted command, in order
        self.played_at: str | None = None  # opaque to the engine; kept for the game log

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(cls, rules: Ruleset, players: Any, starter: Any) -> Game:
        """A new game: players in seat order (clockwise), the first round's starter."""
        if not isinstance(players, list | tuple):
            raise MalformedInput("„players“ muss eine Liste von Namen sein.", field="players")
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
            raise MalformedInput(
                f"Ein Spiel braucht {MIN_PLAYERS} bis {MAX_PLAYERS} Spieler, nicht {len(players)}.",
                field="players",
            )
        names = tuple(parse_player(p, "players") for p in players)
        if len(set(names)) != len(names):
            twice = sorted({p for p in names if names.count(p) > 1})
            raise MalformedInput(
                f"Jeder Spieler darf nur einmal mitspielen: {', '.join(twice)}.", field="players"
            )
        starter = parse_player(starter, "starter")
        if starter not in names:
            raise MalformedInput(f"Der Startspieler „{starter}“ spielt nicht mit.", field="starter")
        return cls(rules, names, starter)

    def copy(self) -> Game:
        """An independent copy (the ruleset and the evaluation table are shared; both frozen)."""
        clone = copy.copy(self)
        clone.stacks = dict(self.stacks)
        clone.active = list(self.active)
        clone.order = list(self.order)
        clone.round_turns = list(self.round_turns)
        clone.rounds = list(self.rounds)
        clone.half_losers = list(self.half_losers)
        clone.finale = list(self.finale) if self.finale is not None else None
        clone._turn_log = list(self._turn_log)
        clone.penalties = list(self.penalties)
        clone.commands = list(self.commands)
        return clone

    # ------------------------------------------------------------------ queries
    @property
    def finished(self) -> bool:
        return self.phase is Phase.FINISHED

    @property
    def next_player(self) -> str | None:
        if self.phase is Phase.FINISHED:
            return None
        return self.order[len(self.round_turns)]

    def _order_from(self, starter: str) -> list[str]:
        """The active players clockwise from ``starter`` (who must be active)."""
        i = self.active.index(starter)
        return self.active[i:] + self.active[:i]

    def _next_active_from(self, player: str) -> str:
        """``player`` if active, else the next active player clockwise."""
        n = len(self.players)
        start = self.seat[player]
        for k in range(n):
            candidate = self.players[(start + k) % n]
            if candidate in self.active:
                return candidate
        raise AssertionError("no active player")  # pragma: no cover - a half has ≥ 2 players

    @property
    def turns(self) -> list[dict[str, Any]]:
        """Every accepted turn as a fact (the statistics' raw material), in order."""
        return [_turn_fact(t) for t in self._turn_log]

    def state(self) -> dict[str, Any]:
        return {
            "phase": self.phase.value,
            "mitte": self.mitte,
            "stacks": dict(self.stacks),
            "active": list(self.active),
            "next_player": self.next_player,
            "limit": self.limit,
        }

    def current_round(self) -> list[dict[str, Any]]:
        """The turns of the round in progress, in order."""
        log = self._turn_log
        return [_turn_fact(t) for t in log[len(log) - len(self.round_turns) :]]

    def outcome(self) -> dict[str, Any]:
        """The outcome of GAMELOG.md (plus ``penalties`` and ``current_round``)."""
        return {
            "rounds": [dict(r) for r in self.rounds],
            "half_losers": list(self.half_losers),
            "finale": list(self.finale) if self.finale is not None else None,
            "blattschuss": self.blattschuss,
            "loser": self.loser,
            "state": self.state(),
            "penalties": [dict(p) for p in self.penalties],
            "current_round": self.current_round(),
        }

    # ------------------------------------------------------------------ commands
    def apply(self, command: Command) -> list[DomainEvent]:
        """Apply one command; return the domain events. Raises and changes nothing on error."""
        if self.phase is Phase.FINISHED:
            raise RuleViolation(f"Das Spiel ist schon vorbei: {self.loser} hat verloren.")
        if type(command) is RecordTurn and command.player == self.order[len(self.round_turns)]:
            events = self._turn(command)  # the common case: the right player's turn
            self.commands.append(command)
            return events
        if command.player not in self.seat:
            raise RuleViolation(f"„{command.player}“ spielt in diesem Spiel nicht mit.")
        if command.player not in self.active:
            if self.phase is Phase.FINALE:
                raise RuleViolation(f"{command.player} spielt im Finale nicht mit.")
            raise RuleViolation(
                f"{command.player} ist in dieser Hälfte schon raus (keine Deckel mehr)."
            )
        if isinstance(command, RecordTurn):
            events = self._turn(command)
        else:
            events = self._penalty(command)
        self.commands.append(command)
        return events

    def _turn(self, cmd: RecordTurn) -> list[DomainEvent]:
        expected = self.order[len(self.round_turns)]
        if cmd.player != expected:
            raise RuleViolation(f"{cmd.player} ist nicht an der Reihe, sondern {expected}.")
        limit = self.limit
        if limit is not None:
            if cmd.detail is not None and cmd.throws > limit and cmd.detail[limit - 1].sixes:
                raise RuleViolation(
                    f"Nach dem letzten erlaubten Wurf (Wurf {limit}) dürfen keine Sechsen "
                    "umgedreht werden."
                )
            if cmd.throws > limit:
                allowed = "ist höchstens 1 Wurf" if limit == 1 else f"sind höchstens {limit} Würfe"
                raise RuleViolation(
                    f"In dieser Runde {allowed} erlaubt ({self.order[0]} hat vorgelegt), "
                    f"nicht {cmd.throws}."
                )
        try:
            ev = self._table[(*cmd.dice, cmd.hand)]
        except KeyError:
            raise MalformedInput(
                f"{list(cmd.dice)} ist kein gültiger Wurf: erwartet {self.rules.dice_count} "
                "Würfel mit 1 bis 6 Augen."
            ) from None
        # ---- accepted: from here on nothing raises
        round_turns = self.round_turns
        position = len(round_turns)
        throws = cmd.throws
        if position == 0:
            self.limit = throws
        player = cmd.player
        turn = _Turn(
            player,
            ev,
            throws,
            cmd.blind,
            position,
            self._sort_key(ev.key, throws, position),
            self._half_label,
            len(self.rounds),
            cmd.hand,
        )
        round_turns.append(turn)
        self._turn_log.append(turn)
        events = [
            DomainEvent(
                EventKind.TURN_RECORDED,
                f"{player}: {ev.name} ({ev.notation}, {_WURF[throws]}).",
                {"player": player, "name": ev.name, "dice": ev.notation},
            )
        ]
        if position + 1 == len(self.order) or (
            ev.worth_all and position and self.rules.schock_aus_ends_round
        ):
            events.extend(self._resolve())
        return events

    # ------------------------------------------------------------------ resolution
    def _sort_key(self, key: int, throws: int, order: int) -> int:
        """The tie rule as one integer (RULES 10.8), higher is better; equal means unresolved.

        standard: (result, fewer throws); wikipedia/hennef: (result, fewer throws, earlier);
        bvb/wolbeck: (result, earlier). Throws are at most 5 and a round has at most 20 turns.
        """
        ties = self._ties
        if ties is Ties.THROWS_THEN_REPEAT:
            return key * 8 + (7 - throws)
        if ties is Ties.LATER_LOWER_UNLESS_FEWER:
            return (key * 8 + (7 - throws)) * 32 + (31 - order)
        return key * 32 + (31 - order)

    def _resolve(self) -> list[DomainEvent]:
        turns = self.round_turns
        forced = self.forced_loser
        worst_turn: _Turn | None
        if forced is not None:
            worst_player = forced
            rest = [t for t in turns if t.player != forced]
            top = max(t.sort for t in rest)
            best_cands = [t for t in rest if t.sort == top]
            worst_turn = next((t for t in turns if t.player == forced), None)
        else:
            top = max(t.sort for t in turns)
            best_cands = [t for t in turns if t.sort == top]
            if len(best_cands) == len(turns):
                return self._repeat("Alle haben gleich geworfen")
            # the best result never loses; tied best results are all "best"
            pool = [t for t in turns if t.sort < top]
            if self.rules.two_fives_never_lose:
                pool = [t for t in pool if not t.ev.two_fives] or pool
            low = min(t.sort for t in pool)
            worst_cands = [t for t in pool if t.sort == low]
            if len(worst_cands) > 1:
                names = " und ".join(t.player for t in worst_cands)
                return self._repeat(f"Gleichstand ganz unten ({names})")
            worst_turn = worst_cands[0]
            worst_player = worst_turn.player
        best = best_cands[0]

        ev = best.ev
        value = ev.deckel
        if not ev.worth_all and any(t.blind for t in turns):
            value *= 2
        payer: str | None  # None: the Mitte
        if ev.takes_all:
            return self._schock_aus(best, worst_player, worst_turn)
        if self.mitte > 0:
            payer = None
            if self.rules.passing_on:
                holders = [t for t in best_cands if self.stacks[t.player] > 0]
                if len(best_cands) > 1 and holders:
                    return self._repeat("Gleichstand ganz oben, und der Beste muss zahlen")
                if self.stacks[best.player] > 0:
                    payer = best.player
        else:
            if len(best_cands) > 1:
                return self._repeat("Gleichstand ganz oben, und der Beste muss zahlen")
            payer = best.player
        available = self.mitte if payer is None else self.stacks[payer]
        amount = min(value, available)
        if payer is None:
            self.mitte -= amount
        else:
            self.stacks[payer] -= amount
        self.stacks[worst_player] += amount
        if amount:
            self.last_receiver = worst_player
        source = "mitte" if payer is None else payer
        record = self._round_record(best.player, worst_player, amount, source)
        record.update(
            best_result=ev.name,
            worst_result=worst_turn.ev.name if worst_turn else None,
            value=value,
        )
        self.rounds.append(record)
        von = "aus der Mitte" if payer is None else f"von {payer}"
        why = f"{ev.name} von {best.player}"
        if forced is not None:
            why += f"; {worst_player} verliert die Runde wegen einer Strafe"
        events = [
            DomainEvent(
                EventKind.ROUND_LOST,
                f"{worst_player} bekommt {_deckel_word(amount)} {von} – {why}.",
                {
                    "player": worst_player,
                    "deckel": amount,
                    "from": source,
                    "best": best.player,
                    "best_result": ev.name,
                },
            )
        ]
        events.extend(self._after_round(worst_player))
        return events

    def _round_record(
        self, best: str | None, worst: str | None, amount: int, source: Any
    ) -> dict[str, Any]:
        return {
            "half": HALF_LABEL[self.phase],
            "starter": self.order[0],
            "limit": self.limit,
            "best": best,
            "worst": worst,
            "deckel": amount,
            "from": source,
            "repeated": source is None,
        }

    def _repeat(self, why: str) -> list[DomainEvent]:
        self.rounds.append(self._round_record(None, None, 0, None))
        starter = self.order[0]
        self.round_turns = []
        self.limit = None
        return [
            DomainEvent(
                EventKind.ROUND_REPEATED,
                f"{why}: die Runde wird wiederholt, {starter} beginnt neu.",
                {"starter": starter},
            )
        ]

    def _schock_aus(self, best: _Turn, worst: str, worst_turn: _Turn | None) -> list[DomainEvent]:
        received = self.total - self.stacks[worst]
        self.mitte = 0
        for p in self.stacks:
            self.stacks[p] = 0
        self.stacks[worst] = self.total
        self.last_receiver = worst
        record = self._round_record(best.player, worst, received, "all")
        record.update(
            best_result=best.ev.name,
            worst_result=worst_turn.ev.name if worst_turn else None,
            value=self.total,
        )
        self.rounds.append(record)
        events = [
            DomainEvent(
                EventKind.ROUND_LOST,
                f"{best.ev.name} von {best.player}! {worst} bekommt alle Deckel.",
                {
                    "player": worst,
                    "deckel": received,
                    "from": "all",
                    "best": best.player,
                    "best_result": best.ev.name,
                },
            )
        ]
        events.extend(self._after_round(worst))
        return events

    def _after_round(self, round_loser: str) -> list[DomainEvent]:
        """Half end, elimination, the next round's starter."""
        self.round_turns = []
        self.limit = None
        self.forced_loser = None
        holder = self._holder_of_all()
        if holder is not None:
            return self._half_lost(holder)
        events = self._eliminate()
        if self.rules.next_starter is NextStarter.LAST_RECEIVER and self.last_receiver:
            nxt = self.last_receiver
        else:
            nxt = round_loser
        self._set_starter(self._next_active_from(nxt))
        return events

    def _set_starter(self, starter: str) -> None:
        self.starter = starter
        self.order = self._order_from(starter)

    def _holder_of_all(self) -> str | None:
        for p in self.active:
            if self.stacks[p] == self.total:
                return p
        return None

    def _eliminate(self) -> list[DomainEvent]:
        if self.mitte > 0:
            return []
        out = [p for p in self.active if self.stacks[p] == 0]
        if not out:
            return []
        self.active = [p for p in self.active if self.stacks[p] > 0]
        return [
            DomainEvent(
                EventKind.PLAYER_OUT,
                f"{p} hat keine Deckel mehr und ist in dieser Hälfte raus.",
                {"player": p},
            )
            for p in out
        ]

    def _reset_deckel(self, active: list[str], starter: str) -> None:
        self.mitte = self.total
        for p in self.stacks:
            self.stacks[p] = 0
        self.active = active
        self.round_turns = []
        self.limit = None
        self.forced_loser = None
        self.last_receiver = None
        self._set_starter(starter)

    def _half_lost(self, loser: str) -> list[DomainEvent]:
        events: list[DomainEvent] = []
        phase = self.phase
        if phase is Phase.FINALE:
            return self._game_lost(loser, "verliert das Finale")
        self.half_losers.append(loser)
        events.append(
            DomainEvent(
                EventKind.HALF_LOST,
                f"{loser} hat alle Deckel und verliert {HALF_NAME[phase]}.",
                {"player": loser, "half": HALF_LABEL[phase], "stacks": dict(self.stacks)},
            )
        )
        if phase is Phase.HALF1:
            self.phase = Phase.HALF2
            self._half_label = 2
            self._reset_deckel(list(self.players), loser)
            return events
        first = self.half_losers[0]
        if first == loser:
            self.blattschuss = True
            events.append(
                DomainEvent(
                    EventKind.BLATTSCHUSS,
                    f"Blattschuss! {loser} hat beide Hälften verloren.",
                    {"player": loser},
                )
            )
            events.extend(self._game_lost(loser, "verliert das Spiel"))
            return events
        finalists = [p for p in self.players if p in (first, loser)]
        self.finale = finalists
        self.phase = Phase.FINALE
        self._half_label = "finale"
        opener = first if self.rules.finale_opener is FinaleOpener.FIRST_HALF_LOSER else loser
        self._reset_deckel(finalists, opener)
        events.append(
            DomainEvent(
                EventKind.FINALE_STARTED,
                f"Finale: {finalists[0]} gegen {finalists[1]}, {opener} beginnt.",
                {"players": finalists, "starter": opener},
            )
        )
        return events

    def _game_lost(self, loser: str, how: str) -> list[DomainEvent]:
        stacks = dict(self.stacks)
        self.loser = loser
        self.phase = Phase.FINISHED
        self.mitte = self.total
        for p in self.stacks:
            self.stacks[p] = 0
        self.round_turns = []
        self.limit = None
        self.forced_loser = None
        return [
            DomainEvent(
                EventKind.GAME_LOST,
                f"{loser} {how} und zahlt die Runde.",
                {"player": loser, "stacks": stacks},
            )
        ]

    # ------------------------------------------------------------------ penalties
    def _penalty(self, cmd: RecordPenalty) -> list[DomainEvent]:
        offender = cmd.player
        if self.rules.penalty_mode is PenaltyMode.ROUND_LOSER:
            if self.forced_loser is not None:
                raise RuleViolation(
                    f"{self.forced_loser} verliert diese Runde schon wegen einer Strafe."
                )
            self.forced_loser = offender
            self.penalties.append(self._penalty_record(cmd, 0, None))
            return [
                DomainEvent(
                    EventKind.PENALTY,
                    f"Strafe für {offender} ({cmd.reason}): verliert die Runde.",
                    {"player": offender, "deckel": 0, "reason": cmd.reason},
                )
            ]
        wanted = cmd.deckel if cmd.deckel is not None else self.rules.penalty
        assert wanted is not None  # parse_event guarantees it in deckel mode
        payer: str | None = None
        if self.mitte > 0:
            amount = min(wanted, self.mitte)
            self.mitte -= amount
        else:
            payer = self._richest_other(offender)
            amount = min(wanted, self.stacks[payer])
            self.stacks[payer] -= amount
        self.stacks[offender] += amount
        if amount:
            self.last_receiver = offender
        self.penalties.append(self._penalty_record(cmd, amount, payer))
        von = "aus der Mitte" if payer is None else f"von {payer}"
        events = [
            DomainEvent(
                EventKind.PENALTY,
                f"Strafe für {offender} ({cmd.reason}): {_deckel_word(amount)} {von}.",
                {
                    "player": offender,
                    "deckel": amount,
                    "from": payer or "mitte",
                    "reason": cmd.reason,
                },
            )
        ]
        if self.stacks[offender] == self.total:
            self.round_turns = []  # a round in progress is dropped
            self.limit = None
            self.forced_loser = None
            events.extend(self._half_lost(offender))
            return events
        if not self.round_turns:  # between rounds: elimination and the starter now
            events.extend(self._eliminate())
            nxt = self.starter
            if self.rules.next_starter is NextStarter.LAST_RECEIVER and amount:
                nxt = offender
            self._set_starter(self._next_active_from(nxt))
        return events

    def _richest_other(self, offender: str) -> str:
        n = len(self.players)
        start = self.seat[offender]
        clockwise = [self.players[(start + k) % n] for k in range(1, n)]
        candidates = [p for p in clockwise if p in self.active]
        return max(candidates, key=lambda p: self.stacks[p])  # max keeps the first on ties

    def _penalty_record(self, cmd: RecordPenalty, amount: int, payer: str | None) -> dict[str, Any]:
        return {
            "half": HALF_LABEL[self.phase],
            "round": len(self.rounds),
            "player": cmd.player,
            "deckel": amount,
            "from": payer or "mitte",
            "reason": cmd.reason,
        }


__all__ = ["Game", "Phase", "EventKind", "DomainEvent", "MAX_NAME"]
