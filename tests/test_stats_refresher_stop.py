"""Closing a store stops its statistics refresher first: no connection is closed under the
refresher's thread (that was a segfault in the tests: SQLite used after close)."""

from __future__ import annotations

import os

from conftest import make_table

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import simulate_logs


def test_closing_the_store_stops_and_joins_the_refresher(tmp_path):
    app = create_app(
        {"STORAGE": "sqlite", "DATABASE": str(tmp_path / "s.sqlite3"),
         "STATS_REFRESH_SECONDS": 0.01, "WRITE_RATE_PER_MINUTE": 0}
    )  # fmt: skip
    table = make_table(app.test_client(), "Zur Post")  # the first request starts the refresher
    for log in simulate_logs(PRESETS["standard"], 3, players=["Anna", "Bert"], seed=1):
        assert table.post("/imports", log).status_code == 201
    refresher = app.extensions["schocken_stats_refresher"][os.getpid()]
    assert refresher.name == "stats-refresher" and refresher.is_alive()
    app.extensions["schocken"].store.close()
    assert not refresher.is_alive()
