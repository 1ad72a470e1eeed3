""" "Unsere Regeln": ``/s/<slug>/unsere-regeln``, a Stammtisch's house rules in German prose.

The text is the engine's (:func:`api.rules.prose.describe`), from the Stammtisch's ruleset
(its preset and every override); ``?spiel=<id>`` states the rules of one of its games instead,
which keeps the ruleset it was started with. A game number that is not one of the Stammtisch's
games, not a plain number (``²``) or too big for any store is a German 404, never a 500.

Who may read it: everybody when the Stammtisch is public (like its dashboard and TV), else a
browser logged in to it; others are sent to the login, as by every page of the form.
"""

from __future__ import annotations

import re

from flask import abort, current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from markupsafe import Markup, escape

from ..http.context import services
from ..rules import house_rules_prose as describe
from ..rules import limits, read_number, ruleset_from_config
from .blueprint import bp
from .session import may_write

#: dice in the engine's notation ("1-2-4", "4-6"): kept on one line
DICE = re.compile(r"(?<![\d-])[1-6](?:-[1-6]){1,2}(?![\d-])")


@bp.app_template_filter("dice")
def _dice(text: str) -> Markup:
    """A sentence with its dice ("1-1-4") kept on one line: a phone must not break one."""
    return Markup(DICE.sub(lambda m: f'<span class="dice">{m.group(0)}</span>', str(escape(text))))


@bp.get("/s/<slug>/unsere-regeln")
def unsere_regeln(slug: str) -> ResponseReturnValue:
    st = services().stammtisch(slug)  # unknown: 404
    member = may_write(st)
    if st.private and not member:
        flash("Bitte mit dem Schlüssel des Stammtischs anmelden.", "info")
        return redirect(url_for("web.home", stammtisch=slug))
    wanted = request.args.get("spiel")
    number = game_id = None
    if wanted is None:
        rules = ruleset_from_config(st.rules)
    else:
        game_id = read_number(wanted, limits.ID)
        if game_id is None:
            abort(404)
        view = services().game(st, game_id)  # not a game of this Stammtisch: 404
        rules, number = view.runtime.game.rules, view.record.number
    return render_template(
        "unsere_regeln.html",
        st=st,
        member=member,
        sections=describe(rules),
        game_id=game_id,
        number=number,
        current=url_for("web.unsere_regeln", slug=st.slug),
        stats_url=current_app.config["STATS_URL"].format(slug=st.slug),
    )
