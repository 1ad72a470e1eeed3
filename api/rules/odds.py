"""The odds of a turn: exact probabilities of beating a result, by dynamic programming
(api/rules/RULES.md §12).

A player has just thrown. Another player threw ``target`` earlier in the same round. For
every decision the player may take now — stop, or set aside part of the dice just thrown
(turning sixes where the house rules allow) and throw the rest again — :func:`odds` gives
the probability that the turn's final result beats the target (``p_beat``) and that the
ruleset treats it as equal to the target (``p_tie``), when the player goes on optimally
afterwards::

    >>> from api.rules import PRESETS
    >>> answer = odds(PRESETS["standard"], (1, 1), (4,), 2, 3, Target((1, 1, 5), 2, False))
    >>> [(d.stop, d.aside, round(d.p_beat, 4)) for d in answer.decisions], answer.best
    ([(True, (), 0.0), (False, (), 0.3333)], 1)

Stopping keeps Schock 4, worse than Schock 5; throwing the 4 again beats it with a 1 (Schock
aus) or a 6 (Schock 6), while a 5 in three throws loses the tie on throws to the earlier
Schock 5 in two: 2/6.

Which decisions are legal is the engine's own throw-by-throw rule
(:func:`~api.rules.turns.check_throw`, api/rules/RULES.md §3): dice set aside stay out for
the rest of the turn; below the throw limit the player may stop or set aside any part of the
dice just thrown (only 1s under ``ones_only_aside``) and throw the rest again — throwing all
of them again is a decision, setting all of them aside is stopping; turning sixes
(``sixes_turning``: ``sixes`` 1, two sixes, one a 1 set aside, the other back into the cup;
``sixes`` 2, three sixes, two 1s) always needs a further throw; after the last allowed throw
only stopping remains. A result is aus der Hand when its final throw threw every die of the
turn. Two results are compared as the round compares them (:func:`~api.rules.game.sort_key`,
the target's turn being the earlier one). The optimal continuation maximizes ``p_beat`` and,
among equal ones, ``p_tie`` (a replayed round beats a lost one).

The state space of a turn is small (what is set aside × the dice thrown × the throws made),
so a :class:`Solver` computes each position once and keeps it; :func:`solver` keeps the
solvers of the last rulesets, targets and limits used.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from math import factorial
from typing import NamedTuple

from .dice import format_dice, parse_dice
from .errors import MalformedInput
from .events import DomainEvent
from .game import Game, sort_key
from .records import TurnFact
from .results import evaluate
from .ruleset import Ruleset
from .throws import OpenTurn, RecordThrow, record_throw
from .turns import check_throw, throws_word

__all__ = [
    "Decision",
    "Odds",
    "Solver",
    "Target",
    "odds",
    "play_advised",
    "solver",
    "solver_for",
    "target_key",
]

Dice = tuple[int, ...]
#: (p_beat, p_tie)
Chances = tuple[float, float]
#: (p_beat, p_tie) counted exactly, in the units of :meth:`Solver.scale`
Counts = tuple[int, int]


class Target(NamedTuple):
    """The result to beat: its dice, the throws it took and whether it was aus der Hand."""

    dice: Dice
    throws: int
    hand: bool

    @classmethod
    def of(cls, turn: TurnFact) -> Target:
        """The result of an accepted turn."""
        return cls(parse_dice(turn.dice), turn.throws, turn.hand)


def worst_so_far(rules: Ruleset, turns: Iterable[TurnFact]) -> TurnFact | None:
    """The worst of ``turns`` (turns of one round, in order) as the round compares them, the
    earliest of equal ones: what a later turn of the round must beat to not lose it now
    (None: no turn yet)."""
    worst: tuple[int, TurnFact] | None = None
    for turn in turns:
        place = sort_key(rules.ties, turn.key, turn.throws, turn.order)
        if worst is None or place < worst[0]:
            worst = (place, turn)
    return None if worst is None else worst[1]


@dataclass(frozen=True, slots=True)
class Decision:
    """One legal decision after a throw and its chances when played on optimally."""

    stop: bool
    aside: Dice  # the pips of the throw just made that are set aside (turned sixes not included)
    sixes: int  # 0, 1 or 2: sixes turned into 1s
    p_beat: float
    p_tie: float


@dataclass(frozen=True, slots=True)
class Odds:
    """Every legal decision (stop first) and the index of the best one: the highest
    ``p_beat``, the first of equal ones."""

    decisions: tuple[Decision, ...]
    best: int


@cache
def _throws_of(n: int) -> tuple[tuple[Dice, int], ...]:
    """Every result of throwing ``n`` dice (pips ascending) with the number of the 6ⁿ ordered
    throws that show it."""
    out = []
    for combo in itertools.combinations_with_replacement(range(1, 7), n):
        ways = factorial(n)
        for count in Counter(combo).values():
            ways //= factorial(count)
        out.append((combo, ways))
    return tuple(out)


def _parts(dice: Dice) -> list[Dice]:
    """Every sub-multiset of ``dice``: the empty one first, then by size and pips."""
    found = {
        tuple(sorted(c)) for r in range(len(dice) + 1) for c in itertools.combinations(dice, r)
    }
    return sorted(found, key=lambda part: (len(part), part))


@lru_cache(maxsize=4096)
def _choices(rules: Ruleset, dice: Dice) -> tuple[tuple[Dice, int], ...]:
    """(aside, sixes) of every decision to throw again after ``dice`` (a throw below the
    limit), in the order they are listed, each legal by the engine's throw rule."""
    out = []
    for sixes in (0, 1, 2):
        pool = list(dice)
        for _ in range(sixes + 1 if sixes else 0):
            if 6 in pool:
                pool.remove(6)
        for aside in _parts(tuple(pool)):
            if not sixes and len(aside) == len(dice):
                continue  # every die set aside: that is stopping
            try:
                check_throw(dice, aside, sixes, 1, False, rules)
            except MalformedInput:
                continue
            out.append((aside, sixes))
    return tuple(out)


class Solver:
    """The chances of every position of a turn, for one ruleset, target and throw limit.

    Chances are computed exactly, in integers: after throw ``t`` of a turn with ``n`` dice
    and limit ``L``, a chance is counted in units of 1 / 6^(n·(L − t)), one unit per equally
    likely sequence of the throws that may still come (each throw counted with all ``n``
    dice, the dice set aside rolling along unseen). So equal chances compare equal, and the
    optimum and the best decision never depend on rounding.
    """

    def __init__(self, rules: Ruleset, target: Target | int, limit: int) -> None:
        self.rules = rules
        self.limit = limit
        self._count = rules.dice_count
        #: the target's place in the round (:func:`target_key`): all the solver needs of it
        self._target = target if isinstance(target, int) else target_key(rules, target)
        self._memo: dict[tuple[Dice, Dice, int], Counts] = {}
        self._start: Chances | None = None

    def scale(self, throws: int) -> int:
        """The units of one certainty after throw number ``throws``."""
        return int(6 ** (self._count * (self.limit - throws)))

    def final(self, dice: Dice, throws: int, hand: bool) -> Counts:
        """The counts of a final result: (all, 0) beats the target, (0, all) ties, (0, 0) loses."""
        mine = sort_key(self.rules.ties, evaluate(dice, hand, self.rules).key, throws, 1)
        if mine > self._target:
            return self.scale(throws), 0
        return (0, self.scale(throws)) if mine == self._target else (0, 0)

    def moves(self, dice: Dice, throws: int) -> Iterator[tuple[bool, Dice, int]]:
        """(stop, aside, sixes) of every legal decision after ``dice``, thrown as throw
        number ``throws`` (pips ascending)."""
        yield True, (), 0
        if throws < self.limit:
            for aside, sixes in _choices(self.rules, dice):
                yield False, aside, sixes

    def counts(self, aside: Dice, dice: Dice, throws: int, move: tuple[bool, Dice, int]) -> Counts:
        """The counts of one decision, played on optimally afterwards."""
        stop, keep, sixes = move
        if stop:
            return self.final(tuple(sorted(aside + dice)), throws, not aside)
        out = tuple(sorted(aside + (1,) * sixes + keep))
        cup = self._count - len(out)
        unseen = 6 ** (self._count - cup)  # the dice set aside "roll along"
        beat = tie = 0
        for thrown, ways in _throws_of(cup):
            b, t = self.value(out, thrown, throws + 1)
            beat += ways * b
            tie += ways * t
        return beat * unseen, tie * unseen

    def chances(
        self, aside: Dice, dice: Dice, throws: int, move: tuple[bool, Dice, int]
    ) -> Chances:
        """(p_beat, p_tie) of one decision, played on optimally afterwards."""
        beat, tie = self.counts(aside, dice, throws, move)
        whole = self.scale(throws)
        return beat / whole, tie / whole

    def value(self, aside: Dice, dice: Dice, throws: int) -> Counts:
        """The counts of the best decision after ``dice`` (ascending), thrown as throw number
        ``throws`` with ``aside`` (ascending) set aside before."""
        state = (aside, dice, throws)
        known = self._memo.get(state)
        if known is None:
            known = self._memo[state] = max(
                self.counts(aside, dice, throws, move) for move in self.moves(dice, throws)
            )
        return known

    def best(self, aside: Dice, dice: Dice, throws: int) -> tuple[bool, Dice, int]:
        """The decision that goes on optimally (the highest p_beat, then p_tie; the first of
        equal ones)."""
        return max(
            self.moves(dice, throws), key=lambda move: self.counts(aside, dice, throws, move)
        )

    def start(self) -> Chances:
        """(p_beat, p_tie) at the start of the turn, before its first throw."""
        if self._start is None:
            beat = tie = 0
            for thrown, ways in _throws_of(self._count):
                b, t = self.value((), thrown, 1)
                beat += ways * b
                tie += ways * t
            whole = self.scale(0)
            self._start = (beat / whole, tie / whole)
        return self._start


def target_key(rules: Ruleset, target: Target) -> int:
    """The target's place in its round (:func:`~api.rules.game.sort_key`, as the earlier
    turn): two targets with the same place have the same odds."""
    return sort_key(rules.ties, evaluate(target.dice, target.hand, rules).key, target.throws, 0)


def solver(rules: Ruleset, target: Target, limit: int) -> Solver:
    """The solver of one ruleset, target and limit, kept per place of the target in the
    round (:func:`target_key`: at most a few hundred per ruleset and limit)."""
    return solver_for(rules, target_key(rules, target), limit)


@lru_cache(maxsize=1024)
def solver_for(rules: Ruleset, key: int, limit: int) -> Solver:
    """The solver of a target's place in the round (:func:`target_key`), the last 1,024 kept
    (a ruleset has a few hundred places per limit)."""
    return Solver(rules, key, limit)


def odds(rules: Ruleset, aside: Dice, dice: Dice, throws: int, limit: int, target: Target) -> Odds:
    """Every legal decision after the throw ``dice`` with its chances against ``target``.

    ``aside``: the pips set aside in earlier throws of the turn (a turned six counts as its 1);
    ``throws``: the throws made so far, this one included; ``limit``: the turn's throw limit.
    Raises :class:`MalformedInput` on input that cannot be a position of a turn under
    ``rules``, with a German message; nothing is computed then.
    """
    aside, dice, target = _checked(rules, aside, dice, throws, limit, target)
    solve = solver(rules, target, limit)
    moves = list(solve.moves(dice, throws))
    counts = [solve.counts(aside, dice, throws, move) for move in moves]
    whole = solve.scale(throws)
    decisions = tuple(
        Decision(stop, keep, sixes, beat / whole, tie / whole)
        for (stop, keep, sixes), (beat, tie) in zip(moves, counts, strict=True)
    )
    beats = [beat for beat, _ in counts]
    best = beats.index(max(beats))
    return Odds(decisions, best)


def _checked(
    rules: Ruleset, aside: Dice, dice: Dice, throws: int, limit: int, target: Target
) -> tuple[Dice, Dice, Target]:
    count = rules.dice_count
    cap = rules.max_throws
    if not 1 <= limit <= cap:
        raise MalformedInput(
            f"„limit“ muss zwischen 1 und {cap} liegen: nach diesen Hausregeln sind höchstens "
            f"{throws_word(cap)} erlaubt, nicht {limit}.",
            field="limit",
            code="throws_over_house_limit",
        )
    if not 1 <= throws <= limit:
        raise MalformedInput(
            f"„throws“ muss zwischen 1 und dem Wurflimit {limit} liegen, nicht {throws}.",
            field="throws",
            code="throw_limit_exceeded",
        )
    for name, pips in (("aside", aside), ("dice", dice), ("target.dice", target.dice)):
        if not all(type(p) is int and 1 <= p <= 6 for p in pips):
            raise MalformedInput(
                f"„{name}“: Würfel zeigen 1 bis 6 Augen, nicht {list(pips)}.",
                field=name,
                code="invalid_dice",
            )
    if len(aside) >= count:
        raise MalformedInput(
            f"„aside“: von {count} Würfeln können höchstens {count - 1} herausliegen, wenn "
            f"noch geworfen wurde, nicht {len(aside)}.",
            field="aside",
            code="dice_count_wrong",
        )
    if len(dice) != count - len(aside):
        raise MalformedInput(
            f"„dice“: mit {len(aside)} herausgelegten Würfeln sind {count - len(aside)} im "
            f"Becher, geworfen wurden aber {len(dice)} ({format_dice(dice) or 'keiner'}).",
            field="dice",
            code="dice_count_wrong",
        )
    if aside and throws < 2:
        raise MalformedInput(
            "„aside“: im ersten Wurf eines Zuges liegt noch nichts heraus.",
            field="aside",
            code="detail_inconsistent",
        )
    if rules.ones_only_aside and any(p != 1 for p in aside):
        raise MalformedInput(
            "„aside“: nach diesen Hausregeln dürfen nur Einsen herausgelegt werden.",
            field="aside",
            code="house_rule_forbids",
        )
    return tuple(sorted(aside)), tuple(sorted(dice)), _checked_target(rules, limit, target)


def _checked_target(rules: Ruleset, limit: int, target: Target) -> Target:
    count = rules.dice_count
    if len(target.dice) != count:
        raise MalformedInput(
            f"„target.dice“: ein Ergebnis hat {count} Würfel, nicht {len(target.dice)}.",
            field="target.dice",
            code="dice_count_wrong",
        )
    if not 1 <= target.throws <= limit:
        raise MalformedInput(
            f"„target.throws“: der Wurf zum Schlagen fiel in derselben Runde, also in 1 bis "
            f"{limit} Würfen, nicht in {target.throws}.",
            field="target.throws",
            code="throw_limit_exceeded",
        )
    return Target(tuple(sorted(target.dice)), target.throws, bool(target.hand))


def play_advised(
    game: Game, player: str, roll: Callable[[int], Dice], solve: Solver
) -> list[DomainEvent]:
    """``player`` plays one turn through the engine's throw-by-throw input, always taking
    :meth:`Solver.best`; ``roll(n)`` throws ``n`` dice. The events of the turn (the round's
    outcome among them when the turn ends it): how the engine itself judges the advice."""
    aside: Dice = ()
    open_turn: OpenTurn | None = None
    events: list[DomainEvent] = []
    throws = 0
    while True:
        throws += 1
        dice = tuple(sorted(roll(solve.rules.dice_count - len(aside))))
        stop, keep, sixes = solve.best(aside, dice, throws)
        throw = (
            RecordThrow(player, dice, stop=True) if stop else RecordThrow(player, dice, keep, sixes)
        )
        open_turn, more = record_throw(game, open_turn, throw)
        events.extend(more)
        if open_turn is None:
            return events
        aside = tuple(sorted(aside + keep + (1,) * sixes))
