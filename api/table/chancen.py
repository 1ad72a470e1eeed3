""" "Chancen" at the table (issue 27): the best decisions after a throw with their chance of
beating the round's worst result so far, in German, from the engine's exact odds
(:func:`api.rules.odds`, api/rules/RULES.md §12).

Pure functions of the engine's game and open turn, so the server's game page and the phone's
offline engine (``browser.py``) say the same. Whether they are shown at all is the
Stammtisch's setting ``odds_shown`` (off unless turned on: some tables call it cheating).

The target is the round's worst result so far: the turn with the lowest place in the round
(:func:`api.rules.game.sort_key`; the earliest of equal ones), the player who would lose the
round now. The round's first turn has nothing to beat.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..rules import (
    Decision,
    Game,
    OpenTurn,
    SchockenError,
    Target,
    odds,
    solver,
    worst_so_far,
)

__all__ = [
    "Advice",
    "advice",
    "chance_line",
    "current_chance",
    "decision_words",
    "percent",
    "round_target",
]

#: the best decisions shown, best first
SHOWN = 3
NOTHING_TO_BEAT = "Erster Zug der Runde: noch nichts zu schlagen."
PLURAL = {1: "Einsen", 2: "Zweien", 3: "Dreien", 4: "Vieren", 5: "Fünfen", 6: "Sechsen"}
SINGULAR = {1: "Eins", 2: "Zwei", 3: "Drei", 4: "Vier", 5: "Fünf", 6: "Sechs"}
NUMBER = {2: "zwei", 3: "drei"}


@dataclass(frozen=True, slots=True)
class Advice:
    """What the turn card says after the dice of a throw: ``lines`` the best decisions (best
    first, at most :data:`SHOWN`), or ``note`` alone (nothing to beat, dice missing)."""

    lines: tuple[str, ...] = ()
    note: str | None = None
    target_player: str | None = None


def round_target(game: Game) -> tuple[str, Target] | None:
    """(player, result) of the round's worst result so far (:func:`api.rules.worst_so_far`, as
    the luck figures take it); None before its first turn."""
    worst = worst_so_far(game.rules, game.current_round())
    return None if worst is None else (worst.player, Target.of(worst))


def percent(p: float) -> str:
    """A probability as the table reads it: "31 %", "unter 1 %", "über 99 %"."""
    if 0 < p < 0.005:
        return "unter 1 %"
    if 0.995 <= p < 1:
        return "über 99 %"
    return f"{round(p * 100)} %"


def _set_aside(aside: tuple[int, ...], dice: tuple[int, ...]) -> str:
    """ "beide Einsen", "die Fünf", "zwei Sechsen und die Eins"."""
    thrown = Counter(dice)
    parts = []
    for pip, n in sorted(Counter(aside).items()):
        if n == 1:
            parts.append(f"die {SINGULAR[pip]}" if thrown[pip] == 1 else f"eine {SINGULAR[pip]}")
        elif n == 2 and thrown[pip] == 2:
            parts.append(f"beide {PLURAL[pip]}")
        else:
            parts.append(f"{NUMBER.get(n, str(n))} {PLURAL[pip]}")
    return " und ".join(parts)


def decision_words(decision: Decision, dice: tuple[int, ...]) -> str:
    """One decision after the throw ``dice`` in German: "Stehen lassen", "Beide Einsen
    rauslegen, noch einmal", "Alle drei noch einmal", "Zwei Sechsen umdrehen, noch einmal"."""
    if decision.stop:
        return "Stehen lassen"
    words = []
    if decision.sixes:
        words.append(
            "zwei Sechsen zu einer Eins umdrehen"
            if decision.sixes == 1
            else "drei Sechsen zu zwei Einsen umdrehen"
        )
    if decision.aside:
        words.append(f"{_set_aside(decision.aside, dice)} rauslegen")
    if not words:
        again = {1: "den Würfel", 2: "beide", 3: "alle drei"}[len(dice)]
        words.append(f"{again} noch einmal")
    else:
        words.append("noch einmal")
    text = ", ".join(words)
    return text[0].upper() + text[1:]


def _position(game: Game, open_turn: OpenTurn | None) -> tuple[tuple[int, ...], int]:
    """(the pips out of the cup, the throws made) of the next player's turn."""
    kept: list[int] = []
    throws = open_turn.throws if open_turn is not None else ()
    for throw in throws:
        kept.extend((1,) * throw.sixes + throw.aside)
    return tuple(sorted(kept)), len(throws)


def advice(game: Game, open_turn: OpenTurn | None, dice: tuple[int, ...]) -> Advice:
    """The best decisions after the next player throws ``dice`` (the dice in the cup) in
    their turn (continuing ``open_turn``, if any); the best one says whom it beats::

        >>> from api.rules import PRESETS, Game, parse_event
        >>> game = Game.start(PRESETS["standard"], ["Anna", "Bert"], "Anna")
        >>> _ = game.apply(parse_event({"player": "Anna", "dice": [1, 1, 5], "throws": 2},
        ...                            game.rules))
        >>> for line in advice(game, None, (1, 4, 1)).lines: print(line)
        Beide Einsen rauslegen, noch einmal: 33 % – schlechter als Anna wird man nicht
        Eine Eins rauslegen, noch einmal: 8 %
        Alle drei noch einmal: 2 %
    """
    found = round_target(game)
    if found is None or game.limit is None:
        return Advice(note=NOTHING_TO_BEAT)
    player, target = found
    aside, made = _position(game, open_turn)
    if open_turn is not None and open_turn.blind:
        return Advice(note="Blind geworfen: keine Entscheidung mehr.", target_player=player)
    try:
        answer = odds(game.rules, aside, dice, made + 1, game.limit, target)
    except SchockenError as err:
        return Advice(note=err.message, target_player=player)
    ranked = sorted(answer.decisions, key=lambda d: -d.p_beat)[:SHOWN]
    sorted_dice = tuple(sorted(dice))
    lines = tuple(f"{decision_words(d, sorted_dice)}: {percent(d.p_beat)}" for d in ranked)
    lines = (f"{lines[0]} – schlechter als {player} wird man nicht", *lines[1:])
    return Advice(lines=lines, target_player=player)


def current_chance(game: Game, open_turn: OpenTurn | None) -> tuple[str, float] | None:
    """(player, p_beat) of the open turn's position, going on optimally: after its last throw
    the decision taken (a turn is open only when it throws again). None without an open turn
    or a target (the round's first turn)."""
    found = round_target(game)
    if open_turn is None or found is None or game.limit is None or not open_turn.throws:
        return None
    if open_turn.blind:
        return None
    solve = solver(game.rules, found[1], game.limit)
    before = OpenTurn(open_turn.player, open_turn.throws[:-1])
    aside, made = _position(game, before)
    last = open_turn.throws[-1]
    move = (False, tuple(sorted(last.aside)), last.sixes)
    beat, _ = solve.chances(aside, tuple(sorted(last.dice)), made + 1, move)
    return open_turn.player, beat


def genitive(name: str) -> str:
    """ "Annas", "Klaus'" (a name ending in an s sound takes an apostrophe)."""
    return f"{name}'" if name[-1:].lower() in ("s", "x", "z", "ß") else f"{name}s"


def chance_line(game: Game, open_turn: OpenTurn | None) -> str | None:
    """The TV's line of an open throw-by-throw turn: "Annas Chance: 31 %" (None: no open
    turn, or nothing to beat)."""
    found = current_chance(game, open_turn)
    if found is None:
        return None
    player, chance = found
    return f"{genitive(player)} Chance: {percent(chance)}"
