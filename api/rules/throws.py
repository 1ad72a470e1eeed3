"""Throw by throw: a turn recorded one throw at a time (api/rules/RULES.md §3).

A throw-by-throw client sends every single throw of a turn as it happens. The throws collect in
an :class:`OpenTurn` until the player stops, reaches the round's throw limit, throws blind, or
the next player's throw (or whole turn) arrives; then the open turn goes to the game as a turn
in detail (schemas/GAMELOG.md ``detail``). Each throw is checked when it arrives: as if the turn ended
with it (whose turn, the round's limit, the dice in the cup) and, when the player sets dice
aside or turns sixes, that a further throw is allowed and that setting aside is legal.

While a turn is open, nothing else may happen to its player: they cannot enter a whole turn,
and nobody can be given a penalty (the open turn would have to end first)::

    >>> from api.rules import PRESETS, Game, RecordThrow
    >>> game = Game.start(PRESETS["standard"], ["Anna", "Bert"], "Anna")
    >>> turn, events = record_throw(game, None, RecordThrow("Anna", (1, 4, 6), aside=(1,)))
    >>> [e.message for e in events], turn.player
    (['Anna: Wurf 1 – 1-4-6, legt 1 heraus.'], 'Anna')
    >>> turn, events = record_throw(game, turn, RecordThrow("Anna", (1, 5), stop=True))
    >>> [e.kind.value for e in events], turn
    (['throw_recorded', 'turn_recorded'], None)
    >>> game.limit
    2

Every function here checks before it changes anything: a refused throw leaves the game and the
open turn exactly as they were.

**The turn state** (:func:`turn_state`): whose turn, how many throws, and whether the client
must send ``stop`` — everything a client needs to drive the next entry, computed from the game
and its open turn, never stored::

    >>> t = turn_state(game, None)
    >>> t.opener, t.player, t.limit, t.limit_fixed, t.open, t.must_stop
    ('Anna', 'Bert', 2, True, None, False)

**The stop rule.** A throw-by-throw turn stays open until the player reaches the throw limit
(:attr:`~api.rules.records.TurnState.limit`) with a throw that sets nothing aside and turns no
sixes, throws blind, sends ``stop``, or another player's throw or whole turn arrives (that
closes the open turn first). The last way is impossible when, with the open turn ended as it
stands, the game is over or the same player throws next (they lost the round and open the
next one, or open the next half or the Finale): then ``must_stop`` is true and only ``stop``
ends the turn. The engine finds out by ending the turn on a copy of the game.

A game's log is fed into the engine entry by entry by :func:`feed_entry`: the one feeding loop
of the server's game runtime (api/domain/runtime.py) and of the phone's offline engine
(api/table/play.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .dice import format_dice
from .errors import MalformedInput, RuleViolation, SchockenError
from .events import DomainEvent, ThrowRecorded
from .game import Game
from .records import OpenTurnState, TurnState
from .ruleset import Ruleset
from .turns import (
    Command,
    RecordPenalty,
    RecordTurn,
    Throw,
    check_keys,
    parse_event,
    parse_player,
    turn_in_detail,
)

_THROW_KEYS = frozenset({"player", "dice", "aside", "sixes", "blind", "stop"})


class RecordThrow(NamedTuple):
    """One throw of a throw-by-throw turn; ``dice`` None means only "stop" (the player ends
    the open turn with their last throw)."""

    player: str
    dice: tuple[int, ...] | None
    aside: tuple[int, ...] = ()
    sixes: int = 0
    blind: bool = False
    stop: bool = False


@dataclass(frozen=True, slots=True)
class OpenTurn:
    """The throws of a turn that has not ended yet."""

    player: str
    throws: tuple[Throw, ...]
    blind: bool = False

    def command(self, game: Game) -> RecordTurn:
        """The turn in detail that ends it (raises if the throws cannot end a turn)."""
        return turn_in_detail(self.player, self.throws, self.blind, game.rules)

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "throws": [t.to_json() for t in self.throws],
            "blind": self.blind,
        }


def parse_throw(obj: Any) -> RecordThrow:
    """A single throw as a client sends it: ``{"player", "dice", "aside", "sixes", "blind",
    "stop"}``; without ``dice`` only ``stop``. Whether it fits the turn is checked on use."""
    if not isinstance(obj, Mapping):
        raise MalformedInput("Ein Wurf muss ein Objekt sein.")
    check_keys(obj, _THROW_KEYS, "in einem Wurf")
    if "player" not in obj:
        raise MalformedInput("Im Wurf fehlt „player“.", field="player", code="missing_field")
    player = parse_player(obj["player"])
    flags = {key: _flag(obj, key) for key in ("blind", "stop")}
    if obj.get("dice") is None:
        if not flags["stop"] or set(obj) - {"player", "stop", "dice"}:
            raise MalformedInput(
                "Würfel fehlen: ohne Würfel ist nur „stop“ erlaubt.",
                field="dice",
                code="missing_field",
            )
        return RecordThrow(player, None, stop=True)
    dice = _pips(obj["dice"], "dice", 1)
    aside = _pips(obj.get("aside") or [], "aside", 0)
    sixes = obj.get("sixes")
    if sixes is None:
        sixes = 0
    if type(sixes) is not int or sixes not in (0, 1, 2):
        raise MalformedInput(f"„sixes“ muss 0, 1 oder 2 sein, nicht {sixes!r}.", field="sixes")
    if flags["stop"] and (aside or sixes):
        raise MalformedInput("Wer aufhört, legt nichts heraus und dreht nichts um.", field="stop")
    return RecordThrow(player, dice, aside, sixes, flags["blind"], flags["stop"])


def _flag(obj: Mapping[str, Any], key: str) -> bool:
    value = obj.get(key)
    if value is not None and not isinstance(value, bool):
        raise MalformedInput(f"„{key}“ muss true oder false sein, nicht {value!r}.", field=key)
    return bool(value)


def _pips(value: Any, field: str, least: int) -> tuple[int, ...]:
    if (
        not isinstance(value, list | tuple)
        or not least <= len(value) <= 3
        or not all(type(p) is int and 0 < p < 7 for p in value)
    ):
        raise MalformedInput(
            f"„{field}“ muss eine Liste von {least} bis 3 Augenzahlen 1 bis 6 sein, "
            f"nicht {value!r}.",
            field=field,
            code="invalid_dice",
        )
    return tuple(value)


# ---------------------------------------------------------------------------- recording


def record_throw(
    game: Game, open_turn: OpenTurn | None, throw: RecordThrow
) -> tuple[OpenTurn | None, list[DomainEvent]]:
    """Record one throw: the open turn afterwards (None once the turn ended) and the events,
    ``throw_recorded`` first, then those of the turn when it ended with this throw.

    A throw by another player than the open turn's ends the open turn first (the next player
    has started). Raises :class:`RuleViolation` or :class:`MalformedInput`; then nothing changed.
    """
    if open_turn is not None and open_turn.player != throw.player:
        probe = game.copy()
        _close(probe, open_turn)
        _record_own(probe, None, throw)  # raises if refused: nothing changed
        events = _close(game, open_turn)
        after, more = _record_own(game, None, throw)
        return after, events + more
    return _record_own(game, open_turn, throw)


def record_command(
    game: Game, open_turn: OpenTurn | None, command: Command
) -> tuple[OpenTurn | None, list[DomainEvent]]:
    """Record a whole turn or a penalty while a turn may be open: the open turn afterwards and
    the events. A whole turn by the next player ends the open turn first; its own player has to
    stop (or undo) it first, and no penalty may be given while a turn is open."""
    if open_turn is None:
        return None, game.apply(command)
    _refuse_while_open(open_turn, isinstance(command, RecordPenalty), command.player)
    probe = game.copy()
    _close(probe, open_turn)
    probe.apply(command)  # raises if refused: nothing changed
    events = _close(game, open_turn)
    return None, events + game.apply(command)


def record_event(
    game: Game, open_turn: OpenTurn | None, event: Any
) -> tuple[OpenTurn | None, list[DomainEvent]]:
    """:func:`record_command` for a game-log event (schemas/GAMELOG.md: a turn summary, a turn in
    detail or a penalty). While a turn is open, its refusals come before the event is read."""
    if open_turn is None:
        return None, game.apply(parse_event(event, game.rules))
    if isinstance(event, Mapping):
        _refuse_while_open(open_turn, "penalty" in event, event.get("player"))
    probe = game.copy()
    _close(probe, open_turn)
    command = parse_event(event, game.rules)
    probe.apply(command)  # raises if refused: nothing changed
    events = _close(game, open_turn)
    return None, events + game.apply(command)


def feed_entry(
    game: Game, open_turn: OpenTurn | None, kind: str, body: Any
) -> tuple[OpenTurn | None, list[DomainEvent]]:
    """Apply one log entry (its kind ``turn``, ``throw`` or ``penalty`` and its body, in the
    game log's shapes) to ``game``; on a refusal (an engine error) nothing changed."""
    if kind == "throw":
        return record_throw(game, open_turn, parse_throw(body))
    if kind in ("turn", "penalty"):
        return record_event(game, open_turn, body)
    raise ValueError(f"cannot feed a {kind!r} entry")


def _refuse_while_open(open_turn: OpenTurn, penalty: bool, player: object) -> None:
    if penalty:
        raise RuleViolation(
            f"Der Zug von {open_turn.player} ist noch offen: erst beenden (stop), "
            "dann die Strafe eintragen.",
            code="turn_open",
        )
    if player == open_turn.player:
        raise RuleViolation(
            f"{player} hat noch einen offenen Zug (Wurf für Wurf): erst mit stop "
            "beenden oder rückgängig machen, dann den ganzen Zug eintragen.",
            field="player",
            code="turn_open",
        )


def _close(game: Game, open_turn: OpenTurn) -> list[DomainEvent]:
    """End the open turn. It cannot end yet (turned sixes need another throw): that is the
    open turn's state, so 409 ``turn_open``, whatever its message says."""
    try:
        command = open_turn.command(game)
    except MalformedInput as err:
        raise RuleViolation(err.message, field="player", code="turn_open") from err
    return game.apply(command)


def _record_own(
    game: Game, open_turn: OpenTurn | None, cmd: RecordThrow
) -> tuple[OpenTurn | None, list[DomainEvent]]:
    """A throw of the open turn's player (or of a player without an open turn)."""
    player = cmd.player
    if cmd.dice is None:
        if open_turn is None:
            raise RuleViolation(
                f"{player} hat keinen offenen Zug, der beendet werden könnte.",
                field="stop",
                code="no_open_turn",
            )
        return None, _close(game, open_turn)
    if cmd.blind and open_turn is not None:
        raise RuleViolation(
            "Blind kann nur vor dem ersten Wurf angesagt werden.", field="blind", code="turn_open"
        )
    throw = Throw(cmd.dice, cmd.aside, cmd.sixes)
    before = open_turn.throws if open_turn is not None else ()
    throws = (*before, throw)
    blind = cmd.blind or (open_turn is not None and open_turn.blind)
    number = len(throws)
    # 1. as if the turn ended with this throw: whose turn, the round's limit, dice in the cup
    game.copy().apply(_as_if_ended(player, before, throw, blind, game.rules))
    # 2. setting aside or turning sixes needs a further throw, and must itself be legal
    limit = game.limit or game.rules.max_throws
    acting = bool(throw.aside or throw.sixes)
    if acting:
        _check_acting(game, player, throws, blind, limit)
    event = DomainEvent(
        _describe(player, number, throw),
        ThrowRecorded(player, number, throw.dice, throw.aside, throw.sixes),
    )
    turn = OpenTurn(player, throws, blind)
    if not acting and (cmd.stop or blind or number >= limit):
        return None, [event, *_close(game, turn)]
    return turn, [event]


#: a detail's self-contradictions that, thrown one by one, depend on the open turn: 409
_STATEFUL = {"dice_count_wrong": "cup_mismatch", "throws_over_house_limit": "throw_limit_exceeded"}


def _as_if_ended(
    player: str, before: tuple[Throw, ...], throw: Throw, blind: bool, rules: Ruleset
) -> RecordTurn:
    """The turn as if it ended with ``throw``. A dice count that does not fit the cup, which
    in a whole turn's detail is the request contradicting itself (422), is here a throw that
    does not fit the open turn's state: 409 ``cup_mismatch``."""
    try:
        return turn_in_detail(player, (*before, Throw(throw.dice)), blind, rules)
    except MalformedInput as err:
        if err.code not in _STATEFUL:
            raise
        raise RuleViolation(err.message, field="dice", code=_STATEFUL[err.code]) from err


def _check_acting(
    game: Game, player: str, throws: tuple[Throw, ...], blind: bool, limit: int
) -> None:
    """The last of ``throws`` sets dice aside or turns sixes: a further throw must follow."""
    number = len(throws)
    if number >= limit or blind:
        raise RuleViolation(
            f"Nach dem letzten erlaubten Wurf (Wurf {number}) darf nichts mehr "
            "herausgelegt oder umgedreht werden.",
            field="aside",
            code="throw_limit_exceeded",
        )
    kept = sum(len(t.aside) + t.sixes for t in throws)
    in_cup = game.rules.dice_count - kept  # 0 once every die is out: the probe throws none
    turn_in_detail(player, (*throws, Throw((2,) * in_cup)), False, game.rules)


def _describe(player: str, number: int, throw: Throw) -> str:
    what = f"{player}: Wurf {number} – {format_dice(throw.dice)}"
    if throw.aside:
        what += f", legt {format_dice(throw.aside)} heraus"
    if throw.sixes:
        what += ", dreht Sechsen um"
    return what + "."


# ---------------------------------------------------------------------------- the turn state


def turn_state(game: Game, open_turn: OpenTurn | None) -> TurnState | None:
    """The turn state of ``game`` with its open turn (if any); None once the game is over::

    >>> from api.rules import PRESETS, Game, RecordThrow
    >>> game = Game.start(PRESETS["standard"], ["Anna", "Bert"], "Anna")
    >>> t = turn_state(game, None)
    >>> t.opener, t.player, t.limit, t.limit_fixed, t.open, t.must_stop
    ('Anna', 'Anna', 3, False, None, False)
    >>> turn, _ = record_throw(game, None, RecordThrow("Anna", (1, 1, 4), stop=True))
    >>> t = turn_state(game, turn)
    >>> t.player, t.limit, t.limit_fixed, t.last_in_round
    ('Bert', 1, True, True)
    """
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
