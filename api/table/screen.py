"""The context of the game screen's changing part (``templates/table/screen.html``).

One builder for both painters: the server's game page (``api/web/games.py``) and the phone's
offline engine (``browser.py``). What only the server knows (the URLs, the CSRF token, the game's
number) comes in as plain values; everything else is read from the engine's game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..rules import DomainEvent, Game, OpenTurn, format_dice, throws_word, turn_state
from .chancen import NOTHING_TO_BEAT, Advice, advice, round_target
from .entry import FormErrors, ThrowInput, TurnInput, thrown_dice
from .views import BIG, TURN, board, last_round, protocol, turn_options

#: the URLs the screen links and posts to (``urls`` of the context)
URL_NAMES = (
    "game", "record_turn", "record_throw", "record_penalty", "undo", "new_game", "history",
    "stats",
)  # fmt: skip
#: what "Chancen zeigen" says while a die of the throw is missing
DICE_FIRST = "Erst alle Würfel des Wurfs wählen, dann „Chancen zeigen“."


def throw_by_throw(
    game: Game,
    throwing: OpenTurn | None,
    odds_shown: str = "off",
    entered: ThrowInput | None = None,
    show_odds: bool = False,
) -> dict[str, Any] | None:
    """The throw-by-throw card ("Wurf für Wurf"): the open turn (what is set aside, the
    throws used of the limit), the dice in the cup, the decisions this throw may take and,
    when the Stammtisch shows them and the dice are chosen, the odds ("Chancen")."""
    state = turn_state(game, throwing)
    if state is None:
        return None
    opened = state.open
    rules = game.rules
    in_cup = opened.dice_in_cup if opened is not None else rules.dice_count
    number = (opened.throws_used if opened is not None else 0) + 1
    entered = entered or ThrowInput()
    entered = ThrowInput(
        dice=(entered.dice + [""] * in_cup)[:in_cup],
        aside=(entered.aside + [False] * in_cup)[:in_cup],
        decision=entered.decision,
    )
    last = number >= state.limit
    chancen: Advice | None = None
    to_beat = round_target(game) is not None and game.limit is not None
    if odds_shown != "off":
        if not to_beat:
            chancen = Advice(note=NOTHING_TO_BEAT)
        elif show_odds:
            dice = thrown_dice(entered, FormErrors())
            chancen = Advice(note=DICE_FIRST) if dice is None else advice(game, throwing, dice)
    kept = opened.kept if opened is not None else ()
    return {
        "player": state.player,
        "open": opened is not None,
        "kept": format_dice(kept) if kept else None,
        "number": number,
        "limit": state.limit,
        "limit_label": throws_word(state.limit),
        "in_cup": in_cup,
        "last": last,
        "sixes": [] if last or not rules.sixes_turning else [n for n in (1, 2) if n < in_cup],
        "entered": entered,
        "odds_on": odds_shown != "off",
        "to_beat": to_beat,
        "chancen": chancen,
    }


def screen(
    game: Game,
    entry_events: list[tuple[int, list[DomainEvent]]],
    *,
    seq: int,
    number: int,
    urls: Mapping[str, str],
    csrf: str,
    open_turn: str | None = None,
    last_entry: str | None = None,
    abandoned: bool = False,
    announcements: Sequence[tuple[str, str]] = (),
    entered: TurnInput | None = None,
    errors: FormErrors | None = None,
    penalty: Mapping[str, str] | None = None,
    confirm_undo: bool = False,
    throwing: OpenTurn | None = None,
    odds_shown: str = "off",
    throw_entered: ThrowInput | None = None,
    show_odds: bool = False,
) -> dict[str, Any]:
    """Everything ``table/screen.html`` reads. ``throwing``: the open throw-by-throw turn;
    ``odds_shown``: the Stammtisch's setting; ``throw_entered``/``show_odds``: the throw form
    as entered and whether its odds were asked for ("Chancen zeigen")."""
    return {
        "throw": throw_by_throw(game, throwing, odds_shown, throw_entered, show_odds),
        "board": board(game),
        "turn": turn_options(game),
        "protocol": protocol(entry_events),
        "last_round": last_round(entry_events),
        "seq": seq,
        "number": number,
        "urls": dict(urls),
        "form_token": csrf,
        "open_turn": open_turn,
        "last_entry": last_entry,
        "abandoned": abandoned,
        "announcements": list(announcements),
        "banner_kinds": BIG,
        "turn_kinds": TURN,
        "entered": entered or TurnInput(),
        "errors": errors or FormErrors(),
        "penalty": penalty or {"player": "", "reason": "", "deckel": str(game.rules.penalty or "")},
        "confirm_undo": confirm_undo,
    }


def announced(events: Sequence[DomainEvent]) -> list[tuple[str, str]]:
    """Domain events as the screen announces them: (kind, German sentence)."""
    return [(event.kind.value, event.message) for event in events]
