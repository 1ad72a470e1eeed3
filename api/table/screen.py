"""The context of the game screen's changing part (``templates/table/screen.html``).

One builder for both painters: the server's game page (``api/web/games.py``) and the phone's
offline engine (``browser.py``). What only the server knows (the URLs, the CSRF token, the game's
number) comes in as plain values; everything else is read from the engine's game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..rules import DomainEvent, Game
from .entry import FormErrors, TurnInput
from .views import BIG, TURN, board, last_round, protocol, turn_options

#: the URLs the screen links and posts to (``urls`` of the context)
URL_NAMES = ("game", "record_turn", "record_penalty", "undo", "new_game", "history", "stats")


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
) -> dict[str, Any]:
    """Everything ``table/screen.html`` reads."""
    return {
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
