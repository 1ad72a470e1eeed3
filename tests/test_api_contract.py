"""Contract test: schemathesis generates requests from our own OpenAPI document and checks the
answers (no 5xx, every response as documented, the statistics of finished games included).
Bounded examples per operation.

The path parameters point at a real Stammtisch, player and game (with its token), so most
generated requests reach the engine rather than a 404. (schemathesis' lazy ``from_fixture``
does not work with pytest 9, so the app is built when the module is collected.)
"""

from __future__ import annotations

import random

import schemathesis
from conftest import PLAYERS, make_table
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from api.app import create_app
from api.rules import PRESETS, simulate_game, to_log


def _seeded_schema(**config):
    app = create_app({"STORAGE": "memory", "TESTING": True, **config})
    table = make_table(app.test_client(), "Zur Post")
    table.add_players(PLAYERS)
    table.start()
    # finished games in two years, so that the statistics answer with every field filled
    # (dates, records, streaks) and their conformance is checked too, not only their nulls
    rng = random.Random(7)
    for played_at in ("2025-03-07T20:15:00+01:00", "2026-07-03T20:15:00+02:00"):
        game = simulate_game(PRESETS["standard"], PLAYERS, "Anna", rng)
        r = table.post("/imports", {**to_log(game), "played_at": played_at})
        assert r.status_code == 201, r.json
    config = schemathesis.Config.from_dict(
        {
            "parameters": {"path.slug": "zur-post", "path.game_id": 1, "path.player_id": 1},
            # declared auth (not a plain header): schemathesis then knows it is valid
            "auth": {"openapi": {"bearerAuth": {"bearer": table.token}}},
        }
    )
    return schemathesis.openapi.from_wsgi("/openapi.json", app, config=config)


schema = _seeded_schema()


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_the_api_keeps_its_contract(case):
    # Schemas check shape, the engine checks legality: a well-shaped request the rules forbid
    # is a documented 409/422, so "schema-valid request rejected" is not a failure here.
    case.call_and_validate(excluded_checks=[positive_data_acceptance])
