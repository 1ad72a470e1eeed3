"""House rules: the presets with every option, and evaluating a result for third-party apps."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from schemas import EvaluateRequestSchema, EvaluationSchema, PresetSchema

from ..domain import catalog
from .access import blueprint

blp = blueprint(
    __name__, "/rules", "House rules (Hausregeln): presets and the evaluation of results."
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
