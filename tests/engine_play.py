"""What the engine's tests (tests/test_rules_*.py) write games with: house rules by name,
turn summaries as "1-1-4", single throws, and games played from events (the Deckel conserved
after every one: api/rules/RULES.md §9, example 5)."""

from __future__ import annotations

from api.rules import Game, RecordThrow, Ruleset, parse_event, ruleset_from_config

ANNA, BERT, CLARA, DIETER = "Anna", "Bert", "Clara", "Dieter"
FOUR = [ANNA, BERT, CLARA, DIETER]
THREE = [ANNA, BERT, CLARA]
#: the keys of a resolved round that every round has (schemas/GAMELOG.md)
ROUND_KEYS = ("half", "starter", "limit", "best", "worst", "deckel", "from", "repeated")


def rules(preset: str = "standard", **overrides: object) -> Ruleset:
    return ruleset_from_config({"preset": preset, "overrides": overrides})


def t(player: str, result: str, throws: int = 1, hand: bool | None = None, blind: bool = False):
    """A turn summary; ``result`` like "1-1-4"; more than one throw is assembled by default."""
    event = {"player": player, "dice": [int(p) for p in result.split("-")], "throws": throws}
    event["hand"] = (throws == 1) if hand is None else hand
    if blind:
        event["blind"] = True
    return event


def play(r: Ruleset, players: list[str], starter: str, events) -> Game:
    game = Game.start(r, players, starter)
    for e in events:
        game.apply(parse_event(e, r))
        assert game.mitte + sum(game.stacks.values()) == r.deckel
    return game


def apply(game: Game, *events):
    """Apply the events in order; every domain event they caused."""
    out = []
    for e in events:
        out.extend(game.apply(parse_event(e, game.rules)))
    return out


def last(game: Game) -> dict:
    """The last resolved round: the keys every round has."""
    r = game.rounds[-1].to_json()
    return {k: r[k] for k in ROUND_KEYS}


def pen(player: str, deckel: int | None = None, reason: str = "Würfel vom Tisch"):
    """A penalty; without ``deckel`` the house rules' amount."""
    body: dict[str, object] = {"player": player, "reason": reason}
    if deckel is not None:
        body["deckel"] = deckel
    return {"penalty": body}


# Four players, 3 Deckel, three Zahl rounds: the Mitte is empty, Bert, Clara and Dieter hold one
# Deckel each, Anna is out, Bert opens the next round.
PHASE2 = [
    t(ANNA, "5-6-6"), t(BERT, "4-6-6"), t(CLARA, "3-6-6"), t(DIETER, "2-3-5"),
    t(DIETER, "5-6-6"), t(ANNA, "4-6-6"), t(BERT, "3-6-6"), t(CLARA, "2-3-5"),
    t(CLARA, "5-6-6"), t(DIETER, "4-6-6"), t(ANNA, "3-6-6"), t(BERT, "2-3-5"),
]  # fmt: skip


def phase2_three(preset: str = "standard", **overrides) -> Game:
    """The game after :data:`PHASE2` with 3 Deckel and these house rules."""
    return play(rules(preset, deckel=3, **overrides), FOUR, ANNA, PHASE2)


def start_of_half_2(game: Game, opener: str) -> dict:
    """The state half 2 starts with: every Deckel back in the Mitte, every player in, ``opener``
    (the loser of half 1) throws first."""
    return {
        "phase": "half2",
        "mitte": game.rules.deckel,
        "stacks": dict.fromkeys(game.players, 0),
        "active": list(game.players),
        "next_player": opener,
        "limit": None,
    }


def throw(player: str, *dice: int, aside=(), sixes=0, blind=False, stop=False) -> RecordThrow:
    """One throw of a turn recorded throw by throw."""
    return RecordThrow(player, dice, tuple(aside), sixes, blind, stop)


def stop(player: str) -> RecordThrow:
    """The player ends the open turn as it stands."""
    return RecordThrow(player, None, stop=True)
