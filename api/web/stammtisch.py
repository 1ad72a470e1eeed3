"""A Stammtisch's own pages: the overview (running games, players, house rules), the history
of its games, and the form for its name, house rules and visibility."""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from ..domain.stammtische import NAME_MAX, ODDS_SHOWN
from ..http.context import services
from ..rules import OPTION_NAMES, PRESETS, SchockenError, limits, read_number, ruleset_from_config
from ..storage import Stammtisch
from .blueprint import bp
from .forms import (
    FormErrors,
    describe_rules,
    option_fields,
    parse_overrides,
    presets,
    selected_overrides,
)
from .prg import refused, reject, rejected
from .session import logged_in_to_stammtisch

PAGE_SIZE = 20


def stats_url(st: Stammtisch) -> str:
    return str(current_app.config["STATS_URL"].format(slug=st.slug))


@bp.get("/s/<slug>/")
@logged_in_to_stammtisch
def stammtisch(st: Stammtisch) -> ResponseReturnValue:
    svc = services()
    running = svc.games(st, {"page": 1, "page_size": PAGE_SIZE, "status": "running"})
    rules = ruleset_from_config(st.rules)
    return render_template(
        "stammtisch.html",
        st=st,
        running=running["items"],
        players=[p for p in svc.players(st) if not p.retired],
        rules=describe_rules(rules),
        preset=st.rules["preset"],
        stats_url=stats_url(st),
    )


@bp.get("/s/<slug>/spiele")
@logged_in_to_stammtisch
def history(st: Stammtisch) -> ResponseReturnValue:
    page_no = read_number(request.args.get("seite", "1"), limits.PAGE) or 1
    result = services().games(st, {"page": page_no, "page_size": PAGE_SIZE})
    pages = max(1, -(-result["total"] // PAGE_SIZE))
    return render_template(
        "history.html",
        st=st,
        games=result["items"],
        page=page_no,
        pages=pages,
        total=result["total"],
        stats_url=stats_url(st),
    )


def stammtisch_form(errors: FormErrors) -> tuple[dict[str, Any], dict[str, Any]]:
    """Name, preset, overrides and visibility of the Stammtisch form: (entered, service data).

    The rules are checked with the engine here, so that its message appears beside the option
    it names."""
    form = request.form
    name = (form.get("name") or "").strip()
    preset = form.get("preset") or "standard"
    entered = {
        "name": name,
        "slug": (form.get("slug") or "").strip().lower(),
        "preset": preset,
        "public": {"1": True, "0": False}.get(form.get("public") or ""),
        "selected": {k[4:]: v for k, v in form.items() if k.startswith("opt_")},
    }
    if not name:
        errors.add("name", "Bitte einen Namen für den Stammtisch eintragen.")
    elif len(name) > NAME_MAX:
        errors.add("name", f"Der Name ist zu lang (höchstens {NAME_MAX} Zeichen).")
    if entered["public"] is None:
        errors.add("public", "Bitte wählen: öffentlich oder privat.")
    if preset not in PRESETS:
        errors.add("preset", "Bitte eines der Regelwerke wählen.")
    rules = {"preset": preset, "overrides": parse_overrides(form, errors)}
    data: dict[str, Any] = {"name": name, "rules": rules, "private": not entered["public"]}
    if "odds_shown" in form:  # the house-rules page asks; the new Stammtisch starts with "off"
        entered["odds_shown"] = data["odds_shown"] = form["odds_shown"]
        if form["odds_shown"] not in ODDS_SHOWN:
            errors.add(
                "odds_shown", "Bitte wählen: Chancen aus, im Formular oder auch im Fernsehen."
            )
    if not errors:
        try:
            ruleset_from_config(rules)
        except SchockenError as err:
            known = err.field in OPTION_NAMES
            errors.add(f"opt_{err.field}" if known else "rules", err.message)
    return entered, data


def options_open(errors: FormErrors) -> bool:
    """The house-rule options are shown unfolded when one of them is the problem."""
    return any(k.startswith("opt_") or k == "rules" for k in errors.fields)


@bp.route("/s/<slug>/regeln", methods=["GET", "POST"])
@logged_in_to_stammtisch
def edit_rules(st: Stammtisch) -> ResponseReturnValue:
    """Name, house rules and visibility; new rules apply to games started afterwards."""
    if request.method == "POST":
        errors = FormErrors()
        entered, data = stammtisch_form(errors)
        if not errors:
            with refused(errors, "rules"):
                services().update_stammtisch(st, data)
                flash("Gespeichert. Neue Hausregeln gelten ab dem nächsten Spiel.", "ok")
                return redirect(url_for("web.stammtisch", slug=st.slug))
        return reject(url_for("web.edit_rules", slug=st.slug), 422, errors, form=entered)
    status, errors, kept = rejected()
    entered = kept.get("form") or {
        "name": st.name,
        "preset": st.rules["preset"],
        "public": not st.private,
        "odds_shown": st.odds_shown,
        "selected": selected_overrides(st.rules.get("overrides", {})),
    }
    chosen = bool(entered["selected"] and any(entered["selected"].values()))
    return render_template(
        "rules.html",
        st=st,
        form=entered,
        presets=presets(),
        options=option_fields(entered["selected"]),
        options_open=chosen or options_open(errors),
        errors=errors,
    ), status
