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
from typing import Any

from .errors import MalformedInput, RuleViolation
from .events import (
    Blattschuss,
    DomainEvent,
    EventKind,
    FinaleStarted,
    GameLost,
    HalfLost,
    PenaltyGiven,
    PlayerOut,
    RoundLost,
    RoundRepeated,
    TurnRecorded,
)
from .limits import THROWS
from .records import GameState, Half, Outcome, PenaltyRecord, Phase, RoundRecord, TurnFact
from .results import Evaluation, evaluation_table
from .ruleset import FinaleOpener, NextStarter, PenaltyMode, Ruleset, Ties
from .turns import MAX_NAME, Command, RecordPenalty, RecordTurn, parse_player, throws_word
from .words import count

MIN_PLAYERS = 2
MAX_PLAYERS = 20


_HALF_NAME = {Phase.HALF1: "die erste Hälfte", Phase.HALF2: "die zweite Hälfte"}


def _deckel_word(n: int) -> str:
    return count(n, "Deckel", "Deckel")


@dataclass(slots=True)
class _Turn:
    player: str
    ev: Evaluation
    throws: int
    blind: bool
    order: int  # position in the round, 0 = starter
    sort: int  # the tie rule's sort key, see sort_key
    half: Half
    round: int  # index of the round in Game.rounds
    hand: bool


_WURF = {n: throws_word(n) for n in THROWS}


def _turn_fact(t: _Turn) -> TurnFact:
    ev = t.ev
    return TurnFact(
        t.half,
        t.round,
        t.order,
        t.player,
        ev.notation,
        t.throws,
        t.hand,
        t.blind,
        ev.category,
        ev.name,
        ev.deckel,
        ev.key,
    )


def sort_key(ties: Ties, key: int, throws: int, order: int) -> int:
    """A result's place in its round under the tie rule, as one integer (api/rules/RULES.md
    §10.8): higher is better, equal means unresolved. ``key`` is the result's comparison key,
    ``throws`` the throws it took, ``order`` the turn's position in the round (0 = first).

    standard: (result, fewer throws); wikipedia/hennef: (result, fewer throws, earlier);
    bvb/wolbeck: (result, earlier). Throws are at most 5 and a round has at most 20 turns.
    """
    if ties is Ties.THROWS_THEN_REPEAT:
        return key * 8 + (7 - throws)
    if ties is Ties.LATER_LOWER_UNLESS_FEWER:
        return (key * 8 + (7 - throws)) * 32 + (31 - order)
    return key * 32 + (31 - order)


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
        self._half = Half.HALF1  # the half of self.phase (kept when the game is finished)
        self.mitte = rules.deckel
        self.stacks: dict[str, int] = dict.fromkeys(players, 0)
        self.active: list[str] = list(players)
        self.starter = starter
        self.order: list[str] = self._order_from(starter)
        self.round_turns: list[_Turn] = []
        self.limit: int | None = None
        self.rounds: list[RoundRecord] = []
        self.half_losers: list[str] = []
        self.finale: list[str] | None = None
        self.blattschuss = False
        self.loser: str | None = None
        self.last_receiver: str | None = None
        self.forced_loser: str | None = None
        self._turn_log: list[_Turn] = []  # every accepted turn, in order
        self._facts: list[TurnFact] = []  # the facts of _turn_log[: len(_facts)], built lazily
        self.penalties: list[PenaltyRecord] = []
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
        clone._facts = list(self._facts)
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
        """``player`` if active, else the next active player clockwise (a half has ≥ 2)."""
        if player in self.active:
            return player  # nearly always: no generators to build (replay speed)
        n = len(self.players)
        start = self.seat[player]
        clockwise = (self.players[(start + k) % n] for k in range(1, n))
        return next(p for p in clockwise if p in self.active)

    @property
    def turns(self) -> list[TurnFact]:
        """Every accepted turn as a fact (the statistics' raw material), in order."""
        facts, log = self._facts, self._turn_log
        if len(facts) < len(log):  # turns are only ever added: build the new ones once
            facts.extend(_turn_fact(t) for t in log[len(facts) :])
        return list(facts)

    def state(self) -> GameState:
        return GameState(
            self.phase,
            self.mitte,
            dict(self.stacks),
            tuple(self.active),
            self.next_player,
            self.limit,
        )

    def current_round(self) -> list[TurnFact]:
        """The turns of the round in progress, in order."""
        log = self._turn_log
        return [_turn_fact(t) for t in log[len(log) - len(self.round_turns) :]]

    def outcome(self) -> Outcome:
        """The outcome of schemas/GAMELOG.md (plus ``penalties`` and ``current_round``)."""
        finale = self.finale
        return Outcome(
            tuple(self.rounds),
            tuple(self.half_losers),
            (finale[0], finale[1]) if finale is not None else None,
            self.blattschuss,
            self.loser,
            self.state(),
            tuple(self.penalties),
            tuple(self.current_round()),
        )

    # ------------------------------------------------------------------ commands
    def apply(self, command: Command) -> list[DomainEvent]:
        """Apply one command; return the domain events. Raises and changes nothing on error."""
        if self.phase is Phase.FINISHED:
            raise RuleViolation(
                f"Das Spiel ist schon vorbei: {self.loser} hat verloren.", code="game_finished"
            )
        if type(command) is RecordTurn and command.player == self.order[len(self.round_turns)]:
            events = self._turn(command)  # the common case: the right player's turn
            self.commands.append(command)
            return events
        if command.player not in self.seat:
            raise MalformedInput(  # never right in this game, whatever its state: 422
                f"„{command.player}“ spielt in diesem Spiel nicht mit.",
                field="player",
                code="unknown_player",
            )
        if command.player not in self.active:
            if self.phase is Phase.FINALE:
                raise RuleViolation(
                    f"{command.player} spielt im Finale nicht mit.",
                    field="player",
                    code="player_out",
                )
            raise RuleViolation(
                f"{command.player} ist in dieser Hälfte schon raus (keine Deckel mehr).",
                field="player",
                code="player_out",
            )
        if isinstance(command, RecordTurn):
            events = self._turn(command)
        else:
            events = self._penalty(command)
        self.commands.append(command)
        return events

    def _check_limit(self, cmd: RecordTurn) -> None:
        """The round's limit, set by its opener (409: it depends on the round)."""
        limit = self.limit
        if limit is None:
            return
        if cmd.detail is not None and cmd.throws > limit and cmd.detail[limit - 1].sixes:
            raise RuleViolation(
                f"Nach dem letzten erlaubten Wurf (Wurf {limit}) dürfen keine Sechsen "
                "umgedreht werden.",
                field="detail",
                code="throw_limit_exceeded",
            )
        if cmd.throws > limit:
            allowed = "ist höchstens 1 Wurf" if limit == 1 else f"sind höchstens {limit} Würfe"
            raise RuleViolation(
                f"In dieser Runde {allowed} erlaubt ({self.order[0]} hat vorgelegt), "
                f"nicht {cmd.throws}.",
                field="throws" if cmd.detail is None else "detail",
                code="throw_limit_exceeded",
            )

    def _turn(self, cmd: RecordTurn) -> list[DomainEvent]:
        expected = self.order[len(self.round_turns)]
        if cmd.player != expected:
            raise RuleViolation(
                f"{cmd.player} ist nicht an der Reihe, sondern {expected}.",
                field="player",
                code="turn_not_yours",
            )
        self._check_limit(cmd)
        try:
            ev = self._table[(*cmd.dice, cmd.hand)]
        except KeyError:
            raise MalformedInput(
                f"{list(cmd.dice)} ist kein gültiger Wurf: erwartet {self.rules.dice_count} "
                "Würfel mit 1 bis 6 Augen.",
                field="dice",
                code="invalid_dice",
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
            sort_key(self._ties, ev.key, throws, position),
            self._half,
            len(self.rounds),
            cmd.hand,
        )
        round_turns.append(turn)
        self._turn_log.append(turn)
        events = [
            DomainEvent(
                f"{player}: {ev.name} ({ev.notation}, {_WURF[throws]}).",
                TurnRecorded(player, ev.name, ev.notation),
            )
        ]
        if position + 1 == len(self.order) or (
            ev.worth_all and position and self.rules.schock_aus_ends_round
        ):
            events.extend(self._resolve())
        return events

    # ------------------------------------------------------------------ resolution
    def _resolve(self) -> list[DomainEvent]:
        """The round is complete: find its best and worst turn (or repeat it)."""
        turns = self.round_turns
        forced = self.forced_loser
        if forced is not None:
            rest = [t for t in turns if t.player != forced]
            top = max(t.sort for t in rest)
            best_cands = [t for t in rest if t.sort == top]
            worst_turn = next((t for t in turns if t.player == forced), None)
            return self._settle(best_cands, forced, worst_turn)
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
        return self._settle(best_cands, worst_turn.player, worst_turn)

    def _settle(
        self, best_cands: list[_Turn], worst_player: str, worst_turn: _Turn | None
    ) -> list[DomainEvent]:
        """The worst player receives what the best result is worth, from the Mitte or the best."""
        best = best_cands[0]
        ev = best.ev
        if ev.takes_all:
            return self._schock_aus(best, worst_player, worst_turn)
        value = ev.deckel
        if not ev.worth_all and any(t.blind for t in self.round_turns):
            value *= 2
        payer: str | None  # None: the Mitte
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
        worst_result = worst_turn.ev.name if worst_turn else None
        self.rounds.append(
            self._round_record(best.player, worst_player, amount, source, ev, worst_result, value)
        )
        von = "aus der Mitte" if payer is None else f"von {payer}"
        why = f"{ev.name} von {best.player}"
        if self.forced_loser is not None:
            why += f"; {worst_player} verliert die Runde wegen einer Strafe"
        events = [
            DomainEvent(
                f"{worst_player} bekommt {_deckel_word(amount)} {von} – {why}.",
                RoundLost(worst_player, amount, source, best.player, ev.name),
            )
        ]
        events.extend(self._after_round(worst_player))
        return events

    def _round_record(
        self,
        best: str | None,
        worst: str | None,
        amount: int,
        source: str | None,
        result: Evaluation | None = None,
        worst_result: str | None = None,
        value: int | None = None,
    ) -> RoundRecord:
        limit = self.limit
        assert limit is not None  # a round is resolved after its starter's turn
        best_result = result.name if result is not None else None
        return RoundRecord(
            self._half,
            self.order[0],
            limit,
            best,
            worst,
            amount,
            source,
            best_result,
            worst_result,
            value,
        )

    def _repeat(self, why: str) -> list[DomainEvent]:
        self.rounds.append(self._round_record(None, None, 0, None))
        starter = self.order[0]
        self.round_turns = []
        self.limit = None
        return [
            DomainEvent(
                f"{why}: die Runde wird wiederholt, {starter} beginnt neu.",
                RoundRepeated(starter),
            )
        ]

    def _schock_aus(self, best: _Turn, worst: str, worst_turn: _Turn | None) -> list[DomainEvent]:
        """api/rules/RULES.md §5.4: the worst receives every Deckel and loses the half (the Finale) at once;
        :meth:`_half_lost` then puts them all back in the Mitte and drops the round."""
        received = self.total - self.stacks[worst]
        for p in self.stacks:
            self.stacks[p] = 0
        self.stacks[worst] = self.total
        worst_result = worst_turn.ev.name if worst_turn else None
        self.rounds.append(
            self._round_record(
                best.player, worst, received, "all", best.ev, worst_result, self.total
            )
        )
        events = [
            DomainEvent(
                f"{best.ev.name} von {best.player}! {worst} bekommt alle Deckel.",
                RoundLost(worst, received, "all", best.player, best.ev.name),
            )
        ]
        events.extend(self._half_lost(worst))
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
            DomainEvent(f"{p} hat keine Deckel mehr und ist in dieser Hälfte raus.", PlayerOut(p))
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
                f"{loser} hat alle Deckel und verliert {_HALF_NAME[phase]}.",
                HalfLost(loser, self._half, dict(self.stacks)),
            )
        )
        if phase is Phase.HALF1:
            self.phase = Phase.HALF2
            self._half = Half.HALF2
            self._reset_deckel(list(self.players), loser)
            return events
        first = self.half_losers[0]
        if first == loser:
            self.blattschuss = True
            events.append(
                DomainEvent(f"Blattschuss! {loser} hat beide Hälften verloren.", Blattschuss(loser))
            )
            events.extend(self._game_lost(loser, "verliert das Spiel"))
            return events
        finalists = [p for p in self.players if p in (first, loser)]
        self.finale = finalists
        self.phase = Phase.FINALE
        self._half = Half.FINALE
        opener = first if self.rules.finale_opener is FinaleOpener.FIRST_HALF_LOSER else loser
        self._reset_deckel(list(finalists), opener)
        events.append(
            DomainEvent(
                f"Finale: {finalists[0]} gegen {finalists[1]}, {opener} beginnt.",
                FinaleStarted((finalists[0], finalists[1]), opener),
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
        return [DomainEvent(f"{loser} {how} und zahlt die Runde.", GameLost(loser, stacks))]

    # ------------------------------------------------------------------ penalties
    def _penalty(self, cmd: RecordPenalty) -> list[DomainEvent]:
        offender = cmd.player
        if self.rules.penalty_mode is PenaltyMode.ROUND_LOSER:
            if self.forced_loser is not None:
                raise RuleViolation(
                    f"{self.forced_loser} verliert diese Runde schon wegen einer Strafe.",
                    code="round_lost_already",
                )
            self.forced_loser = offender
            self.penalties.append(self._penalty_record(cmd, 0, None))
            return [
                DomainEvent(
                    f"Strafe für {offender} ({cmd.reason}): verliert die Runde.",
                    PenaltyGiven(offender, 0, cmd.reason),
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
                f"Strafe für {offender} ({cmd.reason}): {_deckel_word(amount)} {von}.",
                PenaltyGiven(offender, amount, cmd.reason, payer or "mitte"),
            )
        ]
        if self.stacks[offender] == self.total:  # _half_lost drops a round in progress
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

    def _penalty_record(self, cmd: RecordPenalty, amount: int, payer: str | None) -> PenaltyRecord:
        return PenaltyRecord(
            self._half, len(self.rounds), cmd.player, amount, payer or "mitte", cmd.reason
        )


__all__ = ["Game", "Phase", "EventKind", "DomainEvent", "MAX_NAME"]
