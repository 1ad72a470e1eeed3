"""What every use case stands on: one repository (one request), the process's cache, a clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ..rules import InvalidRules, Ruleset, ruleset_from_config
from ..storage import GameRecord, Repository, Stammtisch
from .errors import Conflict, Invalid, NotFound
from .facts import derive_facts, seating_of
from .runtime import GameCache, GameRuntime, effective_entries, header_of

ABANDONED = "Dieses Spiel wurde abgebrochen; es nimmt keine Einträge mehr."


def utcnow() -> datetime:
    """Now, in UTC, without tzinfo (how the stores keep moments)."""
    return datetime.now(UTC).replace(tzinfo=None)


def rules_of(config: Any) -> Ruleset:
    """A ruleset from a ``{"preset", "overrides"}`` config; a bad one is invalid input."""
    try:
        return ruleset_from_config(config)
    except InvalidRules as err:
        raise Invalid(err.message, field="rules", code="invalid_rules") from err


class UseCases:
    """The state the use-case mixins of :class:`~api.domain.Services` share."""

    def __init__(
        self,
        repo: Repository,
        cache: GameCache,
        clock: Callable[[], datetime] = utcnow,
        loopback: bool = False,
    ) -> None:
        self.repo = repo
        self.cache = cache
        self.clock = clock
        #: webhooks may name this machine's loopback (``WEBHOOK_LOOPBACK``, api/config.py)
        self.loopback = loopback
        #: the locks this object holds in its open write (None: no write open)
        self._held: set[int] | None = None

    @contextmanager
    def writing(self, lock: int | None = None) -> Iterator[None]:
        """The one write transaction of a command, under the process's lock ``lock`` (a
        game's id, or minus a Stammtisch's id for its players; None: none): the lock first,
        then the transaction (``BEGIN IMMEDIATE`` on SQLite), one commit at the end.

        Inside an open write of this object (an entrypoint that opened it around the whole
        request: the idempotent answer, the version check and the command in one transaction)
        it only takes the lock if that write does not hold it yet: no second transaction is
        entered."""
        held = self._held
        if held is not None:
            if lock is None or lock in held:
                yield
            else:
                with self.cache.locked(lock):
                    yield
            return
        with self.cache.locked(lock) if lock is not None else nullcontext():
            with self.repo.transaction():
                self._held = {lock} if lock is not None else set()
                try:
                    yield
                finally:
                    self._held = None

    def _game(self, st: Stammtisch, game_id: int) -> GameRecord:
        record = self.repo.get_game(st.id, game_id)
        if record is None:
            raise NotFound(f"Kein Spiel {game_id} an diesem Stammtisch.", code="game_not_found")
        return record

    def _runtime(self, st: Stammtisch, game_id: int) -> GameRuntime:
        """The game's engine state at its stored version (caller holds the game's lock; a
        write also its transaction, so nobody can move the game on until it commits).

        A cached state is used only when it is at the version the database holds (one index
        look-up): another server process may have moved the game on. Otherwise the stored
        log is replayed, and the state cached once its reads are committed."""
        rt = self.cache.get(game_id)
        if rt is not None and rt.record is not None:
            if rt.record.stammtisch_id != st.id:
                raise NotFound(f"Kein Spiel {game_id} an diesem Stammtisch.", code="game_not_found")
            version, called_off = self.repo.game_state(game_id)
            if version == rt.last_seq:
                if called_off and rt.record.status != "abandoned":
                    rt.record = replace(rt.record, status="abandoned")
                return rt
            self.cache.drop(game_id)
        with self.repo.reading():
            record = self._game(st, game_id)
            rt = self._replay(record)
        self._cache_after_commit(game_id, rt)
        return rt

    def _cache_after_commit(self, game_id: int, rt: GameRuntime) -> None:
        """Keep ``rt`` once the current transaction commits (at once outside one): the cache
        never holds a state the database does not (a rolled-back new game's id comes again)."""
        self.repo.on_commit(lambda: self.cache.put(game_id, rt))

    def _replay(self, record: GameRecord) -> GameRuntime:
        """A stored game's engine state and facts, from its log."""
        log = self.repo.load_log(record.id)
        rt = GameRuntime.replay(
            header_of(record), effective_entries(log), log[-1].seq if log else 0
        )
        rt.record = record
        rt.facts = derive_facts(seating_of(record), rt)
        return rt

    def refuse_abandoned(self, rt: GameRuntime, game_id: int) -> None:
        """Raise 409 ``game_abandoned`` if the game was called off (also in another process);
        the state ``rt`` then says so."""
        if self.abandoned(rt, game_id):
            raise Conflict(ABANDONED, code="game_abandoned")

    def abandoned(self, rt: GameRuntime, game_id: int) -> bool:
        """Whether the game was called off, as the database said when :meth:`_runtime` gave
        ``rt`` (also in another process: it reads the flag with the version)."""
        return rt.record is not None and rt.record.status == "abandoned"
