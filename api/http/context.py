"""The use cases of the current request: one :class:`~api.domain.Services` (one repository)
per request, made on first use and closed at its end."""

from __future__ import annotations

from flask import Flask, current_app, g

from ..domain import Services
from ..domain.webhooks import loopback_allowed


def services() -> Services:
    """The request's :class:`~api.domain.Services` (its repository is opened on first use;
    the same object for the whole request, so a write it opens is seen by every use case)."""
    svc: Services | None = g.get("services")
    if svc is None:
        state = current_app.extensions["schocken"]
        g.repo = state.store.repository()
        svc = g.services = Services(g.repo, state.cache, loopback=current_app.extensions[_LOOPBACK])
    return svc


def close_repository(_exc: BaseException | None = None) -> None:
    g.pop("services", None)
    repo = g.pop("repo", None)
    if repo is not None:
        repo.close()


_LOOPBACK = "schocken_webhook_loopback"


def init_context(app: Flask) -> None:
    config = app.config
    hosted = config["STORAGE"] == "postgresql"
    app.extensions[_LOOPBACK] = loopback_allowed(
        config["WEBHOOK_LOOPBACK"], hosted, config.get("TESTING", False)
    )
    app.teardown_appcontext(close_repository)
