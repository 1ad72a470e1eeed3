"""The use cases of the current request: one repository per request, closed at its end."""

from __future__ import annotations

from flask import Flask, current_app, g

from ..domain import Services
from ..domain.webhooks import loopback_allowed


def services() -> Services:
    """The request's :class:`~api.domain.Services` (its repository is opened on first use)."""
    state = current_app.extensions["schocken"]
    if "repo" not in g:
        g.repo = state.store.repository()
    config = current_app.config
    hosted = config["STORAGE"] == "postgresql"
    loopback = loopback_allowed(config["WEBHOOK_LOOPBACK"], hosted, config.get("TESTING", False))
    return Services(g.repo, state.cache, loopback=loopback)


def close_repository(_exc: BaseException | None = None) -> None:
    repo = g.pop("repo", None)
    if repo is not None:
        repo.close()


def init_context(app: Flask) -> None:
    app.teardown_appcontext(close_repository)
