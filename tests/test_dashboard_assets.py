"""The dashboard on a phone, without a browser: hashed and compressed assets, caching, the
page's structure (summary, collapsible sections, folding tables), links and German counts."""

from __future__ import annotations

import gzip
import hashlib
import re
from datetime import datetime
from pathlib import Path

import brotli
import pytest
from conftest import make_table
from dashboard_data import cursor, make_store
from plotly.offline import get_plotlyjs_version

from api.app import create_app
from api.rules import PRESETS, count
from api.rules.simulate import simulate_logs
from dashboard import assets
from dashboard.readmodel import refresh
from dashboard.site import build_site

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "dashboard" / "templates"


def test_the_vendored_plotly_js_is_the_version_plotly_py_writes_for_and_carries_its_licence():
    vendor = ROOT / "dashboard" / "static" / assets.VENDOR
    assert assets.plotly_version() == get_plotlyjs_version()
    assert (
        "MIT" in (vendor / "LICENSE").read_text() and "Plotly" in (vendor / "LICENSE").read_text()
    )
    head = (vendor / "plotly-basic.min.js").read_text(encoding="utf-8")[:200]
    assert f"plotly.js (basic - minified) v{get_plotlyjs_version()}" in head


def test_asset_names_carry_their_content_hash_and_the_compressed_ones_are_the_same_file():
    for logical, asset in assets.assets().items():
        stem, _, ext = logical.rpartition(".")
        digest = hashlib.sha256(asset.body).hexdigest()[:12]
        assert asset.name == f"{stem}.{digest}.{ext}"
        assert gzip.decompress(asset.encoded("gzip")) == asset.body
        assert brotli.decompress(asset.encoded("br")) == asset.body
    plotly = assets.assets()["plotly.js"]
    assert len(plotly.body) < 1_300_000  # the basic bundle
    assert len(plotly.encoded("br")) < 340_000 < len(plotly.encoded("gzip")) < 420_000


def test_writing_the_assets_replaces_older_versions_and_keeps_other_files(tmp_path):
    (tmp_path / "plotly.0123456789ab.js").write_text("old")
    (tmp_path / "plotly.0123456789ab.js.gz").write_text("old")
    (tmp_path / "style.0123456789ab.css.br").write_text("old")
    (tmp_path / "plotly.min.js").write_text("unhashed, of an earlier version")
    (tmp_path / "index.html").write_text("a page")
    assets.write(tmp_path)
    assets.write(tmp_path)  # again: nothing changes
    names = assets.names()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["index.html", *(n + end for n in names.values() for end in ("", ".br", ".gz"))]
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server with one Stammtisch of one finished game (2024) and a demo without games."""
    tmp = tmp_path_factory.mktemp("served")
    app = create_app({"STORAGE": "sqlite", "DATABASE": str(tmp / "s.sqlite3"),
                      "DASHBOARD_DIR": str(tmp / "site")})  # fmt: skip
    client = app.test_client()
    table = make_table(client, "Zur Post")
    log = next(simulate_logs(PRESETS["standard"], 1, players=["Anna", "Bert", "Clara"], seed=5,
                             start=datetime.fromisoformat("2024-05-03T20:00:00+02:00")))  # fmt: skip
    assert table.post("/imports", log).status_code == 201
    refresh(app.extensions["schocken"].store.repository())  # the refresher catches up
    yield client
    app.extensions["schocken"].store.close()


@pytest.mark.parametrize("logical", ["plotly.js", "style.css", "dashboard.js"])
def test_assets_are_sent_compressed_and_kept_for_a_year(served, logical):
    asset = assets.assets()[logical]
    for accepted, encoding, decompress in (
        ("gzip, deflate, br, zstd", "br", brotli.decompress),
        ("gzip", "gzip", gzip.decompress),
        ("br;q=0, gzip", "gzip", gzip.decompress),
    ):
        r = served.get(f"/dashboard/{asset.name}", headers={"Accept-Encoding": accepted})
        assert r.status_code == 200 and r.headers["Content-Encoding"] == encoding
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert "Accept-Encoding" in r.headers["Vary"]
        assert decompress(r.get_data()) == asset.body
        r.close()
    plain = served.get(f"/dashboard/{asset.name}", headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers and plain.get_data() == asset.body
    plain.close()


def test_an_unknown_or_unhashed_asset_is_not_found(served):
    assert served.get("/dashboard/plotly.min.js").status_code == 404
    assert served.get("/dashboard/plotly.0123456789ab.js").status_code == 404


def test_pages_are_compressed_and_revalidated_with_an_etag(served):
    r = served.get("/dashboard/zur-post/2024.html", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["Content-Encoding"] == "gzip"
    assert r.headers["Cache-Control"] == "no-cache" and r.headers["ETag"].startswith('W/"')
    html = gzip.decompress(r.get_data()).decode()
    assert len(r.get_data()) < len(html) / 3
    again = served.get(
        "/dashboard/zur-post/2024.html",
        headers={"Accept-Encoding": "gzip", "If-None-Match": r.headers["ETag"]},
    )
    assert again.status_code == 304 and again.get_data() == b""
    for name in assets.names().values():
        assert f'"../{name}"' in html


def test_a_year_page_opens_with_a_summary_and_folds_its_long_sections(served):
    html = served.get("/dashboard/zur-post/2024.html").get_data(as_text=True)
    sections = re.findall(r'<details class="block" id="([\w-]+)"( open)?>', html)
    assert sections == [("rangliste", " open"), ("spieler", ""), ("wuerfe", ""),
                        ("glueck", ""), ("finale", ""), ("verlauf", ""),
                        ("rekorde", "")]  # fmt: skip
    summary = html.index('id="kurz"')
    assert summary < html.index('id="rangliste"')
    for card in ("verlierer-des-jahres", "sicherster-spieler", "auf-einen-blick"):
        assert summary < html.index(f'id="{card}"') < html.index('id="rangliste"')
    # the widest tables become cards on a phone: every cell but the first says what it is
    for table in re.findall(r'<table class="numbers[^"]*\bstack\b.*?</table>', html, re.S):
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S):
            cells = re.findall(r"<td([^>]*)>", row)
            assert all("data-label=" in c for c in cells[1:]), row
    assert 'displayModeBar: "hover"' in assets.assets()["dashboard.js"].body.decode()
    assert ".modebar-container { display: none; }" in assets.assets()["style.css"].body.decode()


def test_a_page_carries_its_figures_as_data_and_no_inline_code(served):
    """The strict Content-Security-Policy (no inline scripts) holds on the dashboard too:
    ``dashboard.js`` draws the figures from JSON that nothing in it can break out of."""
    r = served.get("/dashboard/zur-post/2024.html")
    html = r.get_data(as_text=True)
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert [attrs for attrs, body in scripts if body.strip()] == [
        ' type="application/json" data-chart="chart-verlierer"',
        ' type="application/json" data-chart="chart-deckel"',
        ' type="application/json" data-chart="chart-serien"',
        ' type="application/json" data-chart="chart-wuerfe"',
        ' type="application/json" data-chart="chart-glueck"',
        ' type="application/json" data-chart="chart-verschenkt"',
        ' type="application/json" data-chart="chart-finale"',
        ' type="application/json" data-chart="chart-trend"',
    ]
    assert all("<" not in body for _, body in scripts)
    policy = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline' " not in policy.split("style-src")[0]


def test_the_served_pages_link_to_the_form_the_docs_and_the_demo(served):
    page = served.get("/dashboard/zur-post/2024.html").get_data(as_text=True)
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', page.split("<footer>")[1])
    assert links == [
        ("../../", "Deckelzähler"),
        ("../../s/zur-post/unsere-regeln", "Unsere Regeln"),
        ("../index.html", "Statistik"),
        ("../../docs", "API-Doku"),
    ]  # fmt: skip (no demo Stammtisch here)
    rules = served.get("/s/zur-post/unsere-regeln")  # public, as the dashboard is
    assert rules.status_code == 200 and "Unsere Regeln" in rules.get_data(as_text=True)
    index = served.get("/dashboard/").get_data(as_text=True)
    assert '<a href="../">Deckelzähler</a>' in index and '<a href="../docs">API-Doku</a>' in index
    form = served.get("/").get_data(as_text=True)
    assert 'href="/dashboard/"' in form and 'href="/docs"' in form
    docs = served.get("/openapi.json").json["info"]["description"]  # what /docs shows first
    for link in ("[Deckelzähler](/)", "(/dashboard/)", "(/dashboard/demo/)"):
        assert link in docs


def test_a_built_folder_links_nowhere_outside_itself(tmp_path):
    store = make_store()
    try:
        build_site(cursor(store), tmp_path)
    finally:
        store.close()
    page = (tmp_path / "zur-post" / "2024.html").read_text(encoding="utf-8")
    assert "Deckelzähler</a>" not in page and "docs" not in page
    assert "unsere-regeln" not in page and "Unsere Regeln" not in page


def test_counts_say_one_in_the_singular(served):
    page = served.get("/dashboard/zur-post/2024.html").get_data(as_text=True)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.split("<main>")[1]))
    lead = re.sub(r"\s+", " ", page.split('<p class="lead">')[1].split("</p>")[0])
    assert "1 beendetes Spiel vom" in lead and "3 Spieler" in lead and " Züge, " in lead
    assert "Würfe" not in lead  # the overview counts turns: Züge
    assert "Mindestens 1 Spiel (ein Viertel von 1 Spiel des Zeitraums, aufgerundet)" in text
    assert re.search(r" (1 Blattschuss|(0|[2-9]|\d\d+) Blattschüsse)\.$", lead.strip())
    index = served.get("/dashboard/").get_data(as_text=True)
    assert "1 beendetes Spiel, 2024<" in index and "2024–2024" not in index


def test_count_groups_thousands_and_uses_the_plural_for_all_but_one():
    assert count(1, "Zug", "Züge") == "1 Zug"
    assert [count(n, "Hälfte", "Hälften") for n in (0, 2)] == ["0 Hälften", "2 Hälften"]
    assert count(44086, "Zug", "Züge") == "44.086 Züge"


def test_no_template_writes_a_number_before_a_plural_noun_itself():
    """Counts go through the ``count`` filter (``api.rules.count``), never "{{ n }} Spiele"."""
    nouns = "Spiele|Spielen|Spiel|Hälften|Würfe|Züge|Runden|Monate|Blattschuss|Blattschüsse|Finale"
    copy = re.compile(rf"\}}\}}\s+(beendete\s+)?({nouns})\b")
    found = {p.name: copy.findall(p.read_text()) for p in TEMPLATES.glob("*.html")}
    assert {name: hits for name, hits in found.items() if hits} == {}
