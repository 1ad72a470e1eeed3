"""Health: is the API up, which version, which storage."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from schemas import HealthSchema

from ..http.blueprint import Blueprint

blp = Blueprint("health", __name__, url_prefix="/api/v1", description="Is the API up?")


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    @blp.doc(operationId="getHealth")
    def get(self) -> dict[str, Any]:
        """Health check"""
        return {
            "status": "ok",
            "version": current_app.config["API_VERSION"],
            "storage": current_app.config["STORAGE"],
        }
