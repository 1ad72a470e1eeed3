"""One flask-smorest Blueprint per resource, each with MethodView classes."""

from __future__ import annotations

from flask_smorest import Api

from . import events, games, health, imports, players, rules, stammtische, webhooks

BLUEPRINTS = (
    health.blp,
    stammtische.blp,
    players.blp,
    rules.blp,
    games.blp,
    imports.blp,
    webhooks.blp,
)


def register(api: Api) -> None:
    for blp in BLUEPRINTS:
        api.register_blueprint(blp)
    events.register(api)
