"""The statistics endpoints: the same numbers as the games recorded, private Stammtische closed."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from conftest import make_table, store_config

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from dashboard.refresher import run_once

NAMES = ["Anna", "Bert", "Clara", "Dieter"]


@pytest.fixture
def stats_app(storage, request, tmp_path):
    config = {**store_config(storage, tmp_path, request), "DASHBOARD_DIR": str(tmp_path / "site")}
    app = create_app(config)
    yield app
    app.extensions["schocken"].store.close()


def import_games(table, n, seed=7, start="2024-01-05T20:00:00+01:00"):
    losers = []
    logs = simulate_logs(
        PRESETS["standard"], n, players=NAMES, seed=seed, start=datetime.fromisoformat(start)
    )
    for log in logs:
        r = table.post("/imports", log)
        assert r.status_code == 201, r.json
        losers.append(r.json["outcome"]["loser"])
    return losers


def refreshed(app):
    """What the server's refresher does next (a request never computes statistics)."""
    assert run_once(app.extensions["schocken"].store)


def test_a_read_never_computes_it_shows_what_is_stored_and_says_it_is_stale(stats_app):
    client = stats_app.test_client()
    table = make_table(client, "Zur Post")
    r = client.get(f"{table.base}/statistics")  # never computed: empty, stale
    assert (r.status_code, r.headers["Statistics-Stale"]) == (200, "true")
    assert r.json["overview"]["games"] == 0
    refreshed(stats_app)
    r = client.get(f"{table.base}/statistics")
    assert (r.json["overview"]["games"], r.headers["Statistics-Stale"]) == (0, "false")
    assert "wird aktualisiert" not in client.get(f"/dashboard/{table.slug}/").text
    import_games(table, 2)
    r = client.get(f"{table.base}/statistics/years")  # as stored before the games
    assert (r.json, r.headers["Statistics-Stale"]) == ([], "true")
    assert "wird aktualisiert" in client.get(f"/dashboard/{table.slug}/").text
    refreshed(stats_app)
    r = client.get(f"{table.base}/statistics/years")
    assert (r.json, r.headers["Statistics-Stale"]) == ([{"year": 2024, "games": 2}], "false")
    assert "wird aktualisiert" not in client.get(f"/dashboard/{table.slug}/").text


def test_verlierer_and_player_numbers_match_the_games_recorded(stats_app):
    client = stats_app.test_client()
    table = make_table(client, "Zur Post")
    losers = import_games(table, 3)
    refreshed(stats_app)
    r = client.get(f"{table.base}/statistics/verlierer", query_string={"year": 2024})
    assert r.status_code == 200, r.json
    counts = Counter(losers)
    lost = {row["name"]: row["games_lost"] for row in r.json["ranking"]}
    assert lost == {name: counts.get(name, 0) for name in NAMES}
    top = max(counts.values())
    assert {v["name"] for v in r.json["verlierer"]} <= {n for n, c in counts.items() if c == top}
    everything = client.get(f"{table.base}/statistics").json
    assert everything["overview"]["games"] == 3
    assert {p["games_played"] for p in everything["players"]} == {3}
    assert sum(p["games_lost"] for p in everything["players"]) == 3
    assert client.get(f"{table.base}/statistics/years").json == [{"year": 2024, "games": 3}]


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/years",
        "/verlierer",
        "/players",
        "/categories",
        "/head-to-head",
        "/records",
        "/trend",
        "/attendance",
    ],
)
def test_every_statistics_endpoint_answers_and_a_private_stammtisch_is_hidden_without_its_token(
    stats_app, path
):
    client = stats_app.test_client()
    public = make_table(client, "Zur Post")
    secret = make_table(client, "Geheimbund", private=True)
    assert client.get(f"{public.base}/statistics{path}").status_code == 200
    assert client.get(f"{secret.base}/statistics{path}").status_code == 404  # hidden
    wrong = {"Authorization": f"Bearer {public.token}"}
    assert client.get(f"{secret.base}/statistics{path}", headers=wrong).status_code == 404
    assert client.get(f"{secret.base}/statistics{path}", headers=secret.auth).status_code == 200
    assert client.get(f"/api/v1/stammtische/nirgends/statistics{path}").status_code == 404


def test_a_malformed_year_is_422(stats_app):
    client = stats_app.test_client()
    table = make_table(client, "Zur Post")
    r = client.get(f"{table.base}/statistics/players", query_string={"year": "letztes"})
    assert r.status_code == 422
    assert client.get(f"{table.base}/statistics", query_string={"year": 10}).status_code == 422
