"""The rule systems on offer, the evaluation of one result and the odds of a turn: no storage
involved."""

from __future__ import annotations

from typing import Any

from ..rules import PRESET_HELP, PRESETS, Target, evaluate, odds
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


def turn_odds(data: dict[str, Any]) -> dict[str, Any]:
    """Every legal decision after a throw with its exact chances against a result thrown
    earlier in the round (api/rules/RULES.md §12); the engine refuses a position that
    cannot be (422)."""
    target = data["target"]
    answer = odds(
        rules_of(data["rules"]),
        tuple(data["aside"]),
        tuple(data["dice"]),
        data["throws"],
        data["limit"],
        Target(tuple(target["dice"]), target["throws"], target["hand"]),
    )
    return {
        "decisions": [
            {
                "stop": d.stop,
                "aside": list(d.aside),
                "sixes": d.sixes,
                "p_beat": d.p_beat,
                "p_tie": d.p_tie,
            }
            for d in answer.decisions
        ],
        "best": answer.best,
    }
