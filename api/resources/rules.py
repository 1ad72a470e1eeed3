"""House rules: the presets with every option, evaluating a result and the odds of a turn for
third-party apps."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from schemas import (
    EvaluateRequestSchema,
    EvaluationSchema,
    OddsRequestSchema,
    OddsSchema,
    PresetSchema,
)

from ..domain import catalog
from .access import blueprint

blp = blueprint(
    __name__,
    "/rules",
    "House rules (Hausregeln): presets, the evaluation of results, the odds of a turn.",
)


@blp.route("/presets")
class Presets(MethodView):
    @blp.response(200, PresetSchema(many=True))
    @blp.doc(operationId="listPresets")
    def get(self) -> list[dict[str, Any]]:
        """List the presets with every option and a German description"""
        return catalog.presets()


@blp.route("/presets/<name>")
class PresetItem(MethodView):
    @blp.response(200, PresetSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.doc(operationId="getPreset")
    def get(self, name: str) -> dict[str, Any]:
        """Read one preset"""
        return catalog.preset(name)


@blp.route("/evaluate")
class Evaluate(MethodView):
    @blp.arguments(EvaluateRequestSchema)
    @blp.response(200, EvaluationSchema)
    @blp.doc(operationId="evaluateResult")
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Evaluate a final result under house rules

        Category, German name, the Deckel it is worth as a round's best, and the comparison
        key (higher beats lower)."""
        return catalog.evaluate_result(data)


ODDS_EXAMPLE = {
    "rules": {"preset": "standard"},
    "aside": [1, 1],
    "dice": [4],
    "throws": 2,
    "limit": 3,
    "target": {"dice": [1, 1, 5], "throws": 2, "hand": False},
}


@blp.route("/odds")
class Odds(MethodView):
    @blp.arguments(OddsRequestSchema, example=ODDS_EXAMPLE)
    @blp.response(200, OddsSchema)
    @blp.doc(operationId="turnOdds")
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """The odds of every decision after a throw

        A player has just thrown; another player threw `target` earlier in the same round.
        For every legal decision — stop, or set aside part of the dice just thrown (turning
        `sixes` where the house rules allow) and throw the rest again — the exact probability
        that the turn's final result beats the target (`p_beat`) or ties with it (`p_tie`),
        going on optimally afterwards; `best` is the decision with the highest `p_beat`. How
        the rules are read (what is legal, aus der Hand, ties): api/rules/RULES.md §12. In the
        example, stopping keeps Schock 4, worse than Schock 5; throwing the 4 again beats it
        with a 1 or a 6, while a 5 in three throws loses the tie on throws: 2/6."""
        return catalog.turn_odds(data)
