"""The luck figures of finished games (api/rules/luck.py), computed by the statistics refresher.

The write that finishes a game does not compute them (a turn's answer never waits for the
odds): before each refresh of some Stammtische (:func:`dashboard.readmodel.refresh`),
:func:`update_luck` asks the row store for their finished games whose figures are missing or
were computed for an earlier version of the game (an entry undone and played differently:
``Statistics.luck_pending``), replays each game's log in the engine, sums the luck and the
chances given away per player (:func:`api.rules.luck.game_luck`) and stores the rows of all of
them in one transaction (``luck_facts``, migration 0017). The set-based query
``dashboard/queries/luck.sql`` adds them up per player and period. So a finished game costs one
replay more in the next refresh; a database upgraded from before this pays for all its games in
its first refresh (the odds of a ruleset are computed once per process and target:
:func:`api.rules.odds.solver`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from api.domain.runtime import GameRuntime, effective_entries, header_of
from api.rules import game_luck
from api.storage import Repository

#: the columns of ``luck_facts`` the statistics read (the version is not needed there)
LUCK_INPUT = (
    "game_id", "player_id", "turns", "expected", "survived", "split", "luck", "given_away",
)  # fmt: skip
#: that table in DuckDB
LUCK_SCHEMA = (
    "CREATE TABLE luck_facts (game_id BIGINT, player_id BIGINT, turns INTEGER, "
    "expected DOUBLE, survived INTEGER, split INTEGER, luck DOUBLE, given_away DOUBLE)"
)


def luck_rows(repo: Repository, game_id: int) -> list[dict[str, Any]]:
    """The rows of ``luck_facts`` of one stored game, replayed from its log (none for a game
    that is gone)."""
    record = repo.get_game_by_id(game_id)
    log = repo.load_log(game_id)
    if record is None or not log:
        return []
    seq = log[-1].seq
    game = GameRuntime.replay(header_of(record), effective_entries(log), seq).game
    ids = {p.name: p.player_id for p in record.players}
    return [
        {
            "game_id": game_id,
            "player_id": ids[name],
            "seq": seq,
            "turns": sums.turns,
            "expected": sums.expected,
            "survived": sums.survived,
            "split": sums.split,
            "luck": sums.luck,
            "given_away": sums.given_away,
        }
        for name, sums in game_luck(game).items()
    ]


def update_luck(repo: Repository, stammtische: Collection[int]) -> int:
    """Compute and store the missing luck figures of the finished games of ``stammtische``;
    the number of games computed."""
    pending = repo.luck_pending(stammtische)
    if not pending:
        return 0
    repo.write_luck({game_id: luck_rows(repo, game_id) for game_id, _ in pending})
    return len(pending)
