"""Random games: the data source for the dashboard demo and the benchmarks.

The simulated players follow one simple, documented strategy (a cautious pub regular):

1. Throw every die in the cup.
2. Stop when the throws are used up, when the result is anything better than a Zahl
   (Straße, General, Schock, a special result), or — if somebody already threw in this
   round — when the result beats the round's current worst result.
3. Otherwise set every one aside (the building block of a Schock); where the house rules allow
   turning sixes and the throw shows two sixes, turn one of them into a one as well. Then
   throw the rest again. (That never sets aside every die: two ones are a Schock, three
   sixes a General, and the player stops on either.)

Every game is played through the engine, so it is valid by construction.

    >>> import random
    >>> from api.rules import PRESETS
    >>> game = simulate_game(PRESETS["standard"], ["Anna", "Bert", "Clara"], "Anna", random.Random(1))
    >>> game.finished, game.loser in ("Anna", "Bert", "Clara")
    (True, True)
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from .game import Game
from .log import to_log
from .results import Category, Evaluation, evaluation_table
from .ruleset import Ruleset
from .turns import RecordTurn, Throw

# every ordered outcome of throwing n dice, equally likely: one random number per throw
_ROLLS = {n: list(itertools.product(range(1, 7), repeat=n)) for n in (1, 2, 3)}
MAX_COMMANDS = 20_000  # a game that runs longer than this is a bug, not bad luck

NAMES = (
    "Anna", "Bert", "Clara", "Dieter", "Elke", "Frank", "Gabi", "Heinz",
    "Ingrid", "Jupp", "Karin", "Lothar", "Marita", "Norbert", "Olga", "Paul",
    "Resi", "Sepp", "Trude", "Willi",
)  # fmt: skip


def play_turn(
    player: str,
    limit: int,
    to_beat: int | None,
    rules: Ruleset,
    rand: Any,
    detail: bool = False,
    table: dict[tuple[int, ...], Evaluation] | None = None,
) -> RecordTurn:
    """One turn by the strategy above; ``to_beat`` is the round's current worst key."""
    if table is None:
        table = evaluation_table(rules)
    count = rules.dice_count
    turning = rules.sixes_turning
    kept: list[int] = []
    throws: list[Throw] = []
    k = 0  # the throw
    while True:
        k += 1
        cup = count - len(kept)
        rolls = _ROLLS[cup]
        dice = rolls[int(rand() * len(rolls))]
        hand = cup == count
        ev = table[(*kept, *dice, hand)]
        if (
            k == limit
            or ev.category is not Category.ZAHL
            or (to_beat is not None and ev.key > to_beat)
        ):
            if detail:
                throws.append(Throw(dice))
            return RecordTurn(
                player,
                (*kept, *dice),
                k,
                hand,
                False,
                tuple(throws) if detail else None,
            )
        sixes = 1 if turning and dice.count(6) >= 2 else 0
        aside = [1] * dice.count(1)
        if detail:
            throws.append(Throw(dice, tuple(aside), sixes))
        kept.extend([1] * sixes)
        kept.extend(aside)


def simulate_game(
    rules: Ruleset,
    players: Sequence[str],
    starter: str,
    rng: random.Random,
    *,
    detail: bool = False,
    played_at: str | None = None,
) -> Game:
    """Play one complete game with random dice; returns the finished game."""
    game = Game.start(rules, list(players), starter)
    game.played_at = played_at
    rand = rng.random
    table = evaluation_table(rules)
    max_throws = rules.max_throws
    for _ in range(MAX_COMMANDS):
        if game.finished:
            return game
        round_turns = game.round_turns
        to_beat = min(t.ev.key for t in round_turns) if round_turns else None
        turn = play_turn(
            game.order[len(round_turns)],
            game.limit or max_throws,
            to_beat,
            rules,
            rand,
            detail,
            table,
        )
        game.apply(turn)
    raise AssertionError(f"game did not end after {MAX_COMMANDS} turns")  # pragma: no cover


def simulate_logs(
    rules: Ruleset,
    games: int,
    *,
    players: Sequence[str] | int = 4,
    seed: int | None = None,
    start: datetime | None = None,
    every: timedelta = timedelta(days=7),
    detail: bool = False,
) -> Iterator[dict[str, Any]]:
    """``games`` random game logs; the opener is chosen at random, dates advance by ``every``."""
    rng = random.Random(seed)
    names = list(NAMES[:players]) if isinstance(players, int) else list(players)
    for i in range(games):
        played_at = (start + i * every).isoformat() if start is not None else None
        starter = names[int(rng.random() * len(names))]
        game = simulate_game(rules, names, starter, rng, detail=detail, played_at=played_at)
        yield to_log(game)
