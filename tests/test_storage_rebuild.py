"""`schocken rebuild` replays every log and rewrites the facts: identical to what was stored
incrementally, request by request. Also: everything survives closing and reopening the file."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import PLAYERS, make_table

from api.app import create_app
from api.cli import main
from api.rules import PRESETS
from api.rules.simulate import simulate_logs


def all_facts(app):
    with app.app_context():
        from api.http.context import services

        repo = services().repo
        return {g: repo.read_facts(g) for g in repo.game_ids()}


def fill(client):
    t = make_table(client, "Post", rules={"preset": "nrw"})
    t.add_players(PLAYERS)
    start = datetime(2025, 3, 1, 20, tzinfo=UTC)
    for preset in ("standard", "wolbeck", "nrw"):
        for log in simulate_logs(
            PRESETS[preset], 2, players=PLAYERS, seed=7, start=start, detail=True
        ):
            assert t.post("/imports", log).status_code == 201
    game = t.start()
    base = f"/games/{game}"
    for body in (
        {"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False},
        {"player": "Bert", "dice": [6, 6, 6], "throws": 1},
    ):
        assert t.post(base + "/turns", body).status_code == 201
    assert t.post(base + "/undo", {"by": "Anna"}).status_code == 201
    assert (
        t.post(base + "/throws", {"player": "Bert", "dice": [2, 2, 1], "aside": [1]}).status_code
        == 201
    )
    assert (
        t.post(base + "/throws", {"player": "Bert", "dice": [1, 2], "stop": True}).status_code
        == 201
    )
    assert t.post(base + "/penalties", {"player": "Clara", "reason": "zu früh"}).status_code == 201
    assert t.post(base + "/throws", {"player": "Clara", "dice": [3, 3, 3]}).status_code == 201
    assert (
        t.post(base + "/throws", {"player": "Dieter", "dice": [4, 2, 1], "stop": True}).status_code
        == 201
    )
    return t, game


FILES = {"sqlite": "schocken.sqlite3", "postgresql": "unused"}


@pytest.mark.parametrize("storage", FILES)
def test_rebuild_gives_exactly_the_facts_stored_incrementally(
    tmp_path, capsys, storage, monkeypatch, request
):
    monkeypatch.setenv("SCHOCKEN_STORAGE", storage)  # the CLI's app opens the same kind of store
    db = tmp_path / FILES[storage]
    where = ["--db", str(db)]
    if storage == "postgresql":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv("SCHOCKEN_DATABASE_URL", url)  # the apps here
        where = ["--database-url", url]
    app = create_app({"DATABASE": str(db)})
    table, game = fill(app.test_client())
    before = all_facts(app)
    state_before = table.game(game)
    app.extensions["schocken"].store.close()

    assert len(before) == 7
    assert sum(len(f["turn_facts"]) for f in before.values()) > 200
    assert len(before[game]["round_facts"]) == 1
    moves = before[game]["deckel_moves"]
    assert [(m["reason"], m["receiver"], m["amount"]) for m in moves] == [
        ("penalty", "Clara", 1),
        ("round", "Dieter", 4),
    ]

    assert main(["rebuild", *where], standalone_mode=False) == 0
    assert "rebuilt the facts of 7 games" in capsys.readouterr().err

    again = create_app({"DATABASE": str(db)})
    assert all_facts(again) == before
    client = again.test_client()
    client_table = type(table)(client, table.slug, table.token)
    assert client_table.game(game) == state_before  # survives a restart
    again.extensions["schocken"].store.close()


@pytest.mark.parametrize("storage", FILES)
def test_rebuild_repairs_facts_that_were_lost(tmp_path, storage, request):
    db = tmp_path / FILES[storage]
    config = {"STORAGE": storage, "DATABASE": str(db)}
    if storage == "postgresql":
        config = {"DATABASE_URL": request.getfixturevalue("pg_url")}
    app = create_app(config)
    fill(app.test_client())
    before = all_facts(app)
    store = app.extensions["schocken"].store
    conn = store.connect()
    conn.execute("DELETE FROM turn_facts")
    conn.execute("DELETE FROM game_facts")
    conn.close()
    with app.app_context():
        from api.http.context import services

        assert services().rebuild() == 7
    assert all_facts(app) == before
    app.extensions["schocken"].store.close()


def test_games_evicted_from_the_cache_are_replayed_from_the_log(tmp_path):
    app = create_app({"DATABASE": str(tmp_path / "s.sqlite3"), "GAME_CACHE_SIZE": 1})
    client = app.test_client()
    t = make_table(client, "Post")
    t.add_players(PLAYERS)
    logs = list(simulate_logs(PRESETS["wolbeck"], 2, players=PLAYERS, seed=5, detail=True))
    games = [t.start(PLAYERS, log["starter"], rules={"preset": "wolbeck"}) for log in logs]
    pending = [list(log["events"]) for log in logs]
    while any(pending):  # alternate between the games: every request misses the cache
        for game, events in zip(games, pending, strict=True):
            if not events:
                continue
            event = events.pop(0)
            for k, throw in enumerate(event["detail"]):
                body = {"player": event["player"], **throw}
                if k == len(event["detail"]) - 1:
                    body["stop"] = True
                r = t.post(f"/games/{game}/throws", body)
                assert r.status_code == 201, r.json
    for game, log in zip(games, logs, strict=True):
        assert t.get(f"/games/{game}/log").json["events"] == log["events"]
        assert t.game(game)["outcome"]["loser"] is not None
    app.extensions["schocken"].store.close()


def test_the_game_row_is_written_only_when_the_game_changes_phase():
    """Recording a turn appends rows; the game row (status, phase, loser, finalists) is written
    by the first entry and then only by the entries that lose a half, start the Finale or end
    the game, never by an ordinary round."""
    from api.domain.facts import Seating, derive_facts, facts_write
    from api.domain.runtime import GameRuntime
    from api.rules import GameHeader
    from api.storage import GamePlayer, LogEntry

    now = datetime(2025, 3, 1, 20, tzinfo=UTC)
    seats = tuple(GamePlayer(i, i + 1, name, i == 0) for i, name in enumerate(PLAYERS))
    seating = Seating(1, seats, 1, 2025, datetime(2025, 3, 1, 21))
    for log in simulate_logs(PRESETS["standard"], 3, players=PLAYERS, seed=11):
        header = GameHeader(PRESETS["standard"], tuple(PLAYERS), log["starter"], None)
        rt, written, phases = GameRuntime.new(header), [], []
        for seq, event in enumerate(log["events"], start=1):
            before = rt.game.phase.value
            rt.feed(LogEntry(1, seq, "penalty" if "penalty" in event else "turn", event, now))
            facts = derive_facts(seating, rt, rt.facts)
            write = facts_write(facts, rt.facts)
            if write.game is not None:
                written.append(write.game)
                phases.append((before, rt.game.phase.value))
            rt.facts = facts
        assert all(a != b for a, b in phases[1:]), phases
        assert phases[0][0] == "half1" and written[-1]["status"] == "finished"
        assert len(written) == 1 + len(rt.game.half_losers) + (rt.game.finale is not None)
        assert written[-1] == derive_facts(seating, rt)["game_facts"][0]


@pytest.mark.parametrize("mode", ["deckel", "round_loser"])
def test_facts_derived_entry_by_entry_equal_those_derived_from_the_whole_game(mode):
    """A recorded entry derives only the facts that can be new (turns, rounds, the Deckel
    moves of the round in progress); they equal the facts derived from the whole game after
    every entry, penalties (in either penalty mode) in every place of a round included."""
    import random

    from api.domain.facts import Seating, derive_facts
    from api.domain.runtime import GameRuntime
    from api.rules import GameHeader, SchockenError, evaluation_table, ruleset_from_config
    from api.rules.simulate import play_turn
    from api.storage import GamePlayer, LogEntry

    rules = ruleset_from_config({"preset": "standard", "overrides": {"penalty_mode": mode}})
    table = evaluation_table(rules)
    now = datetime(2025, 3, 1, 20, tzinfo=UTC)
    seats = tuple(GamePlayer(i, i + 1, name, i == 0) for i, name in enumerate(PLAYERS))
    seating = Seating(1, seats, 1, 2025, datetime(2025, 3, 1, 21))
    penalties = 0
    for seed in range(6):
        rng = random.Random(seed)
        rt = GameRuntime.new(GameHeader(rules, tuple(PLAYERS), PLAYERS[0], None))
        seq = 0
        while not rt.game.finished:
            game = rt.game
            if rng.random() < 0.2:
                body = {"penalty": {"player": rng.choice(PLAYERS), "reason": "zu früh"}}
                if mode == "deckel":
                    body["penalty"]["deckel"] = rng.choice([1, 2])
                kind = "penalty"
            else:
                to_beat = min(t.ev.key for t in game.round_turns) if game.round_turns else None
                player = game.order[len(game.round_turns)]
                limit = game.limit or rules.max_throws
                body = play_turn(player, limit, to_beat, rules, rng.random, False, table).to_json()
                kind = "turn"
            try:
                rt.feed(LogEntry(1, seq + 1, kind, body, now))
            except SchockenError:
                continue  # e.g. a penalty of a player out of the half: refused, nothing changed
            seq += 1
            penalties += kind == "penalty"
            rt.facts = derive_facts(seating, rt, rt.facts)
            assert rt.facts == derive_facts(seating, rt), (seed, seq)
    assert penalties > 20
