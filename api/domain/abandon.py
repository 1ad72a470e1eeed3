"""Calling a game off ("Spiel abbrechen"): the game and its log are kept and shown as called
off; it takes no more entries and is out of the statistics (its facts are removed, and a
rebuild does not bring them back). The status lives in ``games.abandoned_at`` (migration
0014), read fresh on every use: another server process may have called the game off."""

from __future__ import annotations

from dataclasses import replace

from ..rules import DomainEvent, GameAbandoned
from ..storage import FactsWrite, Stammtisch
from ..storage.records import ROW_TABLES
from .base import UseCases
from .errors import Conflict
from .runtime import GameView

#: the facts of a game called off: none (the statistics forget it)
NO_ROWS = FactsWrite(None, replace={table: [] for table in ROW_TABLES})


class AbandonUseCases(UseCases):
    def abandon_game(self, st: Stammtisch, game_id: int) -> GameView:
        """Call the running game ``game_id`` off (409 if it is decided or called off)."""
        with self.writing(game_id):
            rt = self._runtime(st, game_id)
            self.refuse_abandoned(rt, game_id)
            if rt.game.finished:
                raise Conflict(
                    "Das Spiel ist schon entschieden; abbrechen lässt sich nur ein laufendes.",
                    code="game_finished",
                )
            self.cache.drop(game_id)
            now = self.clock()
            self.repo.abandon_game(game_id, now)
            self.repo.write_facts(game_id, NO_ROWS)
            assert rt.record is not None
            number = rt.record.number
            event = DomainEvent(f"Spiel {number} abgebrochen.", GameAbandoned(game_id, number))
            # the outbox's seq after the last entry: no entry can take it any more
            self.repo.append_events(st.id, game_id, rt.last_seq + 1, [event.to_json()], now)
        rt.record = replace(rt.record, status="abandoned")
        return GameView(rt.record, st.slug, rt)
