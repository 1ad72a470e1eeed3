"""Pure figure builders: statistics rows in, Plotly figures out, as plain dicts.

No I/O and no database here: every builder takes what :class:`dashboard.stats.Statistics`
returns. Labels are German. A figure is the JSON plotly.js draws (``{"data": [traces],
"layout": {...}}``, see https://plotly.com/javascript/reference/), built without
``plotly.graph_objects``: its validators cost a page 250–350 ms the first time a process
renders one, and a page only needs the JSON. The tests check every figure against those
validators instead (``tests/test_dashboard_site.py``). All figures carry :data:`TEMPLATE`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from api.rules import count

from .stats import CATEGORIES, SHORT_NAMES, Categories, Row

#: a figure and one of its traces, as plotly.js reads them
Figure = dict[str, Any]
Trace = dict[str, Any]
#: one colour per player, in order of the player ids (stable across pages)
PALETTE = (
    "#1f6f8b", "#e07a1f", "#3b9b4b", "#c23b3b", "#7d5ba6", "#8c6d3f", "#d264a8", "#6b7b8c",
    "#b5b82b", "#2bb5c4", "#444e86", "#955196",
)  # fmt: skip
ACCENT = "#c23b3b"
LUCKY = "#3b9b4b"
MUTED = "#9aa7b4"
MONTHS = ("Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez")


#: the project's Plotly template, carried by every figure (``layout.template``)
TEMPLATE: dict[str, Any] = {
    "layout": {
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13},
        "colorway": list(PALETTE),
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "title": {"x": 0, "xanchor": "left", "font": {"size": 15}},
        "xaxis": {
            "gridcolor": "#e6e9ee",
            "zerolinecolor": "#c9ced6",
            "automargin": True,
            "fixedrange": True,
        },
        "yaxis": {
            "gridcolor": "#e6e9ee",
            "zerolinecolor": "#c9ced6",
            "automargin": True,
            "fixedrange": True,
        },
        "dragmode": False,
        "legend": {"orientation": "h", "y": -0.15},
        "separators": ",.",
        "hoverlabel": {"font": {"family": "system-ui, sans-serif"}},
    }
}


def _figure(title: str, traces: list[Trace], height: int = 360, **layout: Any) -> Figure:
    return {
        "data": traces,
        "layout": {"template": TEMPLATE, "title": {"text": title}, "height": height, **layout},
    }


def _title(text: str) -> dict[str, Any]:
    """An axis with a title (what Plotly's ``xaxis_title=`` means)."""
    return {"title": {"text": text}}


def player_colors(player_ids: Sequence[int]) -> dict[int, str]:
    """A stable colour per player id (sorted ids take the palette in turn)."""
    return {pid: PALETTE[i % len(PALETTE)] for i, pid in enumerate(sorted(set(player_ids)))}


def plain(name: str) -> str:
    """A player's name as plain text in a chart. Plotly reads a small HTML subset in every text
    (``<a href>``, ``<br>``, ``<span style>``, …) and ``%{…}`` in hover templates; escaped, a
    name like ``<a href="https://ev.il/">Anna</a>`` shows as typed, never as a link or a
    reshaped label (Plotly turns the entities back into the characters when it draws)."""
    return html.escape(name, quote=False).replace("%", "&#37;")


def _bars_height(bars: int) -> int:
    """The height of a chart of horizontal bars: one line per bar, at least 220 px."""
    return max(220, 34 * bars + 80)


def _player_bars(title: str, rows: list[Row], x: list[Any], xaxis_title: str, **bar: Any) -> Figure:
    """One horizontal bar per player (``rows`` from the bottom up), ``bar``: its colours, texts
    and hover."""
    trace = {"type": "bar", "x": x, "y": [plain(r["name"]) for r in rows], "orientation": "h"}
    return _figure(
        title,
        [{**trace, **bar}],
        height=_bars_height(len(rows)),
        xaxis=_title(xaxis_title),
        showlegend=False,
    )


def verlierer(ranking: list[Row]) -> Figure:
    """Verlorene Spiele je Spieler, the Verlierer des Jahres (rank 1) highlighted."""
    rows = list(reversed(ranking))  # horizontal bars: the first rank at the top
    return _player_bars(
        "Verlorene Spiele",
        rows,
        [r["games_lost"] for r in rows],
        "verlorene Spiele",
        marker={"color": [ACCENT if r["rank"] == 1 and r["games_lost"] else MUTED for r in rows]},
        text=[f"{r['games_lost']} von {r['games_played']}" for r in rows],
        textposition="auto",
        customdata=[
            [
                r["share_lost"] * 100,
                count(r["halves_lost"], "Hälfte", "Hälften"),
                count(r["games_lost"], "verlorenes Spiel", "verlorene Spiele"),
            ]
            for r in rows
        ],
        hovertemplate=(
            "%{y}: %{customdata[2]}<br>%{customdata[0]:.1f} % der Spiele, "
            "%{customdata[1]} verloren<extra></extra>"
        ),
    )


def deckel(players: list[Row]) -> Figure:
    """Deckel pro Spiel je Spieler."""
    rows = sorted(players, key=lambda r: r["deckel_per_game"])
    return _player_bars(
        "Deckel pro Spiel",
        rows,
        [round(r["deckel_per_game"], 2) for r in rows],
        "Deckel pro Spiel",
        marker={"color": PALETTE[0]},
        customdata=[[r["deckel"], count(r["games_played"], "Spiel", "Spielen")] for r in rows],
        hovertemplate=(
            "%{y}: %{x:.2f} Deckel pro Spiel<br>%{customdata[0]} Deckel in "
            "%{customdata[1]}<extra></extra>"
        ),
    )


def streaks(players: list[Row]) -> Figure:
    """Längste Serie ohne verlorenes Spiel je Spieler."""
    rows = sorted(players, key=lambda r: r["longest_without_loss"])
    return _player_bars(
        "Längste Serie ohne Niederlage",
        rows,
        [r["longest_without_loss"] for r in rows],
        "Spiele in Folge",
        marker={"color": PALETTE[2]},
        customdata=[count(r["longest_without_loss"], "Spiel", "Spiele") for r in rows],
        hovertemplate="%{y}: %{customdata} in Folge ohne Niederlage<extra></extra>",
    )


def _split_sums(
    title: str, rows: list[Row], field: str, axis: str, hover: str, color: Any
) -> Figure:
    """A bar per player of a sum over the turns split into luck and decisions (``rows``
    ordered from the bottom up), each with its number of such turns."""
    return _player_bars(
        title,
        rows,
        [r[field] for r in rows],
        axis,
        marker={"color": color},
        customdata=[count(r["split"], "Zug", "Zügen") for r in rows],
        hovertemplate=f"%{{y}}: {hover} in %{{customdata}}<extra></extra>",
    )


def luck(rows: list[Row]) -> Figure:
    """Glück je Spieler (api/rules/RULES.md §13): the dice's share of the turns whose every
    throw is known, green above zero, red below; the Glückspilz at the top."""
    ordered = sorted(rows, key=lambda r: (r["luck"], r["name"]))  # bottom up
    colors = [LUCKY if r["luck"] >= 0 else ACCENT for r in ordered]
    return _split_sums("Glück je Spieler", ordered, "luck", "gegen die Erwartung", "%{x:+.2f}",
                       colors)  # fmt: skip


def given_away(rows: list[Row]) -> Figure:
    """Verschenkte Chancen je Spieler: the sum of what the decisions gave away, from the turns
    whose every throw is known (players without such turns are left out)."""
    ordered = sorted((r for r in rows if r["split"]), key=lambda r: (r["given_away"], r["name"]))
    return _split_sums("Verschenkte Chancen", ordered, "given_away", "verschenkte Chancen",
                       "%{x:.2f} verschenkt", PALETTE[1])  # fmt: skip


def categories(cats: Categories) -> Figure:
    """Anteil der Ergebnisse fairer Einzelwürfe gegen die exakte Wahrscheinlichkeit."""
    total = cats["total"]
    n = total["throws"] or 1
    labels = [SHORT_NAMES[c] for c in CATEGORIES]
    observed = {
        "type": "bar",
        "name": f"beobachtet ({total['throws']})",
        "x": labels,
        "y": [100 * total["counts"][c] / n for c in CATEGORIES],
        "customdata": [count(total["counts"][c], "Wurf", "Würfe") for c in CATEGORIES],
        "hovertemplate": "%{x}: %{y:.2f} % (%{customdata})<extra>beobachtet</extra>",
        "marker": {"color": PALETTE[0]},
    }
    expected = {
        "type": "bar",
        "name": "erwartet (exakt)",
        "x": labels,
        "y": [100 * c["probability"] for c in cats["categories"]],
        "customdata": [c["outcomes"] for c in cats["categories"]],
        "hovertemplate": "%{x}: %{y:.2f} % (%{customdata}/216)<extra>erwartet</extra>",
        "marker": {"color": MUTED},
    }
    return _figure(
        "Ein Wurf: beobachtet / erwartet",
        [observed, expected],
        height=380,
        barmode="group",
        xaxis={"tickangle": 0, "tickfont": {"size": 11}},
        yaxis={
            **_title("Anteil in % (log.)"),
            "type": "log",
            "tickvals": [0.1, 0.3, 1, 3, 10, 30, 100],
            "ticktext": ["0,1", "0,3", "1", "3", "10", "30", "100"],
        },
    )


def head_to_head(pairs: list[Row]) -> Figure:
    """Finale-Siege je Paarung: zwei gestapelte Balken, links die Siege des ersten Namens."""
    rows = sorted(pairs, key=lambda p: (p["finals"], p["player_a"]))  # most finals at the top
    labels = [f"{plain(p['player_a'])} – {plain(p['player_b'])}" for p in rows]
    traces = [
        {
            "type": "bar",
            "x": [p[f"wins_{side}"] for p in rows],
            "y": labels,
            "orientation": "h",
            "marker": {"color": color},
            "text": [plain(p[f"player_{side}"]) for p in rows],
            "textposition": "inside",
            "insidetextanchor": "middle",
            "customdata": [count(p["finals"], "Finale", "Finalen") for p in rows],
            "hovertemplate": "%{text}: %{x} von %{customdata} gewonnen<extra></extra>",
        }
        for side, color in (("a", PALETTE[0]), ("b", MUTED))
    ]
    return _figure(
        "Finale: Siege je Paarung",
        traces,
        height=_bars_height(len(rows)),
        barmode="stack",
        showlegend=False,
        xaxis=_title("gewonnene Finale"),
    )


def trend(rows: list[Row], year: int | None, colors: dict[int, str]) -> Figure:
    """Verlorene Spiele pro Monat, gestapelt nach Spieler (ein Jahr: zwölf Monate)."""
    if year is not None:
        months = [f"{year}-{m:02d}" for m in range(1, 13)]
    else:
        months = sorted({r["month"] for r in rows})
    index = {m: i for i, m in enumerate(months)}
    by_player: dict[int, tuple[str, list[int]]] = {}
    for r in rows:
        _, counts = by_player.setdefault(r["player_id"], (plain(r["name"]), [0] * len(months)))
        counts[index[r["month"]]] = r["games_lost"]
    if year is not None:
        x: list[str] = [MONTHS[int(m[5:]) - 1] for m in months]
    else:
        x = [f"{m[5:]}/{m[2:4]}" for m in months]  # 03/24: short enough for a phone
    title = "Verlorene Spiele pro Monat" + ("" if year is not None else " über die Jahre")
    traces = [
        {
            "type": "bar",
            "name": name,
            "x": x,
            "y": counts,
            "marker": {"color": colors.get(pid, MUTED)},
            "hovertemplate": f"{name}: %{{y}} verloren (%{{x}})<extra></extra>",
        }
        for pid, (name, counts) in sorted(by_player.items(), key=lambda kv: kv[1][0])
    ]
    xaxis = {} if year is not None else {"type": "category", "nticks": 12}
    return _figure(
        title,
        traces,
        height=380,
        barmode="stack",
        yaxis=_title("verlorene Spiele"),
        **({"xaxis": xaxis} if xaxis else {}),
    )


def attendance(rows: list[Row]) -> Figure:
    """Anwesenheit: Spiele je Spieler und Jahr, eine Linie je Spieler."""
    years = sorted({r["year"] for r in rows})
    by_player: dict[str, dict[int, Row]] = {}
    for r in rows:
        by_player.setdefault(r["name"], {})[r["year"]] = r
    traces = [
        {
            "type": "scatter",
            "name": plain(name),
            "x": [str(y) for y in years],
            "y": [cells[y]["games_played"] if y in cells else 0 for y in years],
            "mode": "lines+markers",
            "customdata": [
                count(cells[y]["games"], "Spiel", "Spielen") if y in cells else "–" for y in years
            ],
            "hovertemplate": f"{plain(name)} %{{x}}: %{{y}} von %{{customdata}}<extra></extra>",
        }
        for name, cells in sorted(by_player.items())
    ]
    return _figure(
        "Anwesenheit: Spiele pro Jahr",
        traces,
        height=380,
        xaxis={"type": "category"},
        yaxis=_title("Spiele"),
    )
