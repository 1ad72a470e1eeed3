"""Health: is the API up, can the database write, which kind of store. Everyone sees ``status``
and ``storage``; the server's version and the cause of a degraded database (which may name a
file path or a host) and how the webhook sender keeps up (a sender that is behind) only with
the admin token (``Authorization: Bearer <admin token>``)."""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask.views import MethodView

from schemas import HealthSchema

from ..domain.base import utcnow
from ..http.context import check_admin, services
from ..http.errors import RETRY_AFTER, log_unavailable
from ..storage import StorageUnavailable
from .access import blueprint

blp = blueprint(__name__, "", "Is the API up?")


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    @blp.alt_response(503, schema=HealthSchema, description="The database cannot write now.")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.doc(operationId="getHealth", security=[{}, {"adminToken": []}])
    def get(self) -> Any:
        """Health check

        Without credentials: `status` and `storage`. With the server's admin token as Bearer
        token also `version`, the webhook sender's backlog (`sender`) and, when degraded, the
        cause (`database`); a wrong token is 401/403 as for every admin operation."""
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
        if admin:
            body["sender"] = sender_health()
        return body


def sender_health() -> dict[str, Any]:
    """The webhook outbox now: due deliveries, the oldest one's age, and the age of the oldest
    that waits for the sender (its webhook has no attempt in flight); ``behind`` when that one
    has waited over ``WEBHOOK_BEHIND_SECONDS`` (a sender that is down or has no free slot)."""
    now = utcnow()
    backlog = services().repo.delivery_backlog(now)

    def age(at: Any) -> float | None:
        return None if at is None else round(max(0.0, (now - at).total_seconds()), 1)

    waiting = age(backlog.waiting)
    limit = float(current_app.config["WEBHOOK_BEHIND_SECONDS"])
    return {
        "due": backlog.due,
        "oldest_due_seconds": age(backlog.oldest),
        "waiting_seconds": waiting,
        "behind": waiting is not None and waiting > limit,
    }
