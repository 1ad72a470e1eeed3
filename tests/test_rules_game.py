"""The game (api/rules/RULES.md §6): halves, Blattschuss, the Finale, a complete game under every
preset, and the outcome JSON of schemas/GAMELOG.md (replay_log / replay_text)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from engine_play import (
    ANNA,
    BERT,
    CLARA,
    DIETER,
    ROUND_KEYS,
    THREE,
    play,
    rules,
    start_of_half_2,
    t,
)

from api.rules import (
    PRESETS,
    Game,
    Phase,
    RuleViolation,
    evaluate,
    parse_event,
    replay_log,
    replay_text,
    to_log,
)

ROOT = Path(__file__).resolve().parents[1]


def rnd(half, starter, limit, best, worst, deckel, source, repeated=False):
    return dict(
        zip(ROUND_KEYS, (half, starter, limit, best, worst, deckel, source, repeated), strict=True)
    )


def rounds(game_or_outcome) -> list[dict]:
    if isinstance(game_or_outcome, dict):  # the JSON outcome
        rs = game_or_outcome["rounds"]
    else:
        rs = [r.to_json() for r in game_or_outcome.rounds]
    return [{k: r[k] for k in ROUND_KEYS} for r in rs]


def said(events) -> list[tuple]:
    """What domain events tell: kind, the German sentence, the payload (JSON)."""
    return [(e.kind.value, e.message, e.data.to_json()) for e in events]


# --------------------------------------------------------------------------- Blattschuss


def blattschuss_events():
    return [
        # half 1: Bert's Schock aus, Clara is worst and takes all 2 Deckel
        t(ANNA, "2-5-6"), t(BERT, "1-1-1"), t(CLARA, "2-3-5"),
        # half 2, opened by Clara: Anna's Schock aus, Clara is worst again
        t(CLARA, "2-3-5", 2), t(ANNA, "1-1-1", 2, hand=False), t(BERT, "2-5-6"),
    ]  # fmt: skip


def test_blattschuss_the_same_player_loses_both_halves_and_the_game_ends_without_finale():
    game = play(rules(deckel=2), THREE, ANNA, blattschuss_events())
    out = game.outcome()
    assert out.half_losers == (CLARA, CLARA) and out.loser == CLARA
    assert out.blattschuss is True and out.finale is None
    assert out.state.phase is Phase.FINISHED and out.state.next_player is None
    assert out.state.mitte == 2 and set(out.state.stacks.values()) == {0}
    assert rounds(game) == [
        rnd(1, ANNA, 1, BERT, CLARA, 2, "all"),
        rnd(2, CLARA, 2, ANNA, CLARA, 2, "all"),
    ]


def test_no_turn_is_accepted_after_the_game_ended():
    r = rules(deckel=2)
    game = play(r, THREE, ANNA, blattschuss_events())
    before = game.outcome()
    with pytest.raises(RuleViolation):
        game.apply(parse_event(t(CLARA, "2-3-5"), r))
    with pytest.raises(RuleViolation):
        game.apply(parse_event({"penalty": {"player": ANNA, "deckel": 1, "reason": "x"}}, r))
    assert game.outcome() == before


def test_half_2_is_opened_by_the_half_1_loser_with_every_player_and_all_deckel_in_the_mitte():
    for next_starter in ("round_loser", "last_receiver"):
        r = rules(deckel=2, next_starter=next_starter)
        game = play(r, THREE, ANNA, blattschuss_events()[:3])
        assert game.state().to_json() == start_of_half_2(game, CLARA)
        assert game.state().mitte == 2


def test_half_2_is_opened_by_the_half_1_loser_even_if_someone_else_received_last():
    # a penalty can give the last Deckel: Clara then holds all and lost the half
    r = rules(deckel=3)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-2"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    game.apply(parse_event({"penalty": {"player": CLARA, "deckel": 1, "reason": "zu früh"}}, r))
    assert game.half_losers == [CLARA] and game.next_player == CLARA


def test_everybody_plays_half_2_again_even_those_out_in_half_1():
    r = rules(deckel=3)
    game = play(r, THREE, ANNA, [
        t(ANNA, "1-1-2"), t(BERT, "2-4-6"), t(CLARA, "2-3-5"),  # Clara 2, Mitte 1
        t(CLARA, "2-3-6"), t(ANNA, "5-6-6"), t(BERT, "2-4-6"),  # Clara 3 = all
    ])  # fmt: skip
    assert game.half_losers == [CLARA]
    assert game.active == THREE


# --------------------------------------------------------------------------- Finale


TO_THE_FINALE = [
    t(ANNA, "2-5-6"), t(BERT, "1-1-1"), t(CLARA, "2-3-5"),  # Clara loses half 1
    t(CLARA, "2-3-6"), t(ANNA, "2-3-5"), t(BERT, "1-1-1"),  # Anna loses half 2
]  # fmt: skip


def test_schock_aus_in_the_finale_decides_the_game_at_once():
    r = rules(deckel=5)
    game = play(r, THREE, ANNA, TO_THE_FINALE[:-1])
    assert said(game.apply(parse_event(TO_THE_FINALE[-1], r)))[2:] == [
        ("half_lost", "Anna hat alle Deckel und verliert die zweite Hälfte.",
         {"player": ANNA, "half": 2, "stacks": {ANNA: 5, BERT: 0, CLARA: 0}}),
        ("finale_started", "Finale: Anna gegen Clara, Anna beginnt.",
         {"players": [ANNA, CLARA], "starter": ANNA}),
    ]  # fmt: skip
    assert game.half_losers == [CLARA, ANNA]
    assert game.finale == [ANNA, CLARA]
    assert game.phase == "finale" and game.next_player == ANNA  # the last loser opens
    assert game.active == [ANNA, CLARA] and game.mitte == 5
    assert game.copy().outcome() == game.outcome()  # a copy is the same game, its Finale too
    with pytest.raises(RuleViolation):
        game.apply(parse_event(t(BERT, "2-3-5"), r))
    game.apply(parse_event(t(ANNA, "1-1-1"), r))
    assert said(game.apply(parse_event(t(CLARA, "5-6-6"), r)))[1:] == [
        ("round_lost", "Schock aus von Anna! Clara bekommt alle Deckel.",
         {"player": CLARA, "deckel": 5, "from": "all", "best": ANNA, "best_result": "Schock aus"}),
        ("game_lost", "Clara verliert das Finale und zahlt die Runde.",
         {"player": CLARA, "stacks": {ANNA: 0, BERT: 0, CLARA: 5}}),
    ]  # fmt: skip
    assert game.loser == CLARA and game.phase == "finished" and not game.blattschuss
    assert rounds(game)[-1] == rnd("finale", ANNA, 1, ANNA, CLARA, 5, "all")


def test_the_finale_is_opened_by_the_first_half_loser_under_first_half_loser():
    game = play(rules(deckel=5, finale_opener="first_half_loser"), THREE, ANNA, TO_THE_FINALE)
    assert game.next_player == CLARA


def finale_game_events(opener: str) -> list[dict]:
    """Four Deckel, three players; Clara loses half 1, Anna half 2, Clara the Finale."""
    finale_first = (
        [t(ANNA, "1-2-6"), t(CLARA, "3-6-6")]
        if opener == ANNA
        else [t(CLARA, "3-6-6"), t(ANNA, "1-2-6")]
    )
    return [
        # half 1, Anna opens
        t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5"),  # Clara +3 from the Mitte (1 left)
        t(CLARA, "3-5-6"), t(ANNA, "4-4-4"), t(BERT, "2-3-6"),  # Bert +1: only 1 left; Anna out
        t(BERT, "1-1-2"), t(CLARA, "1-4-6"),  # Bert pays his only 1; Clara holds all 4
        # half 2, Clara opens
        t(CLARA, "6-6-6"), t(ANNA, "1-4-5"), t(BERT, "1-3-6"),  # Anna +3 (Mitte 1)
        t(ANNA, "1-1-4"), t(BERT, "1-5-6"), t(CLARA, "2-3-3"),  # Clara +1 (Mitte 0); Bert out
        t(CLARA, "1-1-5"), t(ANNA, "3-4-4"),  # Clara pays her only 1; Anna holds all 4
        # Finale
        *finale_first,  # Anna +1 (Mitte 3)
        t(ANNA, "1-1-6"), t(CLARA, "1-3-5"),  # Clara +3 (Mitte 0)
        t(CLARA, "3-4-6"), t(ANNA, "1-1-3"),  # Anna pays her only 1; Clara holds all 4
    ]  # fmt: skip


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_complete_game_with_a_finale_under_each_preset(preset):
    r = rules(preset, deckel=4)
    opener = CLARA if preset == "nrw" else ANNA  # nrw: the first-half loser opens the Finale
    game = play(r, THREE, ANNA, finale_game_events(opener))
    out = game.outcome()
    assert rounds(out) == [
        rnd(1, ANNA, 1, ANNA, CLARA, 3, "mitte"),
        rnd(1, CLARA, 1, ANNA, BERT, 1, "mitte"),
        rnd(1, BERT, 1, BERT, CLARA, 1, BERT),
        rnd(2, CLARA, 1, CLARA, ANNA, 3, "mitte"),
        rnd(2, ANNA, 1, ANNA, CLARA, 1, "mitte"),
        rnd(2, CLARA, 1, CLARA, ANNA, 1, CLARA),
        rnd("finale", opener, 1, CLARA, ANNA, 1, "mitte"),
        rnd("finale", ANNA, 1, ANNA, CLARA, 3, "mitte"),
        rnd("finale", CLARA, 1, ANNA, CLARA, 1, ANNA),
    ]
    assert out.half_losers == (CLARA, ANNA)
    assert out.finale == (ANNA, CLARA)
    assert out.blattschuss is False
    assert out.loser == CLARA
    assert out.state.phase is Phase.FINISHED
    assert out.state.mitte == 4 and set(out.state.stacks.values()) == {0}
    assert out.state.next_player is None and out.state.limit is None
    # the log round-trips
    assert replay_log(to_log(game)).outcome() == out


def test_the_wrong_finale_opener_is_rejected():
    r = rules(deckel=4)
    with pytest.raises(RuleViolation):
        play(r, THREE, ANNA, finale_game_events(CLARA))
    with pytest.raises(RuleViolation):
        play(rules("nrw", deckel=4), THREE, ANNA, finale_game_events(ANNA))


def test_a_half_loser_who_is_not_in_the_finale_cannot_throw():
    r = rules(deckel=4)
    game = play(r, THREE, ANNA, finale_game_events(ANNA)[:16])
    assert game.phase == "finale"
    with pytest.raises(RuleViolation):
        game.apply(parse_event(t(BERT, "1-1-1"), r))


def test_the_finale_has_phase_2_and_elimination_like_a_half():
    r = rules(deckel=4)
    game = play(r, THREE, ANNA, finale_game_events(ANNA)[:20])
    assert game.mitte == 0 and game.stacks == {ANNA: 1, BERT: 0, CLARA: 3}
    assert game.next_player == CLARA


# --------------------------------------------------------------------------- outcome JSON

GAMELOG_EXAMPLE = {
    "played_at": "2026-11-27T20:15:00+01:00",
    "rules": {"preset": "standard", "overrides": {"jule": "sieben"}},
    "players": [ANNA, BERT, CLARA, DIETER],
    "starter": ANNA,
    "events": [
        {"player": ANNA, "dice": [1, 1, 4], "throws": 3, "hand": False},
        {"player": BERT, "detail": [{"dice": [3, 4, 2], "aside": [3, 4]}, {"dice": [5]}]},
        {"player": CLARA, "dice": [5, 5, 5], "throws": 1},
        {"player": DIETER, "dice": [6, 3, 2], "throws": 3, "hand": False},
        {"penalty": {"player": BERT, "deckel": 1, "reason": "zu frühes Aufdecken"}},
    ],
}


def test_replay_text_of_the_gamelog_example_gives_the_documented_outcome():
    doc = dict(GAMELOG_EXAMPLE, events=GAMELOG_EXAMPLE["events"][:4])
    out = replay_text(json.dumps(doc))
    assert rounds(out) == [rnd(1, ANNA, 3, ANNA, DIETER, 4, "mitte")]
    assert out["half_losers"] == []
    assert out["finale"] is None
    assert out["blattschuss"] is False
    assert out["loser"] is None
    assert out["state"] == {
        "phase": "half1",
        "mitte": 9,
        "stacks": {ANNA: 0, BERT: 0, CLARA: 0, DIETER: 4},
        "active": [ANNA, BERT, CLARA, DIETER],
        "next_player": DIETER,
        "limit": None,
    }
    json.dumps(out)  # plain JSON


def test_replay_text_with_the_penalty_of_the_gamelog_example():
    out = replay_text(json.dumps(GAMELOG_EXAMPLE))
    assert out["state"]["mitte"] == 8
    assert out["state"]["stacks"] == {ANNA: 0, BERT: 1, CLARA: 0, DIETER: 4}
    assert out["state"]["next_player"] == DIETER


def test_the_outcome_state_shows_the_limit_once_the_starter_has_thrown():
    doc = dict(GAMELOG_EXAMPLE, events=GAMELOG_EXAMPLE["events"][:1])
    out = replay_text(json.dumps(doc))
    assert out["state"]["limit"] == 3 and out["state"]["next_player"] == BERT
    assert out["rounds"] == []


def test_a_repeated_round_has_the_documented_shape():
    doc = {
        "players": [ANNA, BERT],
        "starter": BERT,
        "events": [t(BERT, "2-3-5", 2), t(ANNA, "2-3-5", 2)],
    }
    out = replay_text(json.dumps(doc))
    assert rounds(out) == [rnd(1, BERT, 2, None, None, 0, None, True)]
    assert out["state"]["next_player"] == BERT


def test_replay_errors_name_the_event_index():
    doc = dict(GAMELOG_EXAMPLE)
    doc["events"] = [
        *GAMELOG_EXAMPLE["events"][:2],
        {"player": DIETER, "dice": [1, 2, 3], "throws": 1},
    ]
    out = replay_text(json.dumps(doc))
    assert set(out) == {"error"} and out["error"].startswith("event 2: ")
    doc["events"] = [GAMELOG_EXAMPLE["events"][0], {"player": BERT, "dice": [1, 2], "throws": 1}]
    assert replay_text(json.dumps(doc))["error"].startswith("event 1: ")
    doc["events"] = [{"player": ANNA, "dice": [1, 2, 3], "throws": 4, "hand": False}]
    assert replay_text(json.dumps(doc))["error"].startswith("event 0: ")


def test_replay_text_reports_malformed_documents_as_an_error_not_a_traceback():
    assert set(replay_text("{not json")) == {"error"}
    assert set(replay_text("[]")) == {"error"}
    out = replay_text(json.dumps(dict(GAMELOG_EXAMPLE, rules={"overrides": {"jule": "sometimes"}})))
    assert "jule" in out["error"] and "sometimes" in out["error"]
    out = replay_text(json.dumps(dict(GAMELOG_EXAMPLE, rules={"preset": "kneipe"})))
    assert "kneipe" in out["error"]
    out = replay_text(json.dumps(dict(GAMELOG_EXAMPLE, rules={"overrides": {"bier": True}})))
    assert "bier" in out["error"]


def test_to_log_and_replay_reproduce_a_game_in_progress():
    game = replay_log(GAMELOG_EXAMPLE)
    doc = to_log(game)
    assert doc["rules"] == {"preset": "standard", "overrides": {"jule": "sieben"}}
    assert doc["players"] == [ANNA, BERT, CLARA, DIETER] and doc["starter"] == ANNA
    assert len(doc["events"]) == 5
    assert replay_log(doc).outcome() == game.outcome()


# --------------------------------------------------------------------------- purity


def test_importing_the_engine_loads_no_web_or_database_library():
    code = (
        "import sys, api.rules\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'flask', 'marshmallow', 'duckdb', 'plotly', 'flask_smorest', 'gunicorn', 'yaml'})\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == ""


# --------------------------------------------------------------------------- example 5

CYCLE = ["2-3-5", "1-1-4", "3-6-6", "1-2-6", "4-4-4", "1-1-1", "2-4-6", "1-1-6", "3-4-5", "1-5-6"]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_example_5_deckel_are_conserved_after_every_round_and_penalty_under_every_preset(preset):
    """A deterministic game: results from a fixed cycle, a penalty every ninth command."""
    r = rules(preset)
    game = Game.start(r, [ANNA, BERT, CLARA, DIETER], BERT)
    i = 0
    while not game.finished:
        assert i < 2000
        if i % 9 == 8:
            event = {"penalty": {"player": game.next_player, "deckel": 1, "reason": "Würfel fiel"}}
        else:
            event = t(game.next_player, CYCLE[i % len(CYCLE)])
        game.apply(parse_event(event, r))
        state = game.state()
        assert state.mitte + sum(state.stacks.values()) == 13
        i += 1
    assert game.loser in (ANNA, BERT, CLARA, DIETER)
    assert game.state().mitte == 13
    assert (game.finale is None) is game.blattschuss


def test_the_domain_events_of_a_blattschuss_game_tell_the_story():
    r = rules(deckel=2)
    game = Game.start(r, THREE, ANNA)
    told = []
    for e in blattschuss_events():
        told.extend(said(game.apply(parse_event(e, r))))
    assert [kind for kind, _, _ in told] == [
        "turn_recorded", "turn_recorded", "turn_recorded", "round_lost", "half_lost",
        "turn_recorded", "turn_recorded", "turn_recorded", "round_lost", "half_lost",
        "blattschuss", "game_lost",
    ]  # fmt: skip
    assert told[-2:] == [
        ("blattschuss", "Blattschuss! Clara hat beide Hälften verloren.", {"player": CLARA}),
        ("game_lost", "Clara verliert das Spiel und zahlt die Runde.",
         {"player": CLARA, "stacks": {ANNA: 0, BERT: 0, CLARA: 2}}),
    ]  # fmt: skip


def test_played_at_is_kept_in_the_exported_log():
    game = replay_log(GAMELOG_EXAMPLE)
    assert to_log(game)["played_at"] == "2026-11-27T20:15:00+01:00"


# --------------------------------------------------------------------------- turn facts


def fact(r, half, round_, order, player, dice, throws, hand, blind=False) -> dict:
    """A turn fact: where the turn was played and its result as ``evaluate`` scores it."""
    ev = evaluate([int(p) for p in dice.split("-")], hand, r)
    return {
        "half": half, "round": round_, "order": order, "player": player, "dice": dice,
        "throws": throws, "hand": hand, "blind": blind, "category": ev.category.value,
        "name": ev.name, "deckel": ev.deckel, "key": ev.key,
    }  # fmt: skip


def test_every_accepted_turn_is_a_fact_with_its_half_round_position_and_result():
    """The statistics' raw material: each accepted turn with its half, the index of its round,
    its position in the round (0 = the starter), the player, the dice, throws, hand and blind
    flags and its evaluation; ``current_round`` holds the facts of the round in progress."""
    r = rules(blind=True)
    game = play(r, THREE, ANNA, [
        t(ANNA, "1-1-4", 3, hand=False), {**t(BERT, "3-4-5"), "blind": True}, t(CLARA, "5-5-5"),
        t(BERT, "2-3-5", 2), t(CLARA, "1-1-1", 2, hand=True),
    ])  # fmt: skip
    assert [f.to_json() for f in game.turns] == [
        fact(r, 1, 0, 0, ANNA, "1-1-4", 3, False),
        fact(r, 1, 0, 1, BERT, "3-4-5", 1, True, blind=True),
        fact(r, 1, 0, 2, CLARA, "5-5-5", 1, True),
        fact(r, 1, 1, 0, BERT, "2-3-5", 2, False),
        fact(r, 1, 1, 1, CLARA, "1-1-1", 2, True),
    ]
    assert game.current_round() == game.turns[3:] == list(game.outcome().current_round)
    game.apply(parse_event(t(ANNA, "2-2-3"), r))  # Anna is worst: Schock aus takes the half
    assert game.current_round() == [] and game.turns[-1].to_json() == fact(
        r, 1, 1, 2, ANNA, "2-2-3", 1, True
    )
    game.apply(parse_event(t(ANNA, "3-3-6", 3), r))  # half 2, opened by Anna
    assert [f.to_json() for f in game.current_round()] == [
        fact(r, 2, 2, 0, ANNA, "3-3-6", 3, False)
    ]
