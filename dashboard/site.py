"""The static site: an index of Stammtische, per Stammtisch an all-time page and one per year.

``build_site(source, out)`` reads the statistics (the read model, :mod:`dashboard.readmodel`,
or :class:`~dashboard.stats.Statistics` on a DuckDB connection), turns them into
figures (:mod:`dashboard.figures`) and renders the Jinja templates of ``dashboard/templates``.
The output is plain files that open from ``file://``:

    out/index.html               the Stammtische
    out/plotly.<hash>.js         plotly.js (basic bundle), shared by every page (no CDN)
    out/style.<hash>.css         (both with a .gz beside them: see :mod:`dashboard.assets`)
    out/<slug>/index.html        all time ("Ewige Tabelle")
    out/<slug>/<year>.html       one calendar year: who is Verlierer des Jahres?

Private Stammtische are left out unless asked for. Files are replaced atomically, so a server
can serve the folder while it is rebuilt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from api.jinja_cache import compiled_templates
from api.rules import Half, count

from . import assets, figures
from .stats import (
    CATEGORIES,
    CATEGORY_NAMES,
    MIN_GAMES_SHARE,
    Connection,
    Period,
    Row,
    Statistics,
    Verlierer,
)

Progress = Callable[[int, int, str], None]


@runtime_checkable
class Source(Protocol):
    """Where the site's numbers come from: :class:`~dashboard.readmodel.ReadModel` or
    :class:`~dashboard.stats.Statistics`."""

    def stammtische(self, include_private: bool = False) -> list[Row]: ...

    def years(self, stammtisch_id: int) -> list[Row]: ...

    def collect(self, stammtisch_id: int, year: int | None) -> Period: ...

    def overview(self, stammtisch_id: int, year: int | None) -> Row: ...

    def verlierer(
        self, stammtisch_id: int, year: int | None, games: int | None = None
    ) -> Verlierer: ...

    def attendance(self, stammtisch_id: int, year: int | None) -> list[Row]: ...


@dataclass(frozen=True, slots=True)
class BuildResult:
    stammtische: int
    pages: int
    out: Path


def _num(value: float | None, digits: int = 0) -> str:
    """German number: 1.234,5."""
    if value is None:
        return "–"
    text = f"{value:,.{digits}f}"
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


def _signed(value: float, digits: int = 2) -> str:
    """A German number with its sign, the minus as a minus sign: +7,75 · −2,16 · 0,00."""
    text = _num(abs(value), digits)
    if text.strip("0,.") == "":
        return text
    return ("+" if value > 0 else "\u2212") + text


def _pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{_num(100 * value, digits)} %"


def _date(value: datetime | str | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.strftime("%d.%m.%Y")


def _years(first: int | None, last: int | None) -> str:
    """The years a Stammtisch played: ``2024–2026``, or ``2026`` for one year."""
    if first is None or last is None:
        return ""
    return str(first) if first == last else f"{first}–{last}"


#: the parts of a game as the fact tables name them → the engine's German captions
HALF_NAMES = {half.value: half.caption for half in Half}


def _half(value: str) -> str:
    return HALF_NAMES.get(value, value)


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("dashboard", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=compiled_templates("dashboard"),
    )
    env.filters.update(
        num=_num, signed=_signed, pct=_pct, date=_date, half=_half, count=count, years=_years
    )
    env.globals["assets"] = assets.names()
    return env


def _write(path: Path, text: str) -> None:
    """Write a file atomically (a reader sees the old or the new file, never half of one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_assets(out: Path) -> None:
    """plotly.js and the stylesheet under their hashed names (see :mod:`dashboard.assets`)."""
    assets.write(out)


def _html(fig: figures.Figure, div_id: str) -> Markup:
    """A chart: its place and its figure as JSON data, drawn by ``dashboard.js`` (no inline
    code). ``<`` is escaped in the JSON, so nothing in it can end the script element; a number
    that is not one (NaN) is refused rather than written as JSON no browser reads."""
    text = json.dumps(fig, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    data = text.replace("<", "\\u003c")
    return Markup(
        f'<div id="{div_id}"></div>\n'
        f'<script type="application/json" data-chart="{div_id}">{data}</script>'
    )


def _charts(stats: Period, year: int | None, colors: dict[int, str]) -> dict[str, Markup]:
    """The figures of a period page as HTML (none for a period without games)."""
    if not stats["overview"]["games"]:
        return {}
    players = stats["players"]
    charts = {
        "verlierer": _html(figures.verlierer(stats["verlierer"]["ranking"]), "chart-verlierer"),
        "deckel": _html(figures.deckel(players), "chart-deckel"),
        "streaks": _html(figures.streaks(players), "chart-serien"),
        "categories": _html(figures.categories(stats["categories"]), "chart-wuerfe"),
        "trend": _html(figures.trend(stats["trend"], year, colors), "chart-trend"),
    }
    if stats["luck"]:
        charts["luck"] = _html(figures.luck(stats["luck"]), "chart-glueck")
    if any(r["split"] for r in stats["luck"]):
        charts["given_away"] = _html(figures.given_away(stats["luck"]), "chart-verschenkt")
    if stats["head_to_head"]:
        charts["head_to_head"] = _html(figures.head_to_head(stats["head_to_head"]), "chart-finale")
    if year is None:
        charts["attendance"] = _html(figures.attendance(stats["attendance"]), "chart-anwesenheit")
    return charts


def page_context(
    stats: Period, stammtisch: Row, year: int | None, colors: dict[int, str]
) -> dict[str, Any]:
    """Everything a period page shows: the statistics, the figures as HTML, labels."""
    charts = _charts(stats, year, colors)
    months = sorted({r["month"] for r in stats["trend"]})
    trend_names = sorted({(r["name"], r["player_id"]) for r in stats["trend"]})
    trend_cells = {(r["month"], r["player_id"]): r["games_lost"] for r in stats["trend"]}
    attendance_years = sorted({(r["year"], r["games"]) for r in stats["attendance"]})
    attendance_players = sorted({(r["name"], r["player_id"]) for r in stats["attendance"]})
    luck = stats["luck"]
    split = [r for r in luck if r["split"]]
    return {
        "luck": {
            # the list is luckiest first: the Glückspilz is its first, the Pechvogel its last
            "gluckspilz": luck[0] if luck and luck[0]["luck"] > 0 else None,
            "pechvogel": luck[-1] if luck and luck[-1]["luck"] < 0 else None,
            "most_given": max(split, key=lambda r: r["given_away"]) if split else None,
        },
        "attendance_table": {
            "years": attendance_years,
            "players": attendance_players,
            "cells": {(r["year"], r["player_id"]): r["games_played"] for r in stats["attendance"]},
        },
        "stammtisch": stammtisch,
        "year": year,
        "stats": stats,
        "charts": charts,
        "categories": [(c, CATEGORY_NAMES[c]) for c in CATEGORIES],
        "min_games_share": MIN_GAMES_SHARE,
        "trend_table": {
            "months": months,
            "players": trend_names,
            "cells": trend_cells,
        },
    }


def _select(
    stats: Source,
    out: Path,
    slugs: Iterable[str] | None,
    include_private: bool,
) -> tuple[list[Row], list[Row]]:
    """The Stammtische to build now and those the index lists (see :func:`build_site`)."""
    wanted = set(slugs) if slugs is not None else None
    everything = stats.stammtische(include_private=include_private or wanted is not None)
    chosen = [s for s in everything if wanted is None or s["slug"] in wanted]
    if wanted is not None:
        unknown = wanted - {s["slug"] for s in chosen}
        if unknown:
            raise KeyError(f"Kein Stammtisch {', '.join(sorted(unknown))}")
    visible = (
        stats.stammtische(include_private=include_private) if wanted is not None else everything
    )
    built_now = {s["slug"] for s in chosen}
    listed = [
        s
        for s in [*visible, *(c for c in chosen if c not in visible)]
        if s["slug"] in built_now or (out / s["slug"] / "index.html").exists()
    ]
    return chosen, listed


#: a Stammtisch to build: its row, its years (rows of the query ``years``), the periods to write
_Plan = list[tuple[Row, list[Row], list[int | None]]]


def _plan(stats: Source, chosen: list[Row]) -> _Plan:
    plan: _Plan = []
    for st in chosen:
        years = stats.years(st["id"])
        plan.append((st, years, [None, *(r["year"] for r in years)]))
    return plan


def render_period(stats: Source, st: Row, years: list[Row], year: int | None, **links: Any) -> str:
    """The HTML of one period page of the Stammtisch ``st``; ``links``: see :func:`links`."""
    # colours follow the all-time players, so a player keeps their colour on every page
    colors = figures.player_colors([r["player_id"] for r in stats.attendance(st["id"], None)])
    context = page_context(stats.collect(st["id"], year), st, year, colors)
    context["years"] = years
    return environment().get_template("period.html").render(root="../", **context, **links)


def _write_pages(stats: Source, out: Path, plan: _Plan, progress: Progress | None) -> int:
    """Write the period pages of the plan; returns how many."""
    total = sum(len(todo) for _, _, todo in plan)
    done = 0
    for st, years, todo in plan:
        for year in todo:
            name = "index.html" if year is None else f"{year}.html"
            _write(out / st["slug"] / name, render_period(stats, st, years, year))
            done += 1
            if progress:
                progress(done, total, f"{st['slug']}/{name}")
    return done


def links(listed: list[Row], demo: str = "demo") -> dict[str, Any]:
    """What the pages of a served dashboard link to besides themselves (a built folder has no
    server around it): the form and the docs one level up (a period page also the form's
    "Unsere Regeln" of its Stammtisch), the demo Stammtisch if listed."""
    return {"served": True, "demo": demo if any(s["slug"] == demo for s in listed) else None}


def render_index(stats: Source, listed: list[Row], **links: Any) -> str:
    """The index: the listed Stammtische with the Verlierer of their last year; ``links``:
    see :func:`links`."""
    summaries: dict[int, dict[str, Any]] = {}
    for st in listed:
        if st["last_year"] is not None:
            losers = stats.verlierer(st["id"], st["last_year"])["verlierer"]
            summaries[st["id"]] = {"year": st["last_year"], "verlierer": losers}
    return (
        environment()
        .get_template("index.html")
        .render(root="", stammtische=listed, latest=summaries, built=datetime.now(), **links)
    )


def build_site(
    source: Source | Connection,
    out: str | Path,
    *,
    slugs: Iterable[str] | None = None,
    include_private: bool = False,
    progress: Progress | None = None,
) -> BuildResult:
    """Write the site for every (public) Stammtisch, or only those of ``slugs``: per
    Stammtisch its all-time page and one page per year. The index is always rewritten; it
    lists the Stammtische built now or before."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stats = source if isinstance(source, Source) else Statistics(source)
    chosen, listed = _select(stats, out, slugs, include_private)
    write_assets(out)
    done = _write_pages(stats, out, _plan(stats, chosen), progress)
    _write(out / "index.html", render_index(stats, listed))
    return BuildResult(len(chosen), done + 1, out)
