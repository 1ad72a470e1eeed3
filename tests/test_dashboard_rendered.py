"""A served period page is rendered once per change of the read model (dashboard/web.py): a
visit reads the stored JSON and sends the kept page while it is unchanged; a refresh that
changed the statistics, a page turning stale and a renamed Stammtisch render it again."""

from __future__ import annotations

from datetime import datetime

import pytest
from conftest import make_table

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from dashboard import web
from dashboard.readmodel import refresh


def one_log(seed: int, start: str):
    return next(simulate_logs(PRESETS["standard"], 1, players=["Anna", "Bert", "Clara"],
                              seed=seed, start=datetime.fromisoformat(start)))  # fmt: skip


@pytest.fixture
def served(tmp_path, monkeypatch):
    app = create_app({"STORAGE": "sqlite", "DATABASE": str(tmp_path / "s.sqlite3"),
                      "DASHBOARD_DIR": str(tmp_path / "site")})  # fmt: skip
    rendered = []
    render = web.render_period
    monkeypatch.setattr(web, "render_period", lambda *a, **k: rendered.append(1) or render(*a, **k))
    yield app, app.test_client(), rendered
    app.extensions["schocken"].store.close()


def test_a_page_is_rendered_once_per_change_of_what_it_shows(served):
    app, client, rendered = served
    repo = app.extensions["schocken"].store.repository()
    table = make_table(client, "Zur Post")
    assert table.post("/imports", one_log(5, "2024-05-03T20:00:00+02:00")).status_code == 201
    refresh(repo)
    page = "/dashboard/zur-post/2024.html"
    first = client.get(page)
    assert first.status_code == 200 and len(rendered) == 1
    again = client.get(page)
    assert again.get_data() == first.get_data() and len(rendered) == 1  # kept
    assert again.headers["ETag"] == first.headers["ETag"]
    # another game of 2024: stale at once (rendered again, saying so), then refreshed
    assert table.post("/imports", one_log(6, "2024-06-07T20:00:00+02:00")).status_code == 201
    stale = client.get(page).get_data(as_text=True)
    assert len(rendered) == 2 and 'id="stale"' in stale
    refresh(repo)
    fresh = client.get(page).get_data(as_text=True)
    assert len(rendered) == 3 and 'id="stale"' not in fresh
    assert "2 beendete Spiele" in fresh
    client.get(page)
    assert len(rendered) == 3
    # the Stammtisch renamed: its name is on the page
    assert table.patch("", {"name": "Zum Anker"}).status_code == 200
    refresh(repo)
    assert "Zum Anker" in client.get(page).get_data(as_text=True) and len(rendered) == 4
