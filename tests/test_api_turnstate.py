"""The turn state over HTTP: every game representation carries ``turn`` (whose turn, the round's
opener, the throw limit or the opener's cap, the open turn's throws and kept dice, must_stop),
and a client that sends ``stop`` exactly when ``must_stop`` says so scores every game right."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PLAYERS, Table, make_table, store_config

from api.app import create_app
from api.rules import PRESETS, Game, RecordTurn, evaluation_table, turn_in_detail
from api.rules.simulate import play_turn

ROOT = Path(__file__).resolve().parents[1]
ANNA, BERT, CLARA, DIETER = PLAYERS


@pytest.fixture
def table(storage: str, tmp_path: Any) -> Any:
    app = create_app(store_config(storage, tmp_path))
    t = make_table(app.test_client())
    t.add_players(PLAYERS)
    yield t
    app.extensions["schocken"].store.close()


def throw(table: Table, game: int, player: str, dice: list[int] | None = None, **kw: Any) -> Any:
    body = {"player": player, **({"dice": dice} if dice is not None else {}), **kw}
    return table.post(f"/games/{game}/throws", body)


def turn_of(r: Any) -> dict[str, Any]:
    assert r.status_code == 201, r.json
    return r.json["game"]["turn"]


def test_a_new_game_names_its_opener_and_the_openers_cap(table):
    r = table.post("/games", {"players": PLAYERS, "starter": CLARA})
    assert r.status_code == 201
    assert r.json["outcome"]["state"]["limit"] is None
    assert r.json["turn"] == {
        "half": 1, "round": 0, "round_of_half": 1, "opener": CLARA, "player": CLARA,
        "position": 0, "last_in_round": False, "limit": 3, "limit_fixed": False,
        "opener_cap": 3, "open": None, "must_stop": False,
    }  # fmt: skip
    assert table.game(r.json["id"])["turn"] == r.json["turn"]


def test_the_cap_comes_from_the_house_rules(table):
    game = table.start(rules={"preset": "standard", "overrides": {"max_throws": 5}})
    t = table.game(game)["turn"]
    assert (t["limit"], t["opener_cap"], t["limit_fixed"]) == (5, 5, False)


def test_while_the_opener_throws_and_after(table):
    game = table.start()
    t = turn_of(throw(table, game, ANNA, [1, 4, 6], aside=[1]))
    assert (t["player"], t["opener"], t["limit"], t["limit_fixed"]) == (ANNA, ANNA, 3, False)
    assert t["open"] == {
        "throws_used": 1, "throws_left": 2, "kept": [1], "dice_in_cup": 2,
        "blind": False, "can_stop": True, "next_player": BERT,
    }  # fmt: skip
    assert t["must_stop"] is False
    t = turn_of(throw(table, game, ANNA, [1, 4], stop=True))
    assert (t["player"], t["position"], t["limit"], t["limit_fixed"]) == (BERT, 1, 2, True)
    assert t["open"] is None and t["opener"] == ANNA


def test_turning_sixes_leaves_a_turn_that_cannot_stop(table):
    game = table.start(rules={"preset": "wikipedia"})
    t = turn_of(throw(table, game, ANNA, [6, 6, 3], sixes=1))
    assert t["open"]["kept"] == [1] and t["open"]["dice_in_cup"] == 2
    assert t["open"]["can_stop"] is False and t["must_stop"] is False
    assert throw(table, game, ANNA, stop=True).status_code == 409
    assert throw(table, game, BERT, [2, 3, 4]).status_code == 409


def _last_player_open(table: Table, dice: list[int]) -> tuple[int, dict[str, Any]]:
    """Anna, Bert, Clara done (limit 2, best Schock 4); Dieter's first throw ``dice``."""
    game = table.start()
    throw(table, game, ANNA, [2, 3, 5])
    throw(table, game, ANNA, [1, 1, 4], stop=True)
    table.turn(game, BERT, [3, 4, 5], 2, hand=False)
    table.turn(game, CLARA, [5, 5, 5], 1)
    return game, turn_of(throw(table, game, DIETER, dice))


def test_the_last_player_who_would_lose_must_stop_and_then_opens(table):
    game, t = _last_player_open(table, [6, 3, 2])
    assert t["last_in_round"] and t["must_stop"] is True
    assert t["open"]["throws_left"] == 1 and t["open"]["next_player"] == DIETER
    r = table.turn(game, DIETER, [2, 3, 5], 1)  # his next round's turn: refused
    assert r.status_code == 409 and "offenen Zug" in r.json["message"]
    r = table.post(f"/games/{game}/penalties", {"player": ANNA, "deckel": 1, "reason": "zu früh"})
    assert r.status_code == 409 and "noch offen" in r.json["message"]  # documented 409
    t = turn_of(throw(table, game, DIETER, stop=True))
    assert (t["round"], t["opener"], t["player"], t["limit_fixed"]) == (1, DIETER, DIETER, False)
    g = table.game(game)
    assert g["outcome"]["rounds"][0]["worst"] == DIETER and g["turn"] == t
    r = table.post(f"/games/{game}/penalties", {"player": ANNA, "deckel": 1, "reason": "zu früh"})
    assert r.status_code == 201 and r.json["game"]["turn"]["opener"] == DIETER


def test_the_last_player_who_would_not_lose_need_not_stop(table):
    game, t = _last_player_open(table, [1, 1, 6])  # Schock 6: Bert (3-4-5) loses
    assert t["last_in_round"] and t["must_stop"] is False and t["open"]["next_player"] == BERT
    t = turn_of(throw(table, game, BERT, [2, 2, 3]))  # Bert's throw ends Dieter's turn
    assert (t["round"], t["opener"], t["player"]) == (1, BERT, BERT)
    assert t["open"]["throws_used"] == 1 and t["must_stop"] is False


def test_undo_reopens_the_turn_state_of_the_throw_before(table):
    game = table.start()
    throw(table, game, ANNA, [1, 4, 6], aside=[1])
    before = table.game(game)["turn"]
    throw(table, game, ANNA, [1, 5])
    r = table.post(f"/games/{game}/undo", {})
    assert turn_of(r) == before and before["open"]["throws_used"] == 1


def _finale(table: Table, preset: str) -> int:
    """Three players: Clara loses half 1, Bert half 2 (each by a Schock aus in one throw)."""
    game = table.start([ANNA, BERT, CLARA], rules={"preset": preset})
    for player, dice in [
        (ANNA, [1, 1, 1]), (BERT, [6, 5, 2]), (CLARA, [6, 4, 2]),
        (CLARA, [1, 1, 1]), (ANNA, [6, 5, 2]), (BERT, [6, 4, 2]),
    ]:  # fmt: skip
        r = table.turn(game, player, dice, 1)
        assert r.status_code == 201
        if player == CLARA and dice == [6, 4, 2]:  # half 1 is over: its loser opens half 2
            t = r.json["game"]["turn"]
            assert (t["half"], t["round"], t["round_of_half"]) == (2, 1, 1)
            assert (t["opener"], t["player"], t["limit"], t["limit_fixed"]) == (
                CLARA,
                CLARA,
                3,
                False,
            )
    return game


@pytest.mark.parametrize(("preset", "opener"), [("standard", BERT), ("nrw", CLARA)])
def test_the_finale_and_the_end_of_the_game(table, preset, opener):
    game = _finale(table, preset)
    t = table.game(game)["turn"]
    assert (t["half"], t["round_of_half"], t["opener"], t["player"]) == (
        "finale",
        1,
        opener,
        opener,
    )
    other = CLARA if opener == BERT else BERT
    throw(table, game, opener, [2, 3, 5])
    throw(table, game, opener, [1, 1, 1], stop=True)
    t = turn_of(throw(table, game, other, [6, 4, 2]))
    assert t["half"] == "finale" and t["must_stop"] is True  # ended now, the game is over
    r = throw(table, game, other, stop=True)
    assert r.status_code == 201 and r.json["game"]["status"] == "finished"
    assert r.json["game"]["turn"] is None and table.game(game)["turn"] is None


def test_an_imported_game_carries_its_turn(table):
    r = table.post(
        "/imports",
        {
            "players": [ANNA, BERT],
            "starter": BERT,
            "events": [{"player": BERT, "dice": [2, 3, 6], "throws": 2}],
        },
    )
    assert r.status_code == 201, r.json
    t = r.json["turn"]
    assert (t["opener"], t["player"], t["limit"], t["limit_fixed"]) == (BERT, ANNA, 2, True)


# ---------------------------------------------------------------------------- a client
def _client_plays(table: Table, rules: str, rng: random.Random) -> Game:
    """A client that knows no rules: it throws by the simulation's strategy, says stop only
    when turn.must_stop asks, and otherwise lets the next player's first throw end the turn.
    The engine plays the same turns; both must agree."""
    game = table.start(rules={"preset": rules})
    engine = Game.start(PRESETS[rules], PLAYERS, ANNA)
    evaluations = evaluation_table(PRESETS[rules])
    turn: dict[str, Any] | None = table.game(game)["turn"]
    pending: RecordTurn | None = None  # the engine's copy of a turn still open on the server
    for _ in range(3000):
        if pending is not None:
            engine.apply(pending)
            pending = None
        if engine.finished:
            break
        player = engine.next_player
        assert player is not None and turn is not None
        worst = min((t.ev.key for t in engine.round_turns), default=None)
        limit = engine.limit or engine.rules.max_throws
        plan = play_turn(player, limit, worst, engine.rules, rng.random, True, evaluations)
        assert plan.detail is not None
        for th in plan.detail:
            body: dict[str, Any] = {"dice": list(th.dice)}
            if th.aside:
                body["aside"] = list(th.aside)
            if th.sixes:
                body["sixes"] = th.sixes
            turn = turn_of(throw(table, game, player, **body))
        if turn is not None and turn["open"] is not None:
            assert turn["limit"] == limit and turn["player"] == player
            if turn["must_stop"]:
                turn = turn_of(throw(table, game, player, stop=True))
        done = turn_in_detail(player, plan.detail, False, engine.rules)
        if turn is not None and turn["open"] is not None:  # the next player's throw ends it
            pending = done
        else:
            engine.apply(done)
    assert turn is None and engine.finished
    return engine


@pytest.mark.parametrize("rules", ["standard", "nrw"])
def test_a_client_that_stops_only_when_told_scores_the_game_right(table, rules):
    engine = _client_plays(table, rules, random.Random(7))
    games = table.get("/games", headers=table.auth).json["items"]
    g = table.game(games[0]["id"])
    assert g["outcome"] == engine.outcome().to_json()


# ---------------------------------------------------------------------------- the documents
def test_the_turn_closing_rules_are_written_once_and_the_readme_agrees():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    games = next(t["description"] for t in spec["tags"] if t["name"] == "games")
    assert "Turn-closing rules" in games and "must_stop" in games and "409" in games
    texts = yaml.safe_dump(spec["paths"]) + yaml.safe_dump(spec["components"])
    assert texts.count("Turn-closing rules") == 0  # elsewhere only a pointer to the tag
    penalty = spec["paths"]["/api/v1/stammtische/{slug}/games/{game_id}/penalties"]["post"]
    assert "409 while a throw-by-throw turn is open" in penalty["description"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "last player must send `stop`" not in readme and "turn.must_stop" in readme
    assert set(spec["components"]["schemas"]["TurnState"]["required"]) >= {
        "opener", "player", "limit", "limit_fixed", "open", "must_stop",
    }  # fmt: skip
