"""Health: is the API up, which version, which storage, can the database write."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from schemas import HealthSchema

from ..http.blueprint import Blueprint
from ..http.context import services
from ..http.errors import RETRY_AFTER, log_unavailable
from ..storage import StorageUnavailable

blp = Blueprint("health", __name__, url_prefix="/api/v1", description="Is the API up?")


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    @blp.alt_response(503, schema=HealthSchema, description="The database cannot write now.")
    @blp.doc(operationId="getHealth")
    def get(self) -> Any:
        """Health check"""
        body: dict[str, Any] = {
            "status": "ok",
            "version": current_app.config["API_VERSION"],
            "storage": current_app.config["STORAGE"],
        }
        try:
            services().repo.probe()
        except StorageUnavailable as err:
            log_unavailable(err)
            body.update(status="degraded", database=str(err))
            return body, 503, {"Retry-After": str(RETRY_AFTER)}
        return body
