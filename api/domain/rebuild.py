"""Rebuild: replay every game's log and rewrite all its facts (the log is the truth)."""

from __future__ import annotations

from collections.abc import Callable

from .abandon import NO_ROWS
from .base import UseCases
from .facts import facts_write


class RebuildUseCases(UseCases):
    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Replay every game's log and rewrite all its facts. Returns the number of games."""
        ids = self.repo.game_ids()
        for n, game_id in enumerate(ids, start=1):
            record = self.repo.get_game_by_id(game_id)
            assert record is not None
            with self.cache.locked(game_id):
                rt = self._replay(record)
                assert rt.facts is not None
                with self.repo.transaction():  # a game called off stays out of the statistics
                    called_off = record.status == "abandoned"
                    self.repo.write_facts(
                        game_id, NO_ROWS if called_off else facts_write(rt.facts, None)
                    )
                self.cache.put(game_id, rt)
            if progress:
                progress(n, len(ids))
        return len(ids)
