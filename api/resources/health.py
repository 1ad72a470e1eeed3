"""Health: is the API up, can the database write, which kind of store. Everyone sees ``status``
and ``storage``; the server's version and the cause of a degraded database (which may name a
file path or a host) only with the admin token (``Authorization: Bearer <admin token>``)."""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask.views import MethodView

from schemas import ErrorSchema, HealthSchema

from ..http.auth import check_admin
from ..http.blueprint import Blueprint
from ..http.context import services
from ..http.errors import RETRY_AFTER, log_unavailable
from ..storage import StorageUnavailable

blp = Blueprint("health", __name__, url_prefix="/api/v1", description="Is the API up?")


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    @blp.alt_response(503, schema=HealthSchema, description="The database cannot write now.")
    @blp.alt_response(401, schema=ErrorSchema, description="Not the Bearer scheme.")
    @blp.alt_response(403, schema=ErrorSchema, description="Not the admin token.")
    @blp.doc(operationId="getHealth", security=[{}, {"adminToken": []}])
    def get(self) -> Any:
        """Health check

        Without credentials: `status` and `storage`. With the server's admin token as Bearer
        token also `version` and, when degraded, the cause (`database`); a wrong token is
        401/403 as for every admin operation."""
        admin = "Authorization" in request.headers
        if admin:
            check_admin()
        body: dict[str, Any] = {"status": "ok", "storage": current_app.config["STORAGE"]}
        if admin:
            body["version"] = current_app.config["API_VERSION"]
        try:
            services().repo.probe()
        except StorageUnavailable as err:
            log_unavailable(err)
            body["status"] = "degraded"
            if admin:
                body["database"] = str(err)
            return body, 503, {"Retry-After": str(RETRY_AFTER)}
        return body
