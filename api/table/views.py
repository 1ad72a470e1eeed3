"""View models of the game screen, read from the engine's game and its domain events.

The board, the throw buttons and the history are *read* from the engine state (``Game``) and the
German messages of its domain events; nothing here decides a rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..rules import DomainEvent, EventKind, Game, Half, HalfLost, Phase, throws_word

#: the engine's German caption of each phase
PHASE_LABEL = {phase.value: phase.caption for phase in Phase}
#: events shown as a big banner (the rest as a sentence)
BIG = frozenset(
    {EventKind.HALF_LOST, EventKind.FINALE_STARTED, EventKind.BLATTSCHUSS, EventKind.GAME_LOST}
)
#: events of a turn (the protocol lists them under their round)
TURN = frozenset({EventKind.TURN_RECORDED, EventKind.THROW_RECORDED})


def board(game: Game) -> dict[str, Any]:
    """Mitte, every stack, who is out, whose turn, the round's limit, the half indicator."""
    state = game.state()
    phase = state.phase.value
    finished = phase == "finished"
    finalists = game.finale or []
    rows = []
    for name in game.players:
        in_play = name in state.active
        rows.append(
            {
                "name": name,
                "stack": state.stacks[name],
                "next": name == state.next_player,
                "opener": not finished and name == game.starter,
                "out": not finished and phase != "finale" and not in_play,
                "benched": phase == "finale" and name not in finalists,
                "halves_lost": [i + 1 for i, n in enumerate(game.half_losers) if n == name],
                "loser": name == game.loser,
            }
        )
    limit = state.limit
    half = state.phase.half
    return {
        "round_no": sum(1 for r in game.rounds if r.half is half) + 1,
        "phase": phase,
        "phase_label": PHASE_LABEL[phase],
        "finished": finished,
        "mitte": state.mitte,
        "total": game.total,
        "rows": rows,
        "next_player": state.next_player,
        "opener": None if finished else game.starter,
        "limit": limit,
        "limit_label": throws_word(limit) if limit else None,
        "current_round": game.current_round(),
        "finale": finalists,
        "blattschuss": game.blattschuss,
        "loser": game.loser,
        "half_losers": list(game.half_losers),
        "active": list(state.active),
    }


def turn_options(game: Game) -> dict[str, Any]:
    """The throw buttons this turn may use: 1 … the round's limit (the opener: the maximum),
    "aus der Hand" variants only when the house rules care, "blind" only when allowed."""
    rules = game.rules
    top = game.limit or rules.max_throws
    hand_matters = bool(rules.hand_only or rules.hand_beats_assembled)
    buttons = []
    for n in range(1, top + 1):
        buttons.append({"value": str(n), "label": throws_word(n), "hint": None})
        if hand_matters and n > 1:
            buttons.append({"value": f"{n}h", "label": throws_word(n), "hint": "aus der Hand"})
    if rules.blind:
        buttons.append({"value": "blind", "label": "Blind", "hint": throws_word(1)})
    options = rules.options()
    return {
        "dice_count": rules.dice_count,
        "buttons": buttons,
        "hand_matters": hand_matters,
        "is_opener": game.limit is None,
        "max_throws": rules.max_throws,
        "penalties": options["penalty"] is not None or options["penalty_mode"] == "round_loser",
        "penalty_mode": options["penalty_mode"],
        "penalty_deckel": options["penalty"],
    }


@dataclass
class Round:
    number: int
    turns: list[str] = field(default_factory=list)
    outcome: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)


@dataclass
class Section:
    title: str
    items: list[Round] = field(default_factory=list)


def protocol(entry_events: list[tuple[int, list[DomainEvent]]]) -> list[Section]:
    """The game so far as halves → rounds → the turns' and the outcome's German sentences."""
    sections = [Section(Half.HALF1.caption)]
    pending = Round(1)

    def close() -> None:
        nonlocal pending
        sections[-1].items.append(pending)
        pending = Round(pending.number + 1)

    for _seq, events in entry_events:
        for event in events:
            kind, message = event.kind.value, event.message
            if kind in TURN:
                pending.turns.append(message)
            elif kind in (EventKind.ROUND_LOST, EventKind.ROUND_REPEATED):
                pending.outcome.append((kind, message))
                close()
            elif kind == EventKind.FINALE_STARTED:
                finale = Section(Half.FINALE.caption, [Round(0, outcome=[(kind, message)])])
                sections.append(finale)
                pending = Round(1)
            else:  # player out, penalty, half lost, Blattschuss, game lost
                items = sections[-1].items
                if not pending.turns and items and kind != EventKind.PENALTY:
                    items[-1].outcome.append((kind, message))
                else:
                    pending.outcome.append((kind, message))
                if isinstance(event.data, HalfLost) and event.data.half is Half.HALF1:
                    if pending.turns or pending.outcome:
                        close()
                    sections.append(Section(Half.HALF2.caption))
                    pending = Round(1)
    if pending.turns or pending.outcome:
        sections[-1].items.append(pending)
    return [s for s in sections if s.items]


def last_round(entry_events: list[tuple[int, list[DomainEvent]]]) -> str | None:
    """The sentence of the last resolved round ("Dieter bekommt 4 Deckel – …"), if any."""
    for _seq, events in reversed(entry_events):
        for event in reversed(events):
            if event.kind in (EventKind.ROUND_LOST, EventKind.ROUND_REPEATED):
                return event.message
    return None
