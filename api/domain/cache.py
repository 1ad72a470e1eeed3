"""Per process: engine state of recently used games and per-game locks."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .runtime import GameRuntime


@dataclass
class GameCache:
    """Per process: engine state of recently used games.

    Nothing correctness depends on lives here alone: several server processes write to one
    database, so a cached state is used only after checking its ``last_seq`` against the
    game's stored version (``Repository.game_version``, inside the write transaction for a
    write), and a state is put here only after the transaction that read or wrote it
    committed (``Repository.on_commit``). The locks protect the runtime objects of this
    process (one thread feeds or reads a game's runtime at a time; striped: a fixed set);
    writes of every process are serialised by the database's write lock."""

    size: int = 256
    _items: OrderedDict[int, GameRuntime] = field(default_factory=OrderedDict)
    # re-entrant: a write's reads under the lock (``GameUseCases.game`` inside a write that
    # api/http/idempotency.py opened) take it again
    _locks: tuple[threading.RLock, ...] = field(
        default_factory=lambda: tuple(threading.RLock() for _ in range(64))
    )
    _guard: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def locked(self, key: int) -> Iterator[None]:
        """Hold the lock of a game (its id) or of a Stammtisch's players (minus its id)."""
        with self._locks[key % len(self._locks)]:
            yield

    def get(self, game_id: int) -> GameRuntime | None:
        with self._guard:
            rt = self._items.get(game_id)
            if rt is not None:
                self._items.move_to_end(game_id)
            return rt

    def put(self, game_id: int, rt: GameRuntime) -> None:
        with self._guard:
            self._items[game_id] = rt
            self._items.move_to_end(game_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def drop(self, game_id: int) -> None:
        with self._guard:
            self._items.pop(game_id, None)
