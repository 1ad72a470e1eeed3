"""Luck and decisions of a game's turns, measured with the exact odds (api/rules/RULES.md §13).

Every turn after the first of a round has something to beat: the round's worst result so far
(the player who threw it would lose the round now). At the start of such a turn the player's
chance of beating it, playing on optimally, is ``p_start`` (:meth:`~.odds.Solver.start`). The
turn ends beating it (``outcome`` 1) or not (0). Where every throw of the turn is known, the
difference is split:

* before each throw the position has a chance ``v``; the throw shows its dice and the best
  decision now has ``b``: the throw's *luck* is ``b − v``; the decision taken has ``c``: the
  *chance given away* is ``b − c`` (0 for the best one), and ``c`` is the chance before the
  next throw. After the last throw the decision is to stop, so ``c`` is the outcome, and per
  turn ``p_start + luck − given_away = outcome`` exactly, as the sums telescope. Whatever a
  player's strategy, a throw's luck is 0 on average (``v`` is the mean of ``b`` over the dice).

Every throw is known for a turn recorded **throw by throw**, and for a **summary in a round
of one throw** (its dice are that throw's, and nobody chose to stop there). Any other summary
only says where the turn ended: its luck and its decisions cannot be told apart (a summary of
one throw in a round of more is one whose first throw was good enough to stop: splitting only
those would count good luck only), so it is rated at the start (``p_start``, ``outcome``) but
not *split*; nor is a **blind** turn (its one throw was chosen before it).

Per player the sums of a game are :class:`PlayerLuck`; :func:`game_luck` computes them from
the engine's state of a game (its turns, their commands and the rounds' limits).
"""

from __future__ import annotations

from dataclasses import dataclass

from .dice import parse_dice
from .game import Game
from .odds import Solver, Target, solver, worst_so_far
from .records import TurnFact
from .turns import RecordTurn, Throw

__all__ = ["PlayerLuck", "TurnLuck", "game_luck", "turn_luck"]


@dataclass(frozen=True, slots=True)
class TurnLuck:
    """One rated turn (every turn after the first of its round)."""

    player: str
    round: int  # index of the round in Game.rounds
    p_start: float  # the chance of beating the round's worst result so far, before throwing
    outcome: int  # 1: the turn's result beats it, 0: it does not
    split: bool  # every throw known: outcome − p_start split into luck and given away
    luck: float  # the dice's share of outcome − p_start (0 when not split)
    given_away: float  # the decisions' share, as a loss (≥ 0; 0 when not split)


@dataclass(frozen=True, slots=True)
class PlayerLuck:
    """A player's sums over the rated turns of one game."""

    turns: int = 0  # rated turns
    expected: float = 0.0  # the sum of their chances at the start
    survived: int = 0  # of them, those that beat the round's worst so far
    split: int = 0  # of them, those split into luck and decisions
    luck: float = 0.0
    given_away: float = 0.0

    def add(self, turn: TurnLuck) -> PlayerLuck:
        return PlayerLuck(
            self.turns + 1,
            self.expected + turn.p_start,
            self.survived + turn.outcome,
            self.split + turn.split,
            self.luck + turn.luck,
            self.given_away + turn.given_away,
        )


def turn_luck(game: Game) -> list[TurnLuck]:
    """Every rated turn of ``game``'s resolved rounds, in the order played."""
    rules = game.rules
    commands = [c for c in game.commands if isinstance(c, RecordTurn)]
    out: list[TurnLuck] = []
    earlier: list[TurnFact] = []  # the turns of the round before this one
    for fact, cmd in zip(game.turns, commands, strict=True):
        if fact.round >= len(game.rounds):
            break  # a round not yet resolved (a game in progress)
        if not fact.order:
            earlier = [fact]  # a round's first turn: nothing to beat
            continue
        worst = worst_so_far(rules, earlier)
        earlier.append(fact)
        assert worst is not None  # noqa: S101 - the round's first turn came before
        dice = parse_dice(fact.dice)
        limit = max(game.rounds[fact.round].limit, fact.throws)
        solve = solver(rules, Target.of(worst), limit)
        p_start = solve.start()[0]
        if cmd.blind:
            throws: tuple[Throw, ...] | None = None  # chosen before the throw: not split
        elif cmd.detail is not None:
            throws = cmd.detail
        else:  # a summary: its throw is known where the round allowed one only
            throws = (Throw(cmd.dice),) if game.rounds[fact.round].limit == 1 else None
        outcome = solve.final(tuple(sorted(dice)), fact.throws, fact.hand)[0] and 1
        luck, given = _split(solve, p_start, throws) if throws else (0.0, 0.0)
        out.append(TurnLuck(fact.player, fact.round, p_start, outcome, bool(throws), luck, given))
    return out


def _split(solve: Solver, p_start: float, throws: tuple[Throw, ...]) -> tuple[float, float]:
    """(luck, chance given away) of a turn whose every throw is known."""
    aside: tuple[int, ...] = ()
    chance, last = p_start, len(throws)
    luck = given = 0.0
    for n, throw in enumerate(throws, start=1):
        thrown = tuple(sorted(throw.dice))
        whole = solve.scale(n)
        best = solve.value(aside, thrown, n)[0] / whole
        move = (True, (), 0) if n == last else (False, tuple(sorted(throw.aside)), throw.sixes)
        taken = solve.counts(aside, thrown, n, move)[0] / whole
        luck += best - chance
        given += best - taken
        chance = taken
        aside = tuple(sorted(aside + (1,) * throw.sixes + throw.aside))
    return luck, given


def game_luck(game: Game) -> dict[str, PlayerLuck]:
    """Each player's sums over the game's rated turns (every player of the game, also one
    without a rated turn)."""
    sums = {name: PlayerLuck() for name in game.players}
    for turn in turn_luck(game):
        sums[turn.player] = sums[turn.player].add(turn)
    return sums
