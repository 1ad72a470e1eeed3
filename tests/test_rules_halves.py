"""Halves, the Finale, penalties and the end of a game (api/rules/RULES.md): who loses, who holds the Deckel,
who starts — and what the engine tells about it: the domain events (the German sentence a player
reads and its payload) and the round and penalty records of the outcome (schemas/GAMELOG.md "The
outcome"). The limits of a penalty: 1 to 99 Deckel."""

from __future__ import annotations

import pytest
from engine_play import ANNA, BERT, CLARA, DIETER, FOUR, PHASE2, THREE, pen, rules, t

from api.rules import (
    Game,
    InvalidRules,
    MalformedInput,
    RuleViolation,
    parse_event,
)

WHY = "Würfel vom Tisch"  # the reason pen() gives


def play(r, players, starter, events) -> tuple[Game, list[dict]]:
    """The game after ``events`` and the domain events (JSON) of the last one."""
    game = Game.start(r, players, starter)
    told: list[dict] = []
    for e in events:
        told = [d.to_json() for d in game.apply(parse_event(e, r))]
    return game, told


def said(kind: str, message: str, **data) -> dict:
    return {"kind": kind, "message": message, "data": data}


def OUT(player: str) -> dict:
    return said("player_out", f"{player} hat keine Deckel mehr und ist in dieser Hälfte raus.",
                player=player)  # fmt: skip


# --------------------------------------------------------------------------- penalties (7, 10.17)


def penalty(player, deckel, source, message, round_=0, half=1) -> tuple[dict, dict]:
    """The penalty event and the outcome's penalty record of one Deckel penalty."""
    event = said(
        "penalty",
        f"Strafe für {player} ({WHY}): {message}.",
        player=player,
        deckel=deckel,
        **{"from": source},
        reason=WHY,
    )
    record = {"half": half, "round": round_, "player": player, "deckel": deckel}
    return event, record | {"from": source, "reason": WHY}


@pytest.mark.parametrize(
    ("rule", "deckel", "events", "told", "then", "stacks"),
    [
        (
            "7: a penalty Deckel comes from the Mitte",
            13,
            [pen(BERT, 2)],
            penalty(BERT, 2, "mitte", "2 Deckel aus der Mitte"),
            [],
            {ANNA: 0, BERT: 2, CLARA: 0},
        ),
        (
            "10.17: a penalty takes only what is left in the Mitte",
            4,
            [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5"), pen(ANNA, 2)],
            penalty(ANNA, 1, "mitte", "1 Deckel aus der Mitte", round_=1),
            [OUT(BERT)],  # 10.16: between rounds elimination is checked at once
            {ANNA: 1, BERT: 0, CLARA: 3},
        ),
        (
            "10.17: with the Mitte empty it comes from the other player holding the most",
            3,
            [*PHASE2, t(BERT, "1-1-6"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"), pen(CLARA, 1)],
            penalty(CLARA, 1, DIETER, "1 Deckel von Dieter", round_=4),
            [],
            {ANNA: 0, BERT: 0, CLARA: 2, DIETER: 1},
        ),
        (
            "10.17: capped by the payer's stack",
            3,
            [*PHASE2, pen(CLARA, 3)],
            penalty(CLARA, 1, DIETER, "1 Deckel von Dieter", round_=3),
            [OUT(DIETER)],
            {ANNA: 0, BERT: 1, CLARA: 2, DIETER: 0},
        ),
    ],
)
def test_a_penalty_tells_who_received_how_many_deckel_from_where(
    rule, deckel, events, told, then, stacks
):
    """api/rules/RULES.md §7 and 10.17: the penalty event names the offender, the Deckel they received, the
    source ("mitte" or the paying player) and the reason; the outcome keeps the same as a record
    with its half and the index of the round it happened in."""
    players = THREE if len(stacks) == 3 else FOUR
    game, events_told = play(rules(deckel=deckel), players, ANNA, events)
    event, record = told
    assert events_told == [event, *then], rule
    assert game.outcome().penalties[-1].to_json() == record, rule
    assert game.state().stacks == stacks, rule


def test_a_penalty_of_99_deckel_takes_the_whole_mitte_and_the_half_at_once():
    """PENALTY 1–99 (the limits of a penalty): 99 Deckel take what the Mitte holds (13); the
    offender then holds every Deckel and loses the half at once (10.17)."""
    game, told = play(rules(), THREE, ANNA, [pen(BERT, 99)])
    stacks = {ANNA: 0, BERT: 13, CLARA: 0}
    event, record = penalty(BERT, 13, "mitte", "13 Deckel aus der Mitte")
    assert told == [
        event,
        said("half_lost", "Bert hat alle Deckel und verliert die erste Hälfte.", player=BERT,
             half=1, stacks=stacks),
    ]  # fmt: skip
    assert game.outcome().penalties == (game.penalties[0],)
    assert game.penalties[0].to_json() == record
    assert game.state().to_json() == {
        "phase": "half2",
        "mitte": 13,
        "stacks": dict.fromkeys(THREE, 0),
        "active": THREE,
        "next_player": BERT,
        "limit": None,
    }


@pytest.mark.parametrize("deckel", [0, 100, -1, 1.5, True, "2"])
def test_a_penalty_outside_1_to_99_deckel_is_refused(deckel):
    """The limits of a penalty: 1 to 99 Deckel, in an event (MalformedInput on ``deckel``) and
    as the house rule ``penalty`` (InvalidRules on ``penalty``)."""
    with pytest.raises(MalformedInput) as err:
        parse_event(pen(BERT, deckel), rules())
    assert (err.value.code, err.value.field) == ("invalid_input", "deckel")
    assert (
        err.value.message == f"„deckel“ muss eine ganze Zahl von 1 bis 99 sein, nicht {deckel!r}."
    )
    with pytest.raises(InvalidRules) as err:
        rules(penalty=deckel)
    assert (err.value.code, err.value.field) == ("invalid_rules", "penalty")


@pytest.mark.parametrize("deckel", [1, 99])
def test_a_penalty_of_1_or_99_deckel_is_accepted(deckel):
    """The limits of a penalty are inclusive: 1 and 99 Deckel, in an event and as house rule."""
    assert parse_event(pen(BERT, deckel), rules()).deckel == deckel
    assert rules(penalty=deckel).penalty == deckel


def test_penalty_mode_round_loser_tells_the_offender_loses_the_round():
    """api/rules/RULES.md §7 / 10.17, mode "offender loses the round": no Deckel move (0, no source in the
    event; the record says "mitte"), the offender is the round's loser whatever they throw."""
    r = rules(penalty_mode="round_loser")
    game, told = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    told = [d.to_json() for d in game.apply(parse_event(pen(BERT), r))]
    assert told == [
        said("penalty", f"Strafe für Bert ({WHY}): verliert die Runde.", player=BERT, deckel=0,
             reason=WHY),
    ]  # fmt: skip
    record = {"half": 1, "round": 1, "player": BERT, "deckel": 0, "from": "mitte", "reason": WHY}
    assert [p.to_json() for p in game.outcome().penalties] == [record]
    with pytest.raises(RuleViolation) as err:
        game.apply(parse_event(pen(CLARA), r))
    assert (err.value.code, err.value.field, err.value.message) == (
        "round_lost_already",
        None,
        "Bert verliert diese Runde schon wegen einer Strafe.",
    )


# --------------------------------------------------------------------------- the end of a round


def turn(player: str, name: str, dice: str, wurf: str = "1 Wurf") -> dict:
    return said("turn_recorded", f"{player}: {name} ({dice}, {wurf}).", player=player, name=name,
                dice=dice)  # fmt: skip


def lost(message: str, player: str, deckel: int, source: str, best: str, result: str) -> dict:
    return said("round_lost", message, player=player, deckel=deckel, **{"from": source},
                best=best, best_result=result)  # fmt: skip


def repeated(why: str, starter: str) -> dict:
    message = f"{why}: die Runde wird wiederholt, {starter} beginnt neu."
    return said("round_repeated", message, starter=starter)


def record(starter, limit, best, worst, deckel, source, results=(None, None), value=None):
    out = {"half": 1, "starter": starter, "limit": limit, "best": best, "worst": worst}
    out |= {"deckel": deckel, "from": source, "repeated": source is None}
    if source is None:
        return out
    return out | {"best_result": results[0], "worst_result": results[1], "value": value}


CLARA_HOLDS_1 = [t(ANNA, "5-6-6"), t(BERT, "4-6-6"), t(CLARA, "2-3-5")]  # 1 from the Mitte
ROUND_ENDS = [
    (
        "5.4: Schock aus gives the worst every Deckel they do not hold yet, and the half",
        dict(deckel=3),
        FOUR,
        [*PHASE2, t(BERT, "2-3-5"), t(CLARA, "1-1-1"), t(DIETER, "2-4-6")],
        [
            turn(DIETER, "Zahl 642", "2-4-6"),
            lost("Schock aus von Clara! Bert bekommt alle Deckel.", BERT, 2, "all", CLARA,
                 "Schock aus"),
            said("half_lost", "Bert hat alle Deckel und verliert die erste Hälfte.", player=BERT,
                 half=1, stacks={ANNA: 0, BERT: 3, CLARA: 0, DIETER: 0}),
        ],
        record(BERT, 1, CLARA, BERT, 2, "all", ("Schock aus", "Zahl 532"), 3),
    ),
    (
        "4.5 + 10.17: a Schock aus ends the round before the offender has thrown",
        dict(preset="nrw", penalty_mode="round_loser"),
        THREE,
        [pen(CLARA), t(ANNA, "2-3-5"), t(BERT, "1-1-1")],
        [
            turn(BERT, "Schock aus", "1-1-1"),
            lost("Schock aus von Bert! Clara bekommt alle Deckel.", CLARA, 13, "all", BERT,
                 "Schock aus"),
            said("half_lost", "Clara hat alle Deckel und verliert die erste Hälfte.",
                 player=CLARA, half=1, stacks={ANNA: 0, BERT: 0, CLARA: 13}),
        ],
        record(ANNA, 1, BERT, CLARA, 13, "all", ("Schock aus", None), 13),
    ),
    (
        "4.5 + 5.4 (costs the total) + 10.17: the offender who has not thrown receives the total",
        dict(preset="nrw", penalty_mode="round_loser", schock_aus="total"),
        THREE,
        [pen(CLARA), t(ANNA, "2-3-5"), t(BERT, "1-1-1")],
        [
            turn(BERT, "Schock aus", "1-1-1"),
            lost("Clara bekommt 13 Deckel aus der Mitte – Schock aus von Bert; Clara verliert die "
                 "Runde wegen einer Strafe.", CLARA, 13, "mitte", BERT, "Schock aus"),
            said("half_lost", "Clara hat alle Deckel und verliert die erste Hälfte.",
                 player=CLARA, half=1, stacks={ANNA: 0, BERT: 0, CLARA: 13}),
        ],
        record(ANNA, 1, BERT, CLARA, 13, "mitte", ("Schock aus", None), 13),
    ),
    (
        "10.9: an unresolved tie at the bottom repeats the round with the same starter",
        {},
        THREE,
        [t(ANNA, "2-3-5", 2), t(BERT, "2-3-5", 2), t(CLARA, "1-1-2")],
        [
            turn(CLARA, "Schock 2", "1-1-2"),
            repeated("Gleichstand ganz unten (Anna und Bert)", ANNA),
        ],
        record(ANNA, 2, None, None, 0, None),
    ),
    (
        "4.4: all equal repeats the round",
        {},
        THREE,
        [t(ANNA, "2-3-5"), t(BERT, "2-3-5"), t(CLARA, "2-3-5")],
        [turn(CLARA, "Zahl 532", "2-3-5"), repeated("Alle haben gleich geworfen", ANNA)],
        record(ANNA, 1, None, None, 0, None),
    ),
    (
        "10.9: a tie at the top repeats the round when the best has to pay",
        dict(deckel=3),
        FOUR,
        [*PHASE2, t(BERT, "1-1-3"), t(CLARA, "1-1-3"), t(DIETER, "2-3-5")],
        [
            turn(DIETER, "Zahl 532", "2-3-5"),
            repeated("Gleichstand ganz oben, und der Beste muss zahlen", BERT),
        ],
        record(BERT, 1, None, None, 0, None),
    ),
    (
        "5.2: with the Mitte empty the best pays from their stack, capped; 5.3: then out",
        dict(deckel=3),
        FOUR,
        [*PHASE2, t(BERT, "1-1-6"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5")],
        [
            turn(DIETER, "Zahl 532", "2-3-5"),
            lost("Dieter bekommt 1 Deckel von Bert – Schock 6 von Bert.", DIETER, 1, BERT, BERT,
                 "Schock 6"),
            OUT(BERT),
        ],
        record(BERT, 1, BERT, DIETER, 1, BERT, ("Schock 6", "Zahl 532"), 6),
    ),
    (
        "5.5: passing on, the best pays from their stack (1 Deckel) though the Mitte holds some",
        dict(passing_on=True),
        THREE,
        [*CLARA_HOLDS_1, t(CLARA, "1-1-6"), t(ANNA, "4-6-6"), t(BERT, "2-3-5")],
        [
            turn(BERT, "Zahl 532", "2-3-5"),
            lost("Bert bekommt 1 Deckel von Clara – Schock 6 von Clara.", BERT, 1, CLARA, CLARA,
                 "Schock 6"),
        ],
        record(CLARA, 1, CLARA, BERT, 1, CLARA, ("Schock 6", "Zahl 532"), 6),
    ),
    (
        "10.9: passing on, a tie at the top repeats when a tied player holds Deckel (even 1)",
        dict(passing_on=True),
        THREE,
        [*CLARA_HOLDS_1, t(CLARA, "1-1-6"), t(ANNA, "1-1-6"), t(BERT, "2-3-5")],
        [
            turn(BERT, "Zahl 532", "2-3-5"),
            repeated("Gleichstand ganz oben, und der Beste muss zahlen", CLARA),
        ],
        record(CLARA, 1, None, None, 0, None),
    ),
    (
        "3.4 + 10.12: a blind turn doubles the best result's Deckel",
        dict(blind=True),
        THREE,
        [t(ANNA, "1-1-3"), t(BERT, "2-3-5", blind=True), t(CLARA, "2-4-6")],
        [
            turn(CLARA, "Zahl 642", "2-4-6"),
            lost("Bert bekommt 6 Deckel aus der Mitte – Schock 3 von Anna.", BERT, 6, "mitte",
                 ANNA, "Schock 3"),
        ],
        record(ANNA, 1, ANNA, BERT, 6, "mitte", ("Schock 3", "Zahl 532"), 6),
    ),
    (
        "10.17: the offender loses the round whatever they throw",
        dict(penalty_mode="round_loser"),
        THREE,
        [pen(CLARA), t(ANNA, "1-1-3"), t(BERT, "2-3-5"), t(CLARA, "4-5-6")],
        [
            turn(CLARA, "Straße", "4-5-6"),
            lost("Clara bekommt 3 Deckel aus der Mitte – Schock 3 von Anna; Clara verliert die "
                 "Runde wegen einer Strafe.", CLARA, 3, "mitte", ANNA, "Schock 3"),
        ],
        record(ANNA, 1, ANNA, CLARA, 3, "mitte", ("Schock 3", "Straße"), 3),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "options", "players", "events", "told", "kept"), ROUND_ENDS)
def test_each_end_of_a_round_is_told_by_its_events_and_kept_as_a_round(
    rule, options, players, events, told, kept
):
    """api/rules/RULES.md §4, 5 and 10: the last turn of a round tells its result, then who received how many
    Deckel from where ("mitte", the paying best player, "all") and because of whose result — or
    that the round is repeated and who starts it again; the outcome keeps the round (schemas/GAMELOG.md:
    best, worst, Deckel after caps, source, results, value before caps)."""
    options = dict(options)
    r = rules(options.pop("preset", "standard"), **options)
    game, events_told = play(r, players, ANNA, events)
    assert events_told == told, rule
    assert game.outcome().rounds[-1].to_json() == kept, rule


def test_last_receiver_starts_whoever_received_last_a_penalty_or_a_round():
    """api/rules/RULES.md §4.1 (S0 variant) and 10.18: under "last receiver starts" a penalty's receiver opens
    the next round, and after a round whose loser receives Deckel that loser opens."""
    r = rules(next_starter="last_receiver", penalty=1)
    game, _ = play(r, THREE, ANNA, [pen(BERT)])
    assert game.next_player == BERT
    game.apply(parse_event(t(BERT, "1-1-3"), r))
    game.apply(parse_event(t(CLARA, "2-3-5"), r))
    game.apply(parse_event(t(ANNA, "4-5-6"), r))  # Clara receives 3 from the Mitte
    assert game.next_player == CLARA


@pytest.mark.parametrize("ties", ["throws_then_repeat", "later_lower_unless_fewer", "earlier_wins"])
def test_hand_beats_assembled_comes_before_every_tie_rule_even_with_more_throws(ties):
    """api/rules/RULES.md §10.3: "hand beats assembled" breaks a tie at equal category and height before the
    tie rule of 4.4: Clara's Schock 3 from the hand in 3 throws beats Bert's assembled one in 2."""
    r = rules(hand_beats_assembled=["schock"], ties=ties)
    events = [t(ANNA, "2-3-5", 3), t(BERT, "1-1-3", 2), t(CLARA, "1-1-3", 3, hand=True)]
    game, _ = play(r, THREE, ANNA, events)
    kept = game.outcome().rounds[-1].to_json()
    assert (kept["best"], kept["worst"], kept["deckel"]) == (CLARA, ANNA, 3)
