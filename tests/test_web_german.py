# ruff: noqa: F811  (the fixtures imported from the other test module)
"""German for players: no option codes in the help texts, a number and its noun agree."""

from __future__ import annotations

import re

import pytest
from test_web_pages import (  # noqa: F401  (fixtures)
    Browser,
    add_players,
    app,
    create,
    start,
    table,
    text_of,
    turn,
    web,
)

from api.rules import OPTION_HELP, PRESET_HELP
from api.web.forms import OPTION_CHOICES

#: every value code of an option ("throws_then_repeat", "half", "round_loser", …)
CODES = {
    str(value.value if hasattr(value, "value") else value)
    for choices in OPTION_CHOICES.values()
    for value, _label in choices
    if isinstance(getattr(value, "value", value), str)
}


def test_the_help_texts_name_no_option_codes() -> None:
    assert {"throws_then_repeat", "earlier_wins", "half", "round_loser"} <= CODES
    for key, text in {**OPTION_HELP, **PRESET_HELP}.items():
        assert not re.search(r"\([a-z_]+\)", text), (key, text)
        words = set(re.findall(r"[a-z_]+", text))
        assert not words & (CODES - {"deckel"}), (key, words & CODES)


def test_the_stammtisch_form_shows_no_option_codes(web: Browser) -> None:
    page = text_of(web.get("/"))
    for code in ["throws_then_repeat", "(half)", "(round_loser)", "(earlier_wins)", "(total)"]:
        assert code not in page


@pytest.mark.parametrize(
    ("max_throws", "words"), [("1", "bis zu 1 Wurf."), ("3", "bis zu 3 Würfe.")]
)
def test_a_number_of_throws_agrees_with_its_noun(web: Browser, max_throws: str, words: str) -> None:
    slug, _token = create(web, opt_max_throws=max_throws)
    add_players(web, slug)
    game = start(web, slug)
    assert f"Runde 1: Anna legt vor: {words}" in text_of(web.get(game))


def test_the_history_counts_its_games_in_german(web: Browser, table: tuple[str, str]) -> None:
    slug, _game = table
    assert "1 Spiel " in text_of(web.get(f"/s/{slug}/spiele")) + " "
    start(web, slug)
    assert "2 Spiele" in text_of(web.get(f"/s/{slug}/spiele"))
