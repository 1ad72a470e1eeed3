"""The rule systems on offer and the evaluation of one result: no storage involved."""

from __future__ import annotations

from typing import Any

from ..rules import PRESET_HELP, PRESETS, evaluate
from .base import rules_of
from .errors import Invalid, NotFound


def presets() -> list[dict[str, Any]]:
    """Every preset with its German description and every option."""
    return [preset(name) for name in PRESETS]


def preset(name: str) -> dict[str, Any]:
    if name not in PRESETS:
        raise NotFound(
            f"Kein Regelwerk „{name}“ (bekannt: {', '.join(PRESETS)}).", code="preset_not_found"
        )
    return {"name": name, "description": PRESET_HELP[name], "options": PRESETS[name].describe()}


def evaluate_result(data: dict[str, Any]) -> dict[str, Any]:
    """Category, German name, Deckel value and rank of dice under a ruleset."""
    rules = rules_of(data["rules"])
    if len(data["dice"]) != rules.dice_count:
        msg = f"Nach diesen Hausregeln gehören {rules.dice_count} Würfel zu einem Wurf."
        raise Invalid(msg, field="dice", code="dice_count_wrong")
    return evaluate(tuple(data["dice"]), data["hand"], rules).to_json()
