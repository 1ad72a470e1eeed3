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

from ..rules import MalformedInput, format_dice, limits, parse_dice, read_number

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
