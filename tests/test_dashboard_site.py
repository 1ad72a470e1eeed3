"""The static site, the figures, the CLI, the demo and the server's /dashboard/."""

from __future__ import annotations

import re
import threading
from datetime import datetime
from pathlib import Path

import pytest
from conftest import make_table
from dashboard_data import cursor, make_store
from werkzeug.serving import make_server

from api.app import create_app
from api.bench.snapshot import connection_for
from api.cli import main
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from api.storage import MemoryStore
from dashboard import assets, figures
from dashboard.demo import create_demo
from dashboard.readmodel import refresh
from dashboard.site import build_site
from dashboard.stats import Statistics

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    store = make_store()
    out = tmp_path_factory.mktemp("site")
    result = build_site(cursor(store), out)
    store.close()
    assert (result.stammtische, result.pages) == (1, 4)  # index, all time, 2024, 2023
    return out


def card(html: str, card_id: str) -> str:
    match = re.search(rf'id="{card_id}">(.*?)</div>', html, re.S)
    assert match, card_id
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(1)))


def test_the_year_page_names_the_verlierer_des_jahres(site):
    page = (site / "zur-post" / "2024.html").read_text(encoding="utf-8")
    text = card(page, "verlierer-des-jahres")
    assert "Verlierer des Jahres 2024" in text and "Elke" in text
    assert "2 von 3 Spielen verloren (66,7 %)" in text
    assert "Dieter" in card(page, "sicherster-spieler")
    assert "Anna und Bert" in card(
        (site / "zur-post" / "2023.html").read_text(), "verlierer-des-jahres"
    )


def test_every_chart_has_its_numbers_beside_it(site):
    page = (site / "zur-post" / "2024.html").read_text(encoding="utf-8")
    charts = re.findall(
        r'<div class="chart">(.*?)</div>\s*<div class="table-wrap"[^>]*>', page, re.S
    )
    assert len(charts) == page.count('<div class="chart">') == 6
    assert page.count("data-chart=") == 6


def test_plotly_js_is_written_once_and_no_page_needs_the_network(site):
    names = assets.names()
    scripts = sorted(site.rglob("*.js"), key=lambda p: p.stat().st_size)
    assert [p.name for p in scripts] == [names["dashboard.js"], names["plotly.js"]]
    assert scripts[1].stat().st_size > 1_000_000
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert not re.search(r'(src|href)="(https?:)?//', html), page
        assert "cdn" not in html.lower()
    script = f'<script src="../{assets.names()["plotly.js"]}" defer>'
    assert script in (site / "zur-post" / "index.html").read_text()


def test_private_stammtische_stay_out_unless_asked_for(site, tmp_path):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Zur Post" in index and "Zum Anker" not in index
    assert not (site / "zum-anker").exists()
    store = make_store()
    try:
        build_site(cursor(store), tmp_path, include_private=True)
        build_site(cursor(store), tmp_path / "one", slugs=["zum-anker"])
        with pytest.raises(KeyError):
            build_site(cursor(store), tmp_path / "none", slugs=["gibt-es-nicht"])
    finally:
        store.close()
    assert "Gerd" in (tmp_path / "zum-anker" / "2024.html").read_text(encoding="utf-8")
    names = sorted(assets.names().values())
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == sorted(
        ["index.html", "zum-anker", *(n + end for n in names for end in ("", ".br", ".gz"))]
    )


def test_figures_are_pure_and_share_one_template():
    ranking = [
        {
            "rank": 1,
            "name": "Elke",
            "games_lost": 2,
            "games_played": 3,
            "share_lost": 2 / 3,
            "halves_lost": 3,
        },
        {
            "rank": 2,
            "name": "Clara",
            "games_lost": 2,
            "games_played": 6,
            "share_lost": 1 / 3,
            "halves_lost": 3,
        },
    ]
    fig = figures.verlierer(ranking)
    bar = fig["data"][0]
    assert bar["y"] == ["Clara", "Elke"]  # first place on top
    assert bar["marker"]["color"] == [figures.MUTED, figures.ACCENT]
    assert fig["layout"]["xaxis"]["title"]["text"] == "verlorene Spiele"
    trend = figures.trend(
        [{"month": "2024-03", "player_id": 3, "name": "Clara", "games_lost": 2}], 2024, {3: "#000"}
    )
    assert trend["data"][0]["x"][:3] == ["Jan", "Feb", "Mär"] and trend["data"][0]["y"][2] == 2
    assert fig["layout"]["template"] is trend["layout"]["template"] is figures.TEMPLATE


def _sqlite_app(tmp_path, games=2):
    """An app on a SQLite file with ``games`` imported games of „Zur Post“ (2024)."""
    app = create_app(
        {"STORAGE": "sqlite", "DATABASE": str(tmp_path / "s.sqlite3"),
         "DASHBOARD_DIR": str(tmp_path / "site")}
    )  # fmt: skip
    table = make_table(app.test_client(), "Zur Post")
    logs = simulate_logs(PRESETS["standard"], games, players=["Anna", "Bert", "Elke"], seed=5,
                         start=datetime.fromisoformat("2024-05-03T20:00:00+02:00"))  # fmt: skip
    for log in logs:
        assert table.post("/imports", log).status_code == 201
    return app


def test_dashboard_build_reads_the_read_model_also_while_a_server_holds_the_file(tmp_path, capsys):
    app = _sqlite_app(tmp_path)  # this process holds the file, like `schocken serve`
    try:
        db = str(tmp_path / "s.sqlite3")
        args = ["dashboard", "build", "--db", db, "--out", str(tmp_path / "out"), "--progress"]
        assert main(args, standalone_mode=False) == 0
    finally:
        app.extensions["schocken"].store.close()
    err = capsys.readouterr().err
    assert "2/2 zur-post/2024.html" in err and "3 Seiten" in err
    assert "Elke" in (tmp_path / "out" / "zur-post" / "2024.html").read_text(encoding="utf-8")


def test_the_demo_plays_weekly_games_with_six_to_eight_players_and_changing_attendance():
    store = MemoryStore()
    info = create_demo(store, years=2, first_year=2024, seed=3)
    with connection_for(store.repository()) as cur:
        sizes = {
            n
            for (n,) in cur.execute("SELECT count(*) FROM game_players GROUP BY game_id").fetchall()
        }
        stats = Statistics(cur)
        years = {
            r["year"]: {a["name"] for a in stats.attendance(1, r["year"])} for r in stats.years(1)
        }
        turns = cur.execute("SELECT count(*) FROM turn_facts").fetchone()[0]
    log = sum(len(store.repository().load_log(g)) for g in store.repository().game_ids())
    assert info["games"] == 104 and info["turns"] == turns == log  # summaries: one entry a turn
    assert sizes <= {6, 7, 8}
    assert "Heinz" not in years[2024] and "Heinz" in years[2025]  # joins in the second year
    assert {"Anna", "Bert", "Clara"} <= years[2024]


def fetch(client, url):
    """(status, text) of a GET, the response closed (files are streamed)."""
    with client.get(url) as response:
        return response.status_code, response.get_data(as_text=True)


def test_the_server_serves_the_dashboard_and_rebuilds_it_when_a_game_finishes(tmp_path):
    app = create_app(
        {
            "STORAGE": "sqlite",
            "DATABASE": str(tmp_path / "s.sqlite3"),
            "DASHBOARD_DIR": str(tmp_path / "site"),
        }
    )
    client = app.test_client()
    try:
        table = make_table(client, "Zur Post")
        secret = make_table(client, "Geheimbund", private=True)
        logs = list(simulate_logs(PRESETS["standard"], 2, players=["Anna", "Bert", "Clara"], seed=5,
                                  start=datetime.fromisoformat("2024-05-03T20:00:00+02:00")))  # fmt: skip
        assert table.post("/imports", logs[0]).status_code == 201
        assert secret.post("/imports", logs[0]).status_code == 201
        refresh(app.extensions["schocken"].store.repository())  # the refresher catches up
        status, index = fetch(client, "/dashboard/")
        assert status == 200 and "Zur Post" in index and "Geheimbund" not in index
        status, page = fetch(client, "/dashboard/zur-post/2024.html")
        assert status == 200 and "1 beendetes Spiel" in page
        assert fetch(client, "/dashboard/zur-post/")[0] == 200
        assert fetch(client, f"/dashboard/{assets.names()['plotly.js']}")[0] == 200
        assert fetch(client, "/dashboard/geheimbund/index.html")[0] == 404
        assert table.post("/imports", logs[1]).status_code == 201  # another game finished
        refresh(app.extensions["schocken"].store.repository())  # the refresher catches up
        assert "2 beendete Spiele" in fetch(client, "/dashboard/zur-post/2024.html")[1]
        assert "2 beendete Spiele" in fetch(client, "/dashboard/zur-post/index.html")[1]
    finally:
        app.extensions["schocken"].store.close()


def test_dashboard_build_through_a_running_server(tmp_path):
    app = create_app(
        {
            "STORAGE": "sqlite",
            "DATABASE": str(tmp_path / "s.sqlite3"),
            "DASHBOARD_DIR": str(tmp_path / "site"),
        }
    )
    table = make_table(app.test_client(), "Zur Post")
    log = next(simulate_logs(PRESETS["standard"], 1, players=["Anna", "Bert"], seed=2,
                             start=datetime.fromisoformat("2024-05-03T20:00:00+02:00")))  # fmt: skip
    assert table.post("/imports", log).status_code == 201
    refresh(app.extensions["schocken"].store.repository())  # the refresher catches up
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_port}"
        out = tmp_path / "copy"
        assert (
            main(["dashboard", "build", "--server", url, "--out", str(out)], standalone_mode=False)
            == 0
        )
    finally:
        httpd.shutdown()
        thread.join(5)
        app.extensions["schocken"].store.close()
    assert (out / assets.names()["plotly.js"]).exists() and (
        out / "zur-post" / "2024.html"
    ).exists()


def test_the_server_refuses_a_dashboard_folder_it_did_not_make(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(RuntimeError, match="DASHBOARD_DIR"):
        create_app({"STORAGE": "memory", "DASHBOARD_DIR": str(folder)})
    assert (folder / "notes.txt").read_text() == "keep me"
