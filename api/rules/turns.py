"""Commands: what is recorded at the table, parsed from game-log events (schemas/GAMELOG.md).

Two granularities produce the same :class:`RecordTurn`:

* a **turn summary** — final dice, number of throws, hand flag, optional blind;
* a **turn in detail** — every throw with the dice rolled, the dice set aside afterwards and
  the sixes turned. The detail is checked against api/rules/RULES.md §3 (dice per throw, set-aside
  dice never thrown again, only ones aside where the rules say so, sixes turned only with two or
  three sixes and only with a further throw, blind only with exactly one throw) and the final
  result, throw count and hand flag are derived from it.

A :class:`RecordPenalty` gives a player Strafdeckel (or the round, see ``penalty_mode``).

Shape errors raise :class:`MalformedInput`; a detail that breaks a rule of section 3 raises
:class:`RuleViolation`. Whether the turn fits the round (whose turn, the round's limit) is
checked by the game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .errors import MalformedInput
from .limits import PENALTY
from .ruleset import PenaltyMode, Ruleset
from .words import count

MAX_NAME = 40
MAX_REASON = 200


# Commands are immutable named tuples: as value-like as frozen dataclasses, and cheap to
# create on the engine's hot path (a game log replays tens of thousands of them per second).
class Throw(NamedTuple):
    """One throw of a detailed turn."""

    dice: tuple[int, ...]
    aside: tuple[int, ...] = ()
    sixes: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dice": list(self.dice)}
        if self.aside:
            out["aside"] = list(self.aside)
        if self.sixes:
            out["sixes"] = self.sixes
        return out


class RecordTurn(NamedTuple):
    """A player's finished turn."""

    player: str
    dice: tuple[int, ...]
    throws: int
    hand: bool
    blind: bool = False
    detail: tuple[Throw, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"player": self.player}
        if self.detail is not None:
            out["detail"] = [t.to_json() for t in self.detail]
        else:
            out["dice"] = list(self.dice)
            out["throws"] = self.throws
            out["hand"] = self.hand
        if self.blind:
            out["blind"] = True
        return out


class RecordPenalty(NamedTuple):
    """A penalty (Strafdeckel) for breaking a rule; ``deckel`` None means the ruleset's amount."""

    player: str
    reason: str
    deckel: int | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"player": self.player}
        if self.deckel is not None:
            body["deckel"] = self.deckel
        body["reason"] = self.reason
        return {"penalty": body}


Command = RecordTurn | RecordPenalty

_SUMMARY_KEYS = frozenset({"player", "dice", "throws", "hand", "blind"})
_DETAIL_KEYS = frozenset({"player", "detail", "blind"})
_THROW_KEYS = frozenset({"dice", "aside", "sixes"})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_player(value: Any, field: str = "player") -> str:
    if not isinstance(value, str) or not value.strip():
        raise MalformedInput("Der Spielername fehlt oder ist leer.", field=field)
    if len(value) > MAX_NAME:
        raise MalformedInput(
            f"Der Spielername „{value[:MAX_NAME]}…“ ist zu lang (höchstens {MAX_NAME} Zeichen).",
            field=field,
        )
    return value


def _pips(value: Any, field: str, count: int | None) -> tuple[int, ...]:
    ok = type(value) in (list, tuple)
    if ok:
        for p in value:
            if type(p) is not int or not 0 < p < 7:
                ok = False
                break
    if not ok:
        raise MalformedInput(
            f"„{field}“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht {value!r}.",
            field=field,
            code="invalid_dice",
        )
    if count is not None and len(value) != count:
        raise MalformedInput(
            f"„{field}“ muss genau {count} Würfel enthalten, nicht {len(value)}: {list(value)}.",
            field=field,
            code="dice_count_wrong",
        )
    return tuple(value)


def check_keys(
    obj: Mapping[Any, Any], allowed: frozenset[str], where: str, *, name_field: bool = True
) -> None:
    """Refuse keys of ``obj`` outside ``allowed``, naming them sorted (``where``: "in einem
    Zug"); ``name_field``: the first of them is the error's field."""
    if allowed.issuperset(obj):
        return
    unknown = sorted(map(str, set(obj) - allowed))
    raise MalformedInput(
        f"Unbekannte Felder {where}: {', '.join(unknown)}.",
        field=unknown[0] if name_field else None,
        code="unknown_field",
    )


def parse_event(obj: Any, rules: Ruleset) -> Command:
    """A game-log event (a turn summary, a turn in detail or a penalty) → a command."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise MalformedInput("Ein Eintrag muss ein Objekt sein.")
    if "penalty" in obj:
        return _parse_penalty(obj, rules)
    if "detail" in obj:
        return _parse_detail(obj, rules)
    return _parse_summary(obj, rules)


def _flag(obj: Mapping[str, Any], key: str) -> bool | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, bool):
        raise MalformedInput(f"„{key}“ muss true oder false sein, nicht {value!r}.", field=key)
    return value


def _check_blind(blind: bool, throws: int, rules: Ruleset) -> None:
    if not blind:
        return
    if not rules.blind:
        raise MalformedInput(
            "Blind spielen ist nach diesen Hausregeln nicht erlaubt.",
            field="blind",
            code="house_rule_forbids",
        )
    if throws != 1:
        raise MalformedInput(
            f"Wer blind spielt, hat genau einen Wurf, nicht {throws}.",
            field="blind",
            code="detail_inconsistent",
        )


def _parse_summary(obj: Mapping[str, Any], rules: Ruleset) -> RecordTurn:
    check_keys(obj, _SUMMARY_KEYS, "in einem Zug")
    for key in ("player", "dice", "throws"):
        if key not in obj:
            raise MalformedInput(f"Im Zug fehlt „{key}“.", field=key, code="missing_field")
    player = parse_player(obj["player"])
    dice = _pips(obj["dice"], "dice", rules.dice_count)
    throws = obj["throws"]
    if type(throws) is not int or throws < 1:
        raise MalformedInput(
            f"„throws“ muss eine ganze Zahl ab 1 sein, nicht {throws!r}.",
            field="throws",
            code="throws_invalid",
        )
    if throws > rules.max_throws:  # never right in this game, whatever its state: 422
        raise MalformedInput(
            f"Nach diesen Hausregeln sind höchstens {throws_word(rules.max_throws)} erlaubt, "
            f"nicht {throws}.",
            field="throws",
            code="throws_over_house_limit",
        )
    hand = obj.get("hand")
    if hand is not None and type(hand) is not bool:
        hand = _flag(obj, "hand")  # raises with the message
    if hand is None:
        hand = throws == 1
    elif throws == 1 and not hand:
        raise MalformedInput(
            "Ein Ergebnis aus einem einzigen Wurf ist immer aus der Hand (hand darf nicht "
            "false sein).",
            field="hand",
            code="detail_inconsistent",
        )
    blind = obj.get("blind", False)
    if blind is not False:
        blind = bool(_flag(obj, "blind"))  # raises for anything but true, false and null
        _check_blind(blind, throws, rules)
    return RecordTurn(player, dice, throws, hand, blind)


def _parse_detail(obj: Mapping[str, Any], rules: Ruleset) -> RecordTurn:
    check_keys(obj, _DETAIL_KEYS, "in einem Zug")
    if "player" not in obj:
        raise MalformedInput("Im Zug fehlt „player“.", field="player", code="missing_field")
    player = parse_player(obj["player"])
    return _detail_turn(player, obj["detail"], obj, rules)


def turn_in_detail(player: str, throws: Sequence[Throw], blind: bool, rules: Ruleset) -> RecordTurn:
    """A turn from its throws, checked like a game log's turn in detail (api/rules/RULES.md §3)."""
    return _detail_turn(player, [t.to_json() for t in throws], {"blind": blind}, rules)


def _detail_turn(player: str, raw: Any, obj: Mapping[str, Any], rules: Ruleset) -> RecordTurn:
    """The throws of a detail (raw game-log objects) → the turn; ``blind`` is read from ``obj``
    after the throws are checked."""
    if not isinstance(raw, list | tuple) or not raw:
        raise MalformedInput(
            "„detail“ muss eine nicht leere Liste von Würfen sein.", field="detail"
        )
    if len(raw) > rules.max_throws:
        raise MalformedInput(
            f"Nach diesen Hausregeln sind höchstens {throws_word(rules.max_throws)} erlaubt, "
            f"nicht {len(raw)}.",
            field="detail",
            code="throws_over_house_limit",
        )
    count = rules.dice_count
    kept: list[int] = []  # dice out of the cup: set aside or turned, never thrown again
    throws: list[Throw] = []
    last = len(raw) - 1
    for i, item in enumerate(raw):
        throw = _parse_throw(item, i, i == last, count - len(kept), rules)
        throws.append(throw)
        if i != last:
            kept.extend([1] * throw.sixes)
            kept.extend(throw.aside)
    final_throw = throws[-1].dice
    result = tuple(kept) + final_throw
    blind = bool(_flag(obj, "blind"))
    _check_blind(blind, len(throws), rules)
    return RecordTurn(player, result, len(throws), len(final_throw) == count, blind, tuple(throws))


def _parse_throw(item: Any, i: int, is_last: bool, in_cup: int, rules: Ruleset) -> Throw:
    """Throw ``i`` of a detail with ``in_cup`` dice in the cup, checked against api/rules/RULES.md §3."""
    n = i + 1
    where = f"detail[{i}]"
    if not isinstance(item, Mapping):
        raise MalformedInput(f"Wurf {n} muss ein Objekt sein.", field=where)
    check_keys(item, _THROW_KEYS, f"in Wurf {n}")
    if "dice" not in item:
        raise MalformedInput(
            f"In Wurf {n} fehlen die Würfel („dice“).", field=where, code="missing_field"
        )
    if in_cup == 0:
        raise MalformedInput(
            f"Wurf {n}: alle Würfel liegen schon heraus, es kann nicht weitergewürfelt werden.",
            field=where,
            code="dice_count_wrong",
        )
    dice = _pips(item["dice"], f"{where}.dice", None)
    if len(dice) != in_cup:
        raise MalformedInput(
            f"Wurf {n}: im Becher sind {in_cup} Würfel, geworfen wurden aber {len(dice)} "
            f"({list(dice)}). Herausgelegte Würfel werden nicht noch einmal geworfen.",
            field=where,
            code="dice_count_wrong",
        )
    sixes = item.get("sixes", 0)
    if not _is_int(sixes) or sixes not in (0, 1, 2):
        raise MalformedInput(
            f"Wurf {n}: „sixes“ muss 0, 1 oder 2 sein, nicht {sixes!r}.", field=where
        )
    aside = _pips(item.get("aside", []), f"{where}.aside", None)
    check_throw(dice, aside, sixes, n, is_last, rules)
    return Throw(dice, aside, sixes)


def check_throw(
    dice: tuple[int, ...], aside: tuple[int, ...], sixes: int, n: int, is_last: bool, rules: Ruleset
) -> None:
    """Whether throw number ``n`` of a turn, showing ``dice``, may turn ``sixes`` sixes and
    set ``aside`` aside (api/rules/RULES.md §3; ``is_last``: no throw follows it): raises
    :class:`MalformedInput` if not. The one rule of the throw-by-throw input and of the
    odds (api/rules/odds.py)."""
    where = f"detail[{n - 1}]"
    pool = _turn_sixes(dice, sixes, n, is_last, rules) if sixes else list(dice)
    for pip in aside:
        if pip not in pool:
            raise MalformedInput(
                f"Wurf {n}: {pip} kann nicht herausgelegt werden, der Wurf zeigt {list(dice)}.",
                field=where,
                code="detail_inconsistent",
            )
        pool.remove(pip)
    if rules.ones_only_aside and any(p != 1 for p in aside):
        raise MalformedInput(
            f"Wurf {n}: nach diesen Hausregeln dürfen nur Einsen herausgelegt werden.",
            field=where,
            code="house_rule_forbids",
        )


def _turn_sixes(
    dice: tuple[int, ...], sixes: int, n: int, is_last: bool, rules: Ruleset
) -> list[int]:
    """Turning ``sixes`` of throw ``n`` (api/rules/RULES.md §3.3): the pips left that may be set aside (the
    turned sixes are out, the six that goes back into the cup is thrown again)."""
    where = f"detail[{n - 1}]"
    if not rules.sixes_turning:
        raise MalformedInput(
            "Sechsen umdrehen ist nach diesen Hausregeln nicht erlaubt.",
            field=where,
            code="house_rule_forbids",
        )
    needed = sixes + 1
    if dice.count(6) < needed:
        raise MalformedInput(
            f"Wurf {n}: um {'eine Eins' if sixes == 1 else 'zwei Einsen'} zu bekommen, "
            f"braucht der Wurf {needed} Sechsen, er zeigt {dice.count(6)}.",
            field=where,
            code="detail_inconsistent",
        )
    if is_last:
        raise MalformedInput(
            f"Wurf {n}: wer Sechsen umdreht, muss danach noch einmal würfeln.",
            field=where,
            code="detail_inconsistent",
        )
    pool = list(dice)
    for _ in range(needed):
        pool.remove(6)
    return pool


def _parse_penalty(obj: Mapping[str, Any], rules: Ruleset) -> RecordPenalty:
    check_keys(obj, frozenset({"penalty"}), "in einer Strafe")
    body = obj["penalty"]
    if not isinstance(body, Mapping):
        raise MalformedInput("„penalty“ muss ein Objekt sein.", field="penalty")
    check_keys(body, frozenset({"player", "deckel", "reason"}), "in einer Strafe")
    if "player" not in body:
        raise MalformedInput(
            "In der Strafe fehlt der Spieler („player“).", field="player", code="missing_field"
        )
    player = parse_player(body["player"])
    reason = body.get("reason")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
        raise MalformedInput(
            f"Eine Strafe braucht einen Grund (1–{MAX_REASON} Zeichen).", field="reason"
        )
    deckel = body.get("deckel")
    if rules.penalty_mode is PenaltyMode.ROUND_LOSER:
        if deckel is not None:
            raise MalformedInput(
                "Nach diesen Hausregeln verliert der Sünder die Runde; Strafdeckel gibt es nicht.",
                field="deckel",
                code="house_rule_forbids",
            )
    elif deckel is None:
        if rules.penalty is None:
            raise MalformedInput(
                "Die Hausregeln legen keine Zahl von Strafdeckeln fest: bitte angeben, wie viele.",
                field="deckel",
                code="missing_field",
            )
    elif deckel not in PENALTY:
        raise MalformedInput(
            f"„deckel“ muss eine ganze Zahl von {PENALTY.low} bis {PENALTY.high} sein, "
            f"nicht {deckel!r}.",
            field="deckel",
        )
    return RecordPenalty(player, reason, deckel)


def throws_word(n: int) -> str:
    """``1`` → ``"1 Wurf"``, ``3`` → ``"3 Würfe"``: a number of throws in German."""
    return count(n, "Wurf", "Würfe")
