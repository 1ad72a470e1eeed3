"""Throw by throw in the pub form ("Wurf für Wurf") and "Chancen" (issue 27): one throw and its
decision recorded as the API records it (entry kind "throw"), the open turn shown, bad input
refused in German with nothing written, and the odds shown only when the Stammtisch turns
them on."""

from __future__ import annotations

import re
from typing import Any

import pytest
import test_web_pages as pages
from flask import Flask
from test_web_pages import Browser, errors_of, seq_of, start, text_of, turn

from api.http.context import services
from api.rules import PRESETS, Game, parse_event
from api.rules.odds import Decision
from api.table.chancen import advice, current_chance, decision_words, percent, round_target

# the fixtures of the form's tests: an app on each store, a browser, a game of four players
app, web, table = pages.app, pages.web, pages.table


def throw(web: Browser, game: str, dice: str, decision: str, aside: str = "", **extra: Any) -> Any:
    """One throw through the form: ``dice`` the pips in the cup, ``aside`` the positions ticked
    ("13": the first and the third die)."""
    page = web.get(game)
    player = re.search(r'id="wurf-fuer-wurf".*?name="player" value="([^"]*)"', page.text, re.S)
    data = {"seq": seq_of(page), "player": player.group(1), "decision": decision, **extra}
    data.update({f"w{i}": d for i, d in enumerate(dice, start=1)})
    data.update({f"x{i}": "1" for i in aside})
    r = web.post(game + "/wurf", data)
    return web.follow(r) if r.status_code == 302 else r  # recorded: back to the game


def log_of(app: Flask, slug: str, game: str) -> list[tuple[str, Any]]:
    game_id = int(game.rstrip("/").rsplit("/", 1)[1])
    with app.app_context():
        svc = services()
        rt = svc.game(svc.stammtisch(slug), game_id).runtime
        return [(e.kind, e.body) for e in rt.entries]


def odds_on(app: Flask, slug: str, where: str = "form") -> None:
    with app.app_context():
        svc = services()
        svc.update_stammtisch(svc.stammtisch(slug), {"odds_shown": where})


def card(r: Any) -> str:
    found = re.search(r'<details class="card throw-by-throw".*?</details>', r.text, re.S)
    assert found, "no throw-by-throw card"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(0)).split())


# ----------------------------------------------------------------------------- throw by throw


def test_a_turn_is_entered_throw_by_throw_and_recorded_as_the_api_records_it(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    page = web.get(game)
    assert "Wurf 1 von höchstens 3 Würfe" in card(page)
    assert len(set(re.findall(r'name="w\d"', page.text))) == 3  # three dice in the cup

    page = throw(web, game, "141", "again", aside="13")  # both ones out, the 4 again
    assert "Anna: Wurf 1 – 1-1-4, legt 1-1 heraus." in text_of(page)
    assert "Wurf 2 von höchstens 3 Würfe" in card(page) and "rausgelegt: 1-1" in card(page)
    assert len(set(re.findall(r'name="w\d"', page.text))) == 1  # one die left in the cup
    assert "Anna hat einen offenen Zug (Wurf für Wurf)" in text_of(page)
    assert '<details class="card throw-by-throw" id="wurf-fuer-wurf" open>' in page.text

    page = throw(web, game, "5", "stop")
    assert "Anna: Schock 5 (1-1-5, 2 Würfe)." in text_of(page)
    assert log_of(app, slug, game) == [
        ("throw", {"player": "Anna", "dice": [1, 4, 1], "aside": [1, 1], "sixes": 0}),
        ("throw", {"player": "Anna", "dice": [5], "stop": True}),
    ]
    assert "Am Zug: Bert" in text_of(page)
    assert "Wurf 1 von höchstens 2 Würfe" in card(page)  # Anna's two throws are the limit


def test_the_last_allowed_throw_only_stops_and_sixes_are_offered_where_allowed(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    turn(web, game, "Anna", "115", "1")  # the limit is one throw
    page = web.get(game)
    assert "Wurf 1 von höchstens 1 Wurf" in card(page)
    assert 'value="again"' not in card_html(page) and 'name="x1"' not in page.text
    assert 'value="sixes' not in page.text  # standard: no turning sixes
    with app.app_context():
        svc = services()
        st = svc.stammtisch(slug)
        svc.update_stammtisch(
            st, {"rules": {"preset": "standard", "overrides": {"sixes_turning": True}}}
        )
    other = start(web, slug)
    page = web.get(other)
    assert re.findall(r'name="decision" value="(sixes\d)"', page.text) == ["sixes1", "sixes2"]
    page = throw(web, other, "663", "sixes1")
    assert "Anna: Wurf 1 – 3-6-6, dreht Sechsen um." in text_of(page)
    assert "rausgelegt: 1" in card(page)


def card_html(r: Any) -> str:
    found = re.search(r'<details class="card throw-by-throw".*?</details>', r.text, re.S)
    return found.group(0) if found else ""


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"w1": "1", "w2": "4", "decision": "stop"}, "Bitte alle 3 Würfel des Wurfs wählen (es fehlt Würfel 3)."),
        ({"w1": "1", "w2": "4", "w3": "7", "decision": "stop"}, "es fehlt Würfel 3"),
        ({"w1": "1", "w2": "4", "w3": "1"}, "Bitte wählen: stehen lassen oder rauslegen und nochmal werfen."),
        ({"w1": "1", "w2": "4", "w3": "1", "decision": "again", "x1": "1", "x2": "1", "x3": "1"}, None),
    ],
)  # fmt: skip
def test_a_bad_throw_is_refused_in_german_keeps_the_input_and_writes_nothing(
    web: Browser, app: Flask, table: tuple[str, str], fields: dict[str, str], message: str | None
) -> None:
    slug, game = table
    page = web.get(game)
    r = web.post(game + "/wurf", {"seq": seq_of(page), "player": "Anna", **fields})
    assert web.posted.status_code == 303 and r.status_code in (409, 422)
    shown = errors_of(r, "throw")
    assert shown and (message is None or message in shown[0]), shown
    assert log_of(app, slug, game) == []
    if fields.get("w2") == "4":
        assert re.search(r'name="w2" value="4" checked', r.text)  # the input is kept


def test_a_throw_of_an_older_state_records_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    page = web.get(game)
    turn(web, game, "Anna", "115", "1")
    data = {"seq": seq_of(page), "player": "Bert", "w1": "2", "w2": "2", "w3": "2"}
    r = web.post(game + "/wurf", {**data, "decision": "stop"})
    assert r.status_code == 409
    assert "Inzwischen wurde in diesem Spiel etwas eingetragen" in errors_of(r, "throw")[0]
    assert len(log_of(app, slug, game)) == 1


# ----------------------------------------------------------------------------- Chancen


def test_chancen_are_not_shown_unless_the_stammtisch_turns_them_on(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    turn(web, game, "Anna", "115", "2")
    page = throw(web, game, "141", "odds")
    assert 'id="chancen"' not in page.text and "Chancen zeigen" not in page.text
    assert "%" not in card(page)


def test_chancen_show_the_best_decisions_in_german_and_write_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    odds_on(app, slug)
    page = web.get(game)
    assert "Erster Zug der Runde: noch nichts zu schlagen." in card(page)
    assert "Chancen zeigen" not in card(page)
    turn(web, game, "Anna", "115", "2")  # Schock 5 in two throws: Bert has to beat it
    page = web.get(game)
    assert "Chancen zeigen" in card(page)
    page = throw(web, game, "14", "odds")
    assert "Erst alle Würfel des Wurfs wählen" in card(page)
    page = throw(web, game, "141", "odds")
    assert page.status_code == 200 and web.posted.status_code == 303
    lines = re.findall(r"<li>([^<]*%[^<]*)</li>", card_html(page))
    assert lines == [
        "Beide Einsen rauslegen, noch einmal: 33 % – schlechter als Anna wird man nicht",
        "Eine Eins rauslegen, noch einmal: 8 %",
        "Alle drei noch einmal: 2 %",
    ]
    assert re.search(r'name="w2" value="4" checked', page.text)  # the dice stay chosen
    assert len(log_of(app, slug, game)) == 1  # nothing written
    page = throw(web, game, "141", "again", aside="13")
    page = throw(web, game, "6", "odds")
    assert "Stehen lassen: 100 % – schlechter als Anna wird man nicht" in card(page)


# ----------------------------------------------------------------------------- the pure part


def standard_round() -> Game:
    game = Game.start(PRESETS["standard"], ["Anna", "Bert", "Clara"], "Anna")
    game.apply(parse_event({"player": "Anna", "dice": [1, 1, 5], "throws": 2}, game.rules))
    return game


def test_the_target_is_the_rounds_worst_result_so_far_the_earliest_of_equal_ones() -> None:
    game = standard_round()
    assert round_target(game)[0] == "Anna"
    game.apply(parse_event({"player": "Bert", "dice": [2, 3, 5], "throws": 2}, game.rules))
    player, target = round_target(game)
    assert (player, sorted(target.dice), target.throws) == ("Bert", [2, 3, 5], 2)
    fresh = Game.start(PRESETS["standard"], ["Anna", "Bert"], "Anna")
    assert round_target(fresh) is None
    assert advice(fresh, None, (1, 1, 4)).note == "Erster Zug der Runde: noch nichts zu schlagen."


def test_decisions_and_percentages_read_as_the_table_says_them() -> None:
    assert decision_words(Decision(True, (), 0, 0, 0), (1, 1, 4)) == "Stehen lassen"
    assert decision_words(Decision(False, (1, 1), 0, 0, 0), (1, 1, 4)) == (
        "Beide Einsen rauslegen, noch einmal"
    )
    assert decision_words(Decision(False, (1,), 0, 0, 0), (1, 5, 6)) == (
        "Die Eins rauslegen, noch einmal"
    )
    assert decision_words(Decision(False, (1,), 1, 0, 0), (1, 6, 6)) == (
        "Zwei Sechsen zu einer Eins umdrehen, die Eins rauslegen, noch einmal"
    )
    assert decision_words(Decision(False, (), 0, 0, 0), (2, 4)) == "Beide noch einmal"
    assert [percent(p) for p in (0, 0.001, 1 / 3, 0.999, 1)] == [
        "0 %", "unter 1 %", "33 %", "über 99 %", "100 %",
    ]  # fmt: skip


def test_the_chance_of_an_open_turn_is_that_of_the_decision_taken() -> None:
    from api.rules import RecordThrow
    from api.rules.throws import record_throw

    game = standard_round()
    assert current_chance(game, None) is None
    open_turn, _ = record_throw(game, None, RecordThrow("Bert", (1, 4, 1), aside=(1, 1)))
    player, chance = current_chance(game, open_turn)
    assert player == "Bert" and chance == pytest.approx(2 / 6, abs=1e-12)


# ----------------------------------------------------------------------------- the TV


def test_the_tv_shows_the_chance_of_an_open_turn_only_with_form_and_tv(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    turn(web, game, "Anna", "115", "2")
    throw(web, game, "141", "again", aside="13")  # Bert: both ones out, one die again
    for where, shown in (("off", False), ("form", False), ("form_and_tv", True)):
        odds_on(app, slug, where)
        for url in (f"/tv/{slug}", f"/tv/{slug}/tafel"):
            page = web.get(url)
            assert page.status_code == 200
            assert ("Berts Chance: 33 %" in text_of(page)) is shown, (where, url)
            assert ('id="tv-chance"' in page.text) is shown
    throw(web, game, "5", "stop")  # the turn ends: no chance to show
    assert 'id="tv-chance"' not in web.get(f"/tv/{slug}").text


def test_a_name_ending_in_an_s_sound_takes_an_apostrophe() -> None:
    from api.table.chancen import genitive

    assert [genitive(n) for n in ("Anna", "Klaus", "Max", "Fritz")] == [
        "Annas", "Klaus'", "Max'", "Fritz'",
    ]  # fmt: skip
