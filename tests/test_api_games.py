"""Games over HTTP: start, list, read, record turns/throws/penalties, undo, import, export."""

from __future__ import annotations

import pytest
from conftest import PLAYERS

S0_ROUND = [  # api/rules/RULES.md §9.1: Dieter is worst and receives 4 from the Mitte
    {"player": "Anna", "dice": [1, 1, 4], "throws": 3, "hand": False},
    {"player": "Bert", "dice": [3, 4, 5], "throws": 3, "hand": False},
    {"player": "Clara", "dice": [5, 5, 5], "throws": 1},
    {"player": "Dieter", "dice": [6, 3, 2], "throws": 3, "hand": False},
]


def play(table, game, events):
    last = None
    for e in events:
        last = table.post(f"/games/{game}/turns", e)
        assert last.status_code == 201, last.json
    return last.json


def facts_and_log(app, game):
    with app.app_context():
        from api.http.context import services

        repo = services().repo
        return repo.read_facts(game), repo.load_log(game)


# --------------------------------------------------------------------------- start, read, list
def test_a_new_game_starts_in_half_one_with_every_deckel_in_the_mitte(table):
    r = table.post(
        "/games",
        {"players": PLAYERS, "starter": "Clara", "played_at": "2026-11-27T20:15:00+01:00"},
    )
    assert r.status_code == 201
    g = r.json
    assert (g["status"], g["year"], g["starter"], g["seq"]) == ("running", 2026, "Clara", 0)
    state = g["outcome"]["state"]
    assert state == {
        "phase": "half1", "mitte": 13, "stacks": dict.fromkeys(PLAYERS, 0),
        "active": PLAYERS, "next_player": "Clara", "limit": None,
    }  # fmt: skip
    assert g["options"]["max_throws"] == 3 and g["open_turn"] is None


def test_starting_needs_known_players_a_starter_who_plays_and_valid_input(table):
    r = table.post("/games", {"players": ["Anna", "Zoe"], "starter": "Anna"})
    assert r.status_code == 422 and "Zoe" in r.json["message"]
    r = table.post("/games", {"players": ["Anna", "Bert"], "starter": "Clara"})
    assert r.status_code == 422 and "Clara" in r.json["message"]
    r = table.post("/games", {"players": ["Anna", "Anna"], "starter": "Anna"})
    assert r.status_code == 422
    r = table.post("/games", {"players": ["Anna"], "starter": "Anna"})
    assert r.status_code == 422 and "players" in r.json["errors"]["json"]
    r = table.post("/games", {"players": PLAYERS, "starter": "Anna", "played_at": "gestern"})
    assert r.status_code == 422 and "played_at" in r.json["errors"]["json"]
    r = table.post(
        "/games", {"players": PLAYERS, "starter": "Anna", "played_at": "2026-01-01T20:00"}
    )
    assert r.status_code == 422  # no offset
    assert table.get("/games").json["total"] == 0


def test_a_game_can_have_its_own_house_rules(table):
    r = table.post(
        "/games",
        {
            "players": PLAYERS,
            "starter": "Anna",
            "rules": {"preset": "nrw", "overrides": {"deckel": 7}},
        },
    )
    assert r.json["rules"] == {"preset": "nrw", "overrides": {"deckel": 7}}
    assert r.json["options"]["schock_aus_ends_round"] is True
    assert r.json["outcome"]["state"]["mitte"] == 7


def test_games_are_listed_newest_first_filtered_and_paginated(table):
    ids = [
        table.start(played_at=f"{year}-06-01T20:00:00+02:00") for year in (2024, 2025, 2025, 2026)
    ]
    two = table.start(["Clara", "Dieter"], "Clara", played_at="2026-07-01T20:00:00+02:00")
    listed = table.get("/games").json
    assert listed["total"] == 5 and [g["id"] for g in listed["items"]][:2] == [two, ids[3]]
    assert [g["id"] for g in table.get("/games?year=2025").json["items"]] == [ids[2], ids[1]]
    anna = table.get("/players").json[0]["id"]
    assert table.get(f"/games?player_id={anna}").json["total"] == 4
    page2 = table.get("/games?page=2&page_size=2").json
    assert page2["page"] == 2 and [g["id"] for g in page2["items"]] == [ids[2], ids[1]]
    assert table.get("/games?status=finished").json["total"] == 0
    assert table.get("/games?page_size=1000").status_code == 422
    assert table.get("/games?status=kaputt").status_code == 422


def test_new_year_counts_in_the_year_at_the_table(table):
    game = table.start(played_at="2026-12-31T23:30:00-05:00")  # 2027 in UTC
    assert table.game(game)["year"] == 2026
    assert table.get("/games?year=2026").json["total"] == 1


def test_an_unknown_game_is_404_also_when_another_stammtisch_owns_it(table, client):
    from conftest import make_table

    game = table.start()
    other = make_table(client, "Krone")
    assert other.get(f"/games/{game}").status_code == 404
    r = other.post(f"/games/{game}/turns", S0_ROUND[0])
    assert r.status_code == 404
    assert table.get("/games/999").status_code == 404


# --------------------------------------------------------------------------- recording turns
def test_a_round_moves_deckel_and_returns_german_domain_events(table):
    game = table.start()
    result = play(table, game, S0_ROUND)
    assert [e["kind"] for e in result["events"]] == ["turn_recorded", "round_lost"]
    assert result["events"][1]["message"] == (
        "Dieter bekommt 4 Deckel aus der Mitte – Schock 4 von Anna."
    )
    assert result["events"][1]["data"]["deckel"] == 4
    out = result["game"]["outcome"]
    assert out["state"]["mitte"] == 9 and out["state"]["stacks"]["Dieter"] == 4
    assert out["state"]["next_player"] == "Dieter"
    assert out["rounds"][0] | {"best_result": "Schock 4"} == out["rounds"][0]
    assert (out["rounds"][0]["worst"], out["rounds"][0]["from"]) == ("Dieter", "mitte")
    assert result["seq"] == 4


def test_the_state_shows_the_current_rounds_turns_and_limit(table):
    game = table.start()
    play(table, game, S0_ROUND[:2])
    out = table.game(game)["outcome"]
    assert [t["name"] for t in out["current_round"]] == ["Schock 4", "Straße"]
    assert out["state"]["limit"] == 3 and out["state"]["next_player"] == "Clara"


def test_a_forbidden_move_is_409_with_the_rule_and_changes_nothing(app, table):
    game = table.start()
    table.turn(game, "Anna", [1, 1, 4], 1)  # Anna sets the limit to one throw
    before = table.game(game)
    facts_before, log_before = facts_and_log(app, game)
    r = table.turn(game, "Bert", [3, 4, 5], 2, hand=False)
    assert r.status_code == 409
    assert r.json["message"].startswith("In dieser Runde ist höchstens 1 Wurf erlaubt")
    assert (r.json["code"], r.json["status"]) == ("throw_limit_exceeded", 409)
    assert "throws" in r.json["errors"]["json"]
    r = table.turn(game, "Clara", [3, 4, 5], 1)
    assert (
        r.status_code == 409 and r.json["message"] == "Clara ist nicht an der Reihe, sondern Bert."
    )
    assert table.game(game) == before
    assert facts_and_log(app, game) == (facts_before, log_before)


def test_malformed_turns_are_422_with_field_errors(table):
    game = table.start()
    cases = [
        ({"player": "Anna", "dice": [1, 1, 9], "throws": 1}, "dice"),
        ({"player": "Anna", "dice": [1, 1, 4]}, "throws"),
        ({"player": "Anna", "dice": [1, 1, 4], "throws": 1, "wurf": 2}, "wurf"),
        ({"player": "Anna", "dice": [1, 1, 4], "throws": 1, "hand": False}, "hand"),
        ({"player": "Anna", "dice": [1, 1, 4], "throws": 1, "detail": [{"dice": [1]}]}, "detail"),
    ]
    for body, field in cases:
        r = table.post(f"/games/{game}/turns", body)
        assert r.status_code == 422, body
        assert field in r.json["errors"]["json"], (body, r.json)
    assert table.game(game)["seq"] == 0


def test_a_request_that_is_not_json_is_rejected_and_changes_nothing(table):
    game = table.start()
    r = table.client.post(
        f"{table.base}/games/{game}/turns",
        data="{kaputt",
        headers={**table.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 422
    assert r.json["message"] == "Kein gültiges JSON."
    assert table.game(game)["seq"] == 0


def test_an_oversized_body_is_413(app, table):
    game = table.start()
    app.config["MAX_CONTENT_LENGTH"] = 2000
    r = table.post(f"/games/{game}/turns", {"player": "Anna" * 1000, "dice": [1, 1, 1]})
    assert r.status_code == 413
    assert (r.json["code"], r.json["status"]) == ("payload_too_large", 413)
    assert r.content_type == "application/problem+json" and r.json["message"]


def test_a_wrong_method_is_405_with_allow_header(table):
    r = table.client.delete(f"{table.base}/games")
    assert r.status_code == 405
    assert set(r.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "POST"}


def test_turns_in_detail_are_checked_against_section_3(table):
    game = table.start()
    detail = {"player": "Anna", "detail": [{"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 4]}]}
    r = table.post(f"/games/{game}/turns", detail)
    assert r.status_code == 201
    assert r.json["game"]["outcome"]["current_round"][0]["name"] == "Schock 4"
    bad = {"player": "Bert", "detail": [{"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 4, 6]}]}
    r = table.post(f"/games/{game}/turns", bad)
    # the request contradicts itself, whatever the game's state: 422
    assert r.status_code == 422 and "im Becher sind 2 Würfel" in r.json["message"]
    assert r.json["code"] == "dice_count_wrong" and "detail[1]" in r.json["errors"]["json"]


# --------------------------------------------------------------------------- throw by throw
def throw(table, game, player, dice=None, **kw):
    body = {"player": player, **({"dice": dice} if dice is not None else {}), **kw}
    return table.post(f"/games/{game}/throws", body)


def test_a_throw_by_throw_turn_stays_open_until_the_player_stops(table):
    game = table.start()
    r = throw(table, game, "Anna", [1, 4, 6], aside=[1])
    assert r.status_code == 201
    assert r.json["events"][0]["kind"] == "throw_recorded"
    assert r.json["game"]["open_turn"] == {
        "player": "Anna", "throws": [{"dice": [1, 4, 6], "aside": [1]}], "blind": False,
    }  # fmt: skip
    r = throw(table, game, "Anna", [1, 4], stop=True)
    assert [e["kind"] for e in r.json["events"]] == ["throw_recorded", "turn_recorded"]
    g = r.json["game"]
    assert g["open_turn"] is None and g["outcome"]["state"]["limit"] == 2
    assert g["outcome"]["current_round"][0]["name"] == "Schock 4"
    assert g["outcome"]["current_round"][0]["hand"] is False


def test_the_next_players_throw_closes_the_open_turn(table):
    game = table.start()
    throw(table, game, "Anna", [1, 4, 6], aside=[1])
    throw(table, game, "Anna", [1, 4])  # Anna does not say stop
    r = throw(table, game, "Bert", [2, 3, 4])
    kinds = [e["kind"] for e in r.json["events"]]
    assert kinds == ["turn_recorded", "throw_recorded"]
    g = r.json["game"]
    assert g["outcome"]["state"]["limit"] == 2  # Anna threw twice
    assert g["outcome"]["current_round"][0]["name"] == "Schock 4"
    assert g["open_turn"]["player"] == "Bert"
    r = throw(table, game, "Clara", [3, 3, 3])  # Bert's single throw ends at Clara's
    assert r.json["game"]["outcome"]["current_round"][1]["throws"] == 1


def test_reaching_the_limit_ends_the_turn_and_a_further_throw_is_409(table):
    game = table.start()
    throw(table, game, "Anna", [1, 1, 4], stop=True)  # limit 1
    r = throw(table, game, "Bert", [6, 6, 5])
    assert r.json["game"]["open_turn"] is None  # one throw is all Bert has
    r = throw(table, game, "Bert", [2, 2, 2])
    assert r.status_code == 409 and "nicht an der Reihe" in r.json["message"]
    r = throw(table, game, "Clara", [1, 5, 5], aside=[1])
    assert r.status_code == 409 and "nichts mehr" in r.json["message"]


def test_illegal_single_throws_are_rejected_before_they_are_stored(table):
    game = table.start()
    assert throw(table, game, "Bert", [1, 2, 3]).status_code == 409  # not Bert's turn
    throw(table, game, "Anna", [1, 4, 6], aside=[1])
    r = throw(table, game, "Anna", [1, 4, 6])
    # thrown one by one, the cup is the open turn's state: 409
    assert r.status_code == 409 and "im Becher sind 2" in r.json["message"]
    assert r.json["code"] == "cup_mismatch"
    r = throw(table, game, "Anna", [1, 4], aside=[5])  # never right, whatever the state: 422
    assert r.status_code == 422 and "kann nicht herausgelegt" in r.json["message"]
    r = throw(table, game, "Anna", [6, 6], sixes=1)
    assert r.status_code == 422 and "umdrehen" in r.json["message"]  # not under standard
    assert throw(table, game, "Anna", None).status_code == 422  # no dice, no stop
    r = throw(table, game, "Anna", [1, 4], stop=True, aside=[1])
    assert r.status_code == 422
    g = table.game(game)
    assert g["seq"] == 1 and g["open_turn"]["throws"] == [{"dice": [1, 4, 6], "aside": [1]}]


def test_a_stop_without_dice_ends_the_open_turn(table):
    game = table.start()
    throw(table, game, "Anna", [5, 5, 2])
    r = throw(table, game, "Anna", stop=True)
    assert r.status_code == 201 and r.json["game"]["open_turn"] is None
    assert r.json["game"]["outcome"]["state"]["limit"] == 1
    r = throw(table, game, "Bert", stop=True)
    assert r.status_code == 409 and "keinen offenen Zug" in r.json["message"]


def test_sixes_turned_under_wikipedia_rules(table):
    game = table.start(rules={"preset": "wikipedia"})
    r = throw(table, game, "Anna", [6, 6, 1], sixes=1, aside=[1])
    assert r.status_code == 201, r.json
    r = throw(table, game, "Anna", [3], stop=True)
    assert r.json["game"]["outcome"]["current_round"][0]["name"] == "Schock 3"


def test_a_penalty_waits_for_the_open_turn_and_a_summary_cannot_replace_it(table):
    game = table.start()
    throw(table, game, "Anna", [1, 4, 6], aside=[1])
    r = table.post(f"/games/{game}/penalties", {"player": "Bert", "deckel": 1, "reason": "zu früh"})
    assert r.status_code == 409 and "noch offen" in r.json["message"]
    r = table.turn(game, "Anna", [1, 1, 4], 2, hand=False)
    assert r.status_code == 409 and "offenen Zug" in r.json["message"]


# --------------------------------------------------------------------------- penalties
def test_a_penalty_takes_deckel_from_the_mitte(table):
    game = table.start()
    r = table.post(
        f"/games/{game}/penalties", {"player": "Bert", "deckel": 2, "reason": "Würfel verloren"}
    )
    assert r.status_code == 201
    assert (
        r.json["events"][0]["message"]
        == "Strafe für Bert (Würfel verloren): 2 Deckel aus der Mitte."
    )
    assert r.json["game"]["outcome"]["state"]["stacks"]["Bert"] == 2
    assert r.json["game"]["outcome"]["penalties"][0]["reason"] == "Würfel verloren"


def test_a_penalty_without_amount_needs_house_rules_that_set_one(table):
    game = table.start()
    r = table.post(f"/games/{game}/penalties", {"player": "Bert", "reason": "zu früh"})
    assert r.status_code == 422 and "keine Zahl von Strafdeckeln" in r.json["message"]
    nrw = table.start(rules={"preset": "nrw"})
    r = table.post(f"/games/{nrw}/penalties", {"player": "Bert", "reason": "zu früh"})
    assert r.status_code == 201 and r.json["game"]["outcome"]["state"]["stacks"]["Bert"] == 1


# --------------------------------------------------------------------------- undo
def test_undo_removes_the_last_entry_and_keeps_an_audit_record(app, table):
    game = table.start()
    play(table, game, S0_ROUND)
    r = table.post(f"/games/{game}/undo", {"by": "Dieter", "reason": "vertippt"})
    assert r.status_code == 201
    assert r.json["events"][0]["kind"] == "undone"
    assert r.json["events"][0]["message"] == "Rückgängig gemacht: Zug von Dieter (2-3-6)."
    g = r.json["game"]
    assert g["outcome"]["rounds"] == [] and g["outcome"]["state"]["mitte"] == 13
    assert g["outcome"]["state"]["next_player"] == "Dieter"
    audit = table.get(f"/games/{game}/undos").json
    assert len(audit) == 1
    assert (audit[0]["undone_seq"], audit[0]["by"], audit[0]["reason"]) == (4, "Dieter", "vertippt")
    assert audit[0]["undone"] == S0_ROUND[3]
    facts, log = facts_and_log(app, game)
    assert [e.kind for e in log] == ["turn"] * 4 + ["undo"]  # the log is append-only
    assert facts["round_facts"] == [] and len(facts["turn_facts"]) == 3
    assert facts["deckel_moves"] == []
    # the corrected turn goes in as usual
    r = table.turn(game, "Dieter", [6, 5, 2], 3, hand=False)
    assert r.status_code == 201 and r.json["seq"] == 6


def test_undo_without_body_and_repeated_undo_down_to_nothing(table):
    game = table.start()
    play(table, game, S0_ROUND[:2])
    assert table.post(f"/games/{game}/undo").status_code == 201
    assert table.post(f"/games/{game}/undo", {}).status_code == 201
    r = table.post(f"/games/{game}/undo")
    assert r.status_code == 409 and r.json["message"] == "Es gibt nichts rückgängig zu machen."
    assert table.game(game)["seq"] == 4


def test_undoing_a_throw_reopens_the_previous_players_turn(table):
    game = table.start()
    throw(table, game, "Anna", [1, 1, 4])
    throw(table, game, "Bert", [2, 3, 4])  # closes Anna's turn
    r = table.post(f"/games/{game}/undo")
    g = r.json["game"]
    assert g["open_turn"] == {"player": "Anna", "throws": [{"dice": [1, 1, 4]}], "blind": False}
    assert g["outcome"]["current_round"] == []
    r = throw(table, game, "Anna", [6, 6, 6], stop=True)  # Anna throws again
    assert r.json["game"]["outcome"]["state"]["limit"] == 2


def test_undo_needs_the_token(table):
    game = table.start()
    r = table.client.post(f"{table.base}/games/{game}/undo")
    assert r.status_code == 401


# --------------------------------------------------------------------------- import / export
LOG = {
    "played_at": "2026-11-27T20:15:00+01:00",
    "rules": {"preset": "standard", "overrides": {"jule": "sieben"}},
    "players": ["Anna", "Bert", "Clara", "Dieter"],
    "starter": "Anna",
    "events": [
        {"player": "Anna", "dice": [1, 1, 4], "throws": 3, "hand": False},
        {"player": "Bert", "detail": [{"dice": [3, 4, 2], "aside": [3, 4]}, {"dice": [5]}]},
        {"player": "Clara", "dice": [5, 5, 5], "throws": 1},
        {"player": "Dieter", "dice": [6, 3, 2], "throws": 3, "hand": False},
        {"penalty": {"player": "Bert", "deckel": 1, "reason": "zu frühes Aufdecken"}},
    ],
}


def test_an_imported_log_exports_identically_and_creates_missing_players(table):
    doc = {**LOG, "players": [*LOG["players"], "Erwin"], "starter": "Anna"}
    r = table.post("/imports", doc)
    assert r.status_code == 201, r.json
    g = r.json
    assert g["source"] == "import" and g["outcome"]["state"]["stacks"]["Bert"] == 1
    assert "Erwin" in [p["name"] for p in table.get("/players").json]
    exported = table.get(f"/games/{g['id']}/log").json
    assert exported == doc


def test_an_api_game_exports_a_log_that_replays_to_the_same_outcome(table, capsys, tmp_path):
    import json

    from api.cli import main

    game = table.start(played_at="2026-11-27T20:15:00+01:00")
    play(table, game, S0_ROUND)
    throw(table, game, "Dieter", [1, 2, 3], aside=[1])
    throw(table, game, "Dieter", [1, 1], stop=True)
    throw(table, game, "Anna", [6, 6, 6])  # still open: not in the log
    exported = table.get(f"/games/{game}/log").json
    assert len(exported["events"]) == 5
    path = tmp_path / "log.json"
    path.write_text(json.dumps(exported))
    capsys.readouterr()
    assert main(["replay", str(path)], standalone_mode=False) == 0
    replayed = json.loads(capsys.readouterr().out)
    g = table.game(game)
    assert g["outcome"]["state"]["limit"] == 2
    undo = table.post(f"/games/{game}/undo").json["game"]  # drop Anna's open throw
    assert replayed == undo["outcome"]
    again = table.post("/imports", exported)
    assert table.get(f"/games/{again.json['id']}/log").json == exported


def test_a_bad_import_names_the_event_and_stores_nothing(table):
    bad = {
        **LOG,
        "events": [*LOG["events"][:2], {"player": "Dieter", "dice": [1, 2, 3], "throws": 1}],
    }
    r = table.post("/imports", bad)
    assert r.status_code == 409
    assert r.json["message"].startswith("event 2: Dieter ist nicht an der Reihe")
    malformed = {**LOG, "events": [{"player": "Anna", "dice": [0, 1, 1], "throws": 1}]}
    r = table.post("/imports", malformed)
    assert r.status_code == 422 and r.json["message"].startswith("event 0:")
    r = table.post("/imports", {**LOG, "zusatz": 1})
    assert r.status_code == 422
    assert table.get("/games").json["total"] == 0
    assert [p["name"] for p in table.get("/players").json] == PLAYERS


@pytest.mark.parametrize("mode", ["summary", "throws"])
def test_a_finished_game_rejects_further_entries(table, mode):
    from api.rules import PRESETS
    from api.rules.simulate import simulate_logs

    (log,) = simulate_logs(PRESETS["standard"], 1, players=PLAYERS, seed=3)
    r = table.post("/imports", log)
    game = r.json["id"]
    assert r.json["status"] == "finished" and r.json["outcome"]["loser"]
    if mode == "summary":
        r = table.turn(game, "Anna", [1, 1, 1], 1)
    else:
        r = throw(table, game, "Anna", [1, 1, 1])
    assert r.status_code == 409 and "schon vorbei" in r.json["message"]
    assert table.get("/games?status=finished").json["total"] == 1


def test_a_blind_throw_ends_the_turn_at_once_where_the_house_rules_allow_it(table):
    game = table.start(rules={"preset": "standard", "overrides": {"blind": True}})
    throw(table, game, "Anna", [2, 3, 5], stop=True)
    r = throw(table, game, "Bert", [6, 6, 6], blind=True)
    assert r.status_code == 201
    g = r.json["game"]
    assert g["open_turn"] is None and g["outcome"]["current_round"][1]["blind"] is True
    plain = table.start()
    r = throw(table, plain, "Anna", [6, 6, 6], blind=True)
    assert r.status_code == 422 and "Blind" in r.json["message"]  # the house rules: never


def test_the_next_players_summary_also_closes_an_open_turn(table):
    game = table.start()
    throw(table, game, "Anna", [1, 4, 6], aside=[1])
    throw(table, game, "Anna", [1, 4])
    r = table.turn(game, "Bert", [3, 4, 5], 2, hand=False)
    assert [e["kind"] for e in r.json["events"]] == ["turn_recorded", "turn_recorded"]
    assert [t["player"] for t in r.json["game"]["outcome"]["current_round"]] == ["Anna", "Bert"]


def test_turned_sixes_must_be_followed_by_a_throw_of_the_same_player(table):
    game = table.start(rules={"preset": "wikipedia"})
    throw(table, game, "Anna", [6, 6, 2], sixes=1)
    r = throw(table, game, "Bert", [1, 2, 3])
    assert r.status_code == 409 and "muss danach noch einmal würfeln" in r.json["message"]
    assert r.json["code"] == "turn_open"  # Anna's open turn cannot end yet: the state
    assert table.game(game)["open_turn"]["player"] == "Anna"


def test_a_rejected_throw_does_not_close_the_open_turn_it_would_have_closed(app, table):
    game = table.start()
    throw(table, game, "Anna", [1, 4, 6], aside=[1])
    throw(table, game, "Anna", [1, 4])
    before = table.game(game)
    r = throw(table, game, "Clara", [2, 2, 2])  # would close Anna's turn, but Bert is next
    assert (
        r.status_code == 409 and r.json["message"] == "Clara ist nicht an der Reihe, sondern Bert."
    )
    after = table.game(game)
    assert after == before and after["open_turn"]["player"] == "Anna"
    assert len(facts_and_log(app, game)[1]) == 2


@pytest.mark.parametrize("how", ["start", "import"])
def test_the_game_kept_after_creation_is_the_game_stored(app, table, how):
    """Creating a game keeps its record for the next entries without reading it back: it must
    be exactly what the store holds (timestamps, expanded rules, seats, status)."""
    from api.rules import PRESETS
    from api.rules.simulate import simulate_logs

    if how == "start":
        game = table.start(PLAYERS, "Bert", played_at="2025-03-01T20:15:00+01:00")
    else:
        (log,) = simulate_logs(PRESETS["nrw"], 1, players=PLAYERS, seed=4)
        r = table.post("/imports", log)
        assert r.status_code == 201, r.json
        game = r.json["id"]
    with app.app_context():
        from api.http.context import services

        svc = services()
        kept = svc.cache.get(game).record
        assert kept == svc.repo.get_game_by_id(game)
        assert kept.status == ("running" if how == "start" else "finished")


def test_a_recorded_entry_answers_exactly_what_its_schema_dumps(table):
    """The answers of turns, throws, penalties and undo are sent as the use case made them
    (api/resources/games.py skips the dump): ``WriteResultSchema`` must dump each unchanged."""
    from api.rules import PRESETS
    from api.rules.simulate import simulate_logs
    from schemas import WriteResultSchema

    schema = WriteResultSchema()
    game = table.start()
    answers = [
        table.post(f"/games/{game}/penalties", {"player": "Bert", "reason": "Würfel", "deckel": 1})
    ]
    answers.append(table.post(f"/games/{game}/throws", {"player": "Anna", "dice": [1, 1, 4]}))
    answers.append(table.post(f"/games/{game}/throws", {"player": "Anna", "stop": True}))
    answers.append(table.post(f"/games/{game}/undo", {"by": "Anna", "reason": "vertippt"}))
    (log,) = simulate_logs(PRESETS["standard"], 1, players=PLAYERS, seed=3)
    game = table.start(starter=log["starter"])
    for event in log["events"]:
        answers.append(table.post(f"/games/{game}/turns", event))
    assert answers[-1].json["game"]["status"] == "finished"
    for answer in answers:
        assert answer.status_code == 201, answer.json
        assert schema.dump(answer.json) == answer.json


def test_a_write_looks_up_and_hashes_its_key_once_and_is_one_transaction(app, table, monkeypatch):
    """The rate limit and the access check share one look-up of the Stammtisch and one hash
    of the key (api/http/context.py); the use case opens the one transaction of the write."""
    import os
    import sys

    from api.domain import stammtische
    from api.http.context import services

    game = table.start()
    with app.app_context():
        repo_class = type(services().repo)
    counted = {"lookups": 0, "hashes": 0, "transactions": 0}

    def counting(name, original):
        def call(*args, **kwargs):
            counted[name] += 1
            return original(*args, **kwargs)

        return call

    monkeypatch.setattr(
        repo_class, "get_stammtisch", counting("lookups", repo_class.get_stammtisch)
    )
    monkeypatch.setattr(stammtische, "hash_token", counting("hashes", stammtische.hash_token))
    original = repo_class.transaction

    def transaction(*args, **kwargs):
        caller = sys._getframe(1).f_code.co_filename  # noqa: SLF001 - who opens it
        if f"api{os.sep}storage{os.sep}" not in caller:  # not nested in a storage method
            counted["transactions"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(repo_class, "transaction", transaction)
    r = table.turn(game, "Anna", [1, 1, 4], 3, hand=False)
    assert r.status_code == 201, r.json
    assert counted["lookups"] == 1 and counted["hashes"] == 1
    assert counted["transactions"] == 1
    r = table.client.post(
        f"{table.base}/games/{game}/turns",
        json={"player": "Bert", "dice": [2, 2, 3], "throws": 1},
        headers={**table.auth, "Idempotency-Key": "k-1"},
    )
    assert r.status_code == 201, r.json
    assert (counted["lookups"], counted["hashes"], counted["transactions"]) == (2, 2, 2)
