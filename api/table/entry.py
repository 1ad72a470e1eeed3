"""A turn or penalty as the pub form enters it: form fields → the engine's entry, and back
into a few German words.

The same code reads the form on the server (``api/web``) and, offline, in the phone's browser
(``api/table/browser.py``), so both refuse the same input with the same message. Nothing here
decides a rule: the engine checks the entry it makes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..rules import (
    Game,
    MalformedInput,
    OpenTurn,
    format_dice,
    limits,
    parse_dice,
    read_number,
    turn_state,
)

#: the values of the throw buttons: "2", "2h" (aus der Hand), "blind"
_THROWS = re.compile(r"^([1-9])(h?)$")

MISSING_THROWS = "Wie viele Würfe? Bitte eine der Wurf-Tasten antippen."
MISSING_REASON = "Bitte den Grund der Strafe eintragen."


@dataclass
class FormErrors:
    """Messages by field name; ``form`` is for the whole form."""

    fields: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, message: str) -> None:
        self.fields.setdefault(name, []).append(message)

    def __bool__(self) -> bool:
        return bool(self.fields)

    def get(self, name: str) -> list[str]:
        return self.fields.get(name, [])

    def text(self) -> str:
        """Every message in one line (where only one line is shown)."""
        return " ".join(m for messages in self.fields.values() for m in messages)


@dataclass
class TurnInput:
    """What the turn form sent, kept to re-render it after a rejection."""

    player: str = ""
    dice: list[str] = field(default_factory=lambda: ["", "", ""])
    text: str = ""
    throws: str = ""


def parse_turn(
    form: Mapping[str, Any], dice_count: int, errors: FormErrors
) -> tuple[TurnInput, dict[str, Any] | None]:
    """The turn summary of the form, or ``None`` with errors; the engine checks the rest."""
    entered = TurnInput(
        player=str(form.get("player") or ""),
        dice=[str(form.get(f"d{i}") or "") for i in range(1, dice_count + 1)],
        text=str(form.get("wurf") or "").strip(),
        throws=str(form.get("throws") or ""),
    )
    dice: list[int] = []
    if entered.text:
        try:
            dice = list(parse_dice(entered.text))
        except MalformedInput as err:
            errors.add("dice", err.message)
        else:
            entered.dice = [str(d) for d in dice]
    else:
        missing = [str(i + 1) for i, d in enumerate(entered.dice) if d not in list("123456")]
        if missing:
            errors.add(
                "dice",
                f"Bitte alle {dice_count} Würfel wählen (es fehlt Würfel {', '.join(missing)}).",
            )
        else:
            dice = [int(d) for d in entered.dice]
    body: dict[str, Any] = {"player": entered.player, "dice": dice}
    throws = _THROWS.match(entered.throws)
    if entered.throws == "blind":
        body.update(throws=1, blind=True)
    elif throws:
        body["throws"] = int(throws.group(1))
        if throws.group(2):
            body["hand"] = True
    else:
        errors.add("throws", MISSING_THROWS)
    if errors:
        return entered, None
    return entered, body


#: the decisions of the throw-by-throw form ("decision" of its buttons): stop, set the ticked
#: dice aside and throw again, turn two or three sixes and throw again, or only show the odds
DECISIONS = {"stop": 0, "again": 0, "sixes1": 1, "sixes2": 2}
SHOW_ODDS = "odds"


@dataclass
class ThrowInput:
    """What the throw-by-throw form sent ("Wurf für Wurf"), kept to re-render it: the dice of
    the throw (``w1`` …) and which of them are set aside (``x1`` …)."""

    dice: list[str] = field(default_factory=lambda: ["", "", ""])
    aside: list[bool] = field(default_factory=lambda: [False, False, False])
    decision: str = ""


def read_throw(form: Mapping[str, Any], in_cup: int) -> ThrowInput:
    """The throw form's fields as entered (nothing checked)."""
    return ThrowInput(
        dice=[str(form.get(f"w{i}") or "") for i in range(1, in_cup + 1)],
        aside=[bool(form.get(f"x{i}")) for i in range(1, in_cup + 1)],
        decision=str(form.get("decision") or ""),
    )


def thrown_dice(entered: ThrowInput, errors: FormErrors) -> tuple[int, ...] | None:
    """The pips of the throw, or None with a German message when a die is missing."""
    missing = [str(i + 1) for i, d in enumerate(entered.dice) if d not in list("123456")]
    if missing:
        errors.add(
            "throw",
            f"Bitte alle {len(entered.dice)} Würfel des Wurfs wählen "
            f"(es fehlt Würfel {', '.join(missing)}).",
        )
        return None
    return tuple(int(d) for d in entered.dice)


def parse_throw_form(
    form: Mapping[str, Any], player: str, in_cup: int, errors: FormErrors
) -> tuple[ThrowInput, dict[str, Any] | None]:
    """One throw of the throw-by-throw form as the API's throw entry (``{"player", "dice",
    "aside", "sixes", "stop"}``, api/rules/throws.py), or None with errors; the engine checks
    whether it fits the turn. Turning sixes takes them from the dice thrown; the ticked sixes
    are not set aside besides."""
    entered = read_throw(form, in_cup)
    if entered.decision not in DECISIONS:
        errors.add("throw", "Bitte wählen: stehen lassen oder rauslegen und nochmal werfen.")
    dice = thrown_dice(entered, errors)
    if dice is None or errors:
        return entered, None
    body: dict[str, Any] = {"player": player, "dice": list(dice)}
    if entered.decision == "stop":
        body["stop"] = True
        return entered, body
    sixes = DECISIONS[entered.decision]
    aside = [d for d, ticked in zip(dice, entered.aside, strict=True) if ticked]
    if sixes:
        aside = [d for d in aside if d != 6]
    body.update(aside=aside, sixes=sixes)
    return entered, body


def dice_in_cup(game: Game, open_turn: OpenTurn | None, player: str) -> int:
    """The dice ``player``'s next throw throws: those left in the cup of their open turn, else
    all of them (a first throw; the engine refuses it when it is not their turn)."""
    state = turn_state(game, open_turn)
    if state is not None and state.open is not None and state.player == player:
        return state.open.dice_in_cup
    return game.rules.dice_count


def card_entered(
    form: Mapping[str, Any], game: Game, open_turn: OpenTurn | None, player: str
) -> ThrowInput:
    """The throw card as entered for ``player`` (nothing checked), to draw it again with its
    odds ("Chancen zeigen")."""
    return read_throw(form, dice_in_cup(game, open_turn, player))


def card_throw(
    form: Mapping[str, Any],
    game: Game,
    open_turn: OpenTurn | None,
    player: str,
    errors: FormErrors,
) -> tuple[ThrowInput, dict[str, Any] | None]:
    """One throw of the throw card for ``player`` on this game (:func:`parse_throw_form` with
    the dice in their cup): the server's form, the offline queue's endpoint and the phone's
    engine read the card with it."""
    return parse_throw_form(form, player, dice_in_cup(game, open_turn, player), errors)


def field_of(engine_field: str | None) -> str:
    """Where an engine error is shown in the turn form."""
    if engine_field in ("dice",):
        return "dice"
    return "throws"


def penalty_body(
    entered: Mapping[str, str], deckel_mode: bool, fixed: int | None, errors: FormErrors
) -> dict[str, Any]:
    """The penalty as the service takes it (``{"player", "reason"[, "deckel"]}``); missing or
    malformed fields go to ``errors``."""
    body: dict[str, Any] = {"player": entered.get("player", ""), "reason": entered["reason"]}
    if not entered["reason"]:
        errors.add("reason", MISSING_REASON)
    deckel = entered.get("deckel", "")
    if deckel_mode:
        number = read_number(deckel)  # ASCII digits only: "²" is no number
        if number is not None:
            body["deckel"] = number
        elif deckel or fixed is None:
            errors.add(
                "deckel",
                "Bitte die Zahl der Strafdeckel eintragen "
                f"({limits.PENALTY.low} bis {limits.PENALTY.high}).",
            )
    return body


def describe_entry(kind: str, body: Mapping[str, Any]) -> str:
    """A log entry in a few German words ("Zug von Bert (5-6-6)"), for undo buttons and audit."""
    if kind == "penalty":
        p = body["penalty"]
        return f"Strafe für {p['player']} ({p['reason']})"
    if kind == "throw":
        if "dice" not in body:
            return f"{body['player']} hört auf"
        return f"Wurf von {body['player']} ({format_dice(body['dice'])})"
    if "detail" in body:
        return f"Zug von {body['player']} ({len(body['detail'])} Würfe einzeln)"
    return f"Zug von {body['player']} ({format_dice(body['dice'])})"


def read_entry(
    kind: str,
    form: Mapping[str, Any],
    game: Game,
    open_turn: OpenTurn | None,
    player: str,
    errors: FormErrors,
) -> dict[str, Any] | None:
    """The service's entry of a form's fields: a whole turn, a throw of the throw card (read for
    ``player``, :func:`card_throw`) or a penalty; None with ``errors``. The server's queue
    (``api/web/offline.py``) and the phone's engine (``api.table.browser``) read entries with it."""
    rules = game.rules
    if kind == "throw":
        return card_throw(form, game, open_turn, player, errors)[1]
    if kind == "penalty":
        entered = {name: (form.get(name) or "").strip() for name in ("player", "reason", "deckel")}
        deckel_mode = rules.options()["penalty_mode"] == "deckel"
        penalty = penalty_body(entered, deckel_mode, rules.penalty, errors)
        return None if errors else {"penalty": penalty}
    return parse_turn(form, rules.dice_count, errors)[1]
