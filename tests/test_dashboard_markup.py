"""Player names are plain text in every chart (issue 13, item 3): Plotly reads a small HTML
subset in its texts, so a name like ``<a href="https://ev.il/">Anna</a>`` would otherwise become
a link to an outside site in the public dashboard, and ``<br>`` or ``<span style=…>`` would
reshape labels."""

from __future__ import annotations

import html
import json
import re
from datetime import datetime

import plotly.graph_objects as go
import pytest
from conftest import make_table

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from dashboard import figures, site
from dashboard.readmodel import refresh

NASTY = [
    '<a href="https://ev.il/">Anna</a>',
    "Bert<br>Chef",
    '<span style="font-size:80px">C</span>',
    "Dieter %{x}",
]


@pytest.fixture
def pages(tmp_path, monkeypatch):
    """Every figure of the all-time and year pages of a Stammtisch of NASTY players."""
    drawn = []

    def capture(fig, div_id):
        drawn.append(fig)
        return original(fig, div_id)

    original = site._html  # noqa: SLF001
    monkeypatch.setattr(site, "_html", capture)
    app = create_app({"STORAGE": "memory", "TESTING": True, "DASHBOARD_DIR": str(tmp_path)})
    client = app.test_client()
    table = make_table(client, "Zur Post")
    start = datetime.fromisoformat("2024-05-03T20:00:00+02:00")
    for log in simulate_logs(PRESETS["standard"], 6, players=NASTY, seed=4, start=start):
        assert table.post("/imports", log).status_code == 201
    refresh(app.extensions["schocken"].store.repository())  # the refresher catches up
    html = {
        path: client.get(f"/dashboard/zur-post/{path}").get_data(as_text=True)
        for path in ("index.html", "2024.html")
    }
    return drawn, html


def _texts(fig):
    """Every text Plotly draws from the data of ``fig``'s traces."""
    for trace in fig["data"]:
        for key in ("x", "y", "name", "hovertemplate"):
            value = trace.get(key)
            values = value if isinstance(value, list | tuple) else [value]
            yield from (str(v) for v in values if isinstance(v, str))


def test_names_reach_every_chart_escaped_never_as_markup(pages):
    drawn, _ = pages
    assert len(drawn) >= 10  # both pages' charts
    texts = [t for fig in drawn for t in _texts(fig)]
    joined = "\n".join(texts)
    for raw in ('<a href="https://ev.il/">', "<br>Chef", "<span style", "Dieter %{x}"):
        assert raw not in joined
    assert '&lt;a href="https://ev.il/"&gt;Anna&lt;/a&gt;' in joined
    assert "Bert&lt;br&gt;Chef" in joined and "Dieter &#37;{x}" in joined


def test_every_chart_is_a_figure_plotly_accepts(pages):
    """The figures are plain dicts (dashboard/figures.py): Plotly's own validators, which the
    server no longer runs, refuse any property plotly.js does not know or a value of a wrong
    kind; the page holds exactly that figure as JSON."""
    drawn, html = pages
    kinds = set()
    for fig in drawn:
        checked = go.Figure(fig)  # raises ValueError on an unknown property or a bad value
        kinds.update(trace.type for trace in checked.data)
        assert checked.layout.template.layout.separators == ",."
    assert kinds == {"bar", "scatter"}
    shown = CHART_JSON.findall(html["index.html"] + html["2024.html"])
    assert sorted(_canonical(json.loads(m)) for m in shown) == sorted(map(_canonical, drawn))


CHART_JSON = re.compile(r'<script type="application/json" data-chart="[^"]+">(.*?)</script>')


def _canonical(fig):
    return json.dumps(fig, sort_keys=True)


def test_the_charts_own_markup_stays(pages):
    drawn, _ = pages
    templates = [t for fig in drawn for t in _texts(fig) if "<extra></extra>" in t]
    assert templates and any("<br>" in t for t in templates)


def test_the_pages_tables_show_the_names_as_text(pages):
    _, html = pages
    page = html["2024.html"]
    assert '<a href="https://ev.il/">' not in page
    assert "&lt;a href=&#34;https://ev.il/&#34;&gt;Anna&lt;/a&gt;" in page or (
        "&lt;a href=&quot;https://ev.il/&quot;&gt;Anna&lt;/a&gt;" in page
    )


def test_plain_is_what_plotly_turns_back_into_the_name():
    for name in [*NASTY, "Tom & Jerry", "50 % Glück"]:
        shown = figures.plain(name)
        assert "<" not in shown and "%" not in shown
        assert html.unescape(shown) == name  # Plotly decodes the entities when it draws
