"""Whose turn, how many throws, and whether the client must send ``stop``: the turn state.

Everything a client needs to drive the next entry, computed from the game and its open
throw-by-throw turn (:mod:`api.rules.throws`), never stored::

    >>> from api.rules import PRESETS, Game, RecordThrow, record_throw
    >>> game = Game.start(PRESETS["standard"], ["Anna", "Bert"], "Anna")
    >>> t = turn_state(game, None)
    >>> t.opener, t.player, t.limit, t.limit_fixed, t.open, t.must_stop
    ('Anna', 'Anna', 3, False, None, False)
    >>> turn, _ = record_throw(game, None, RecordThrow("Anna", (1, 1, 4), stop=True))
    >>> t = turn_state(game, turn)
    >>> t.player, t.limit, t.limit_fixed, t.last_in_round
    ('Bert', 1, True, True)

**The stop rule.** A throw-by-throw turn stays open until the player reaches the throw limit
(:attr:`TurnState.limit`) with a throw that sets nothing aside and turns no sixes, throws
blind, sends ``stop``, or another player's throw or whole turn arrives (that closes the open
turn first). The last way is impossible when, with the open turn ended as it stands, the game
is over or the same player throws next (they lost the round and open the next one, or open
the next half or the Finale): then :attr:`TurnState.must_stop` is true and only ``stop`` ends
the turn. The engine finds out by ending the turn on a copy of the game.

A whole turn by the open turn's own player and any penalty are refused while a turn is open
(:func:`~api.rules.throws.record_command`): ``stop`` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import SchockenError
from .game import Game
from .records import Half
from .throws import OpenTurn


@dataclass(frozen=True, slots=True)
class OpenTurnState:
    """A throw-by-throw turn in progress, seen from the next throw."""

    throws_used: int
    throws_left: int  # further throws the limit allows
    kept: tuple[int, ...]  # dice out of the cup: set aside, or sixes turned into ones
    dice_in_cup: int  # dice the next throw throws
    blind: bool
    can_stop: bool  # the turn may end with the throws so far (not after turning sixes)
    # who throws next once the turn ends as it stands; None if it cannot end yet or the game
    # would be over
    next_player: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "throws_used": self.throws_used,
            "throws_left": self.throws_left,
            "kept": list(self.kept),
            "dice_in_cup": self.dice_in_cup,
            "blind": self.blind,
            "can_stop": self.can_stop,
            "next_player": self.next_player,
        }


@dataclass(frozen=True, slots=True)
class TurnState:
    """The turn to be played next (None once the game is over, see :func:`turn_state`)."""

    half: Half
    round: int  # index the round will have in Game.rounds (as TurnFact.round)
    round_of_half: int  # 1 = the half's first round; a repeated round counts again
    opener: str  # who opened (or opens) the round: their throws cap everybody else's
    player: str  # whose turn it is
    position: int  # 0 = the opener
    last_in_round: bool  # this turn completes the round (unless a Schock aus ends it early)
    limit: int  # throws this turn may use: the round's limit, or the opener's cap
    limit_fixed: bool  # False while the opener throws: then limit is the cap (max_throws)
    opener_cap: int  # the ruleset's max_throws
    open: OpenTurnState | None
    must_stop: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "half": self.half.label,
            "round": self.round,
            "round_of_half": self.round_of_half,
            "opener": self.opener,
            "player": self.player,
            "position": self.position,
            "last_in_round": self.last_in_round,
            "limit": self.limit,
            "limit_fixed": self.limit_fixed,
            "opener_cap": self.opener_cap,
            "open": None if self.open is None else self.open.to_json(),
            "must_stop": self.must_stop,
        }


def turn_state(game: Game, open_turn: OpenTurn | None) -> TurnState | None:
    """The turn state of ``game`` with its open turn (if any); None once the game is over."""
    half = game.phase.half
    player = game.next_player
    if half is None or player is None:
        return None
    cap = game.rules.max_throws
    limit = game.limit
    position = len(game.round_turns)
    opened = None
    must_stop = False
    if open_turn is not None:
        can_stop, must_stop, then = _ending_now(game, open_turn)
        opened = _open_state(game, open_turn, limit or cap, can_stop, then)
    return TurnState(
        half=half,
        round=len(game.rounds),
        round_of_half=1 + sum(1 for r in game.rounds if r.half is half),
        opener=game.order[0],
        player=player,
        position=position,
        last_in_round=position + 1 == len(game.order),
        limit=cap if limit is None else limit,
        limit_fixed=limit is not None,
        opener_cap=cap,
        open=opened,
        must_stop=must_stop,
    )


def _open_state(
    game: Game, open_turn: OpenTurn, limit: int, can_stop: bool, then: str | None
) -> OpenTurnState:
    kept: list[int] = []
    for throw in open_turn.throws:
        kept.extend([1] * throw.sixes)
        kept.extend(throw.aside)
    used = len(open_turn.throws)
    return OpenTurnState(
        throws_used=used,
        throws_left=0 if open_turn.blind else max(limit - used, 0),
        kept=tuple(sorted(kept)),
        dice_in_cup=max(game.rules.dice_count - len(kept), 0),
        blind=open_turn.blind,
        can_stop=can_stop,
        next_player=then,
    )


def _ending_now(game: Game, open_turn: OpenTurn) -> tuple[bool, bool, str | None]:
    """(may the open turn end as it stands, must that be said with ``stop``, who throws next
    then): it is ended on a copy of the game; ``stop`` is needed when no other player's entry
    could follow."""
    probe = game.copy()
    try:
        probe.apply(open_turn.command(probe))
    except SchockenError:
        return False, False, None
    then = probe.next_player
    return True, then is None or then == open_turn.player, then
