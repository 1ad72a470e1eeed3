"""Recording: a turn, a single throw or a penalty; undo; the undo history; the game log.

Every write opens its write transaction first (``BEGIN IMMEDIATE`` on SQLite: writers of every
server process queue here), takes the engine state at the version the database holds, lets
the engine check the command, then stores the log entry and the facts it changes and commits.
A rejected command leaves nothing behind: the transaction rolls back, and the runtime, taken
out of the cache before it changed, is cached again only after a commit."""

from __future__ import annotations

from typing import Any

from ..rules import DomainEvent, Undone
from ..storage import FactsWrite, LogEntry, Stammtisch, StorageConflict
from ..table.entry import describe_entry
from .base import UseCases
from .errors import CONCURRENT_CHANGE, Conflict
from .facts import derive_facts, facts_write, seating_of
from .names import check_reason
from .runtime import GameRuntime, GameView, WriteResult, header_of


class RecordingUseCases(UseCases):
    def record(self, st: Stammtisch, game_id: int, kind: str, body: dict[str, Any]) -> WriteResult:
        """Record a turn, a throw or a penalty: in the write transaction, the engine state at
        the stored version, the engine, then log + facts; kept in the cache after the commit."""
        if kind == "penalty" and isinstance(body.get("penalty"), dict):
            check_reason(body["penalty"].get("reason"))
        with self.writing(game_id):
            rt = self._runtime(st, game_id)
            self.refuse_abandoned(rt, game_id)
            record = rt.record
            assert record is not None
            self.cache.drop(game_id)  # changed below: back in the cache only when committed
            entry = LogEntry(game_id, rt.last_seq + 1, kind, body, self.clock())
            events = rt.feed(entry)
            facts = derive_facts(seating_of(record), rt, rt.facts)
            self._append(entry, facts_write(facts, rt.facts))
            payload = self._announce(st, entry, events)
            rt.facts = facts
            self._cache_after_commit(game_id, rt)
            return WriteResult(entry.seq, events, GameView(record, st.slug, rt), payload)

    def _append(self, entry: LogEntry, facts: FactsWrite) -> None:
        """The entry and its facts (a taken sequence number cannot happen while this
        transaction holds the write lock; should it, it is a concurrent change)."""
        try:
            self.repo.append_entry(entry, facts)
        except StorageConflict as err:
            raise Conflict(CONCURRENT_CHANGE, code="concurrent_change") from err

    def _announce(
        self, st: Stammtisch, entry: LogEntry, events: list[DomainEvent]
    ) -> list[dict[str, Any]]:
        """The entry's events into the outbox, in the write's transaction (the event streams
        and webhooks read them from there; an entry without events writes none); their JSON."""
        payload = [event.to_json() for event in events]
        if payload:
            self.repo.append_events(st.id, entry.game_id, entry.seq, payload, entry.recorded_at)
        return payload

    def undo(self, st: Stammtisch, game_id: int, data: dict[str, Any]) -> WriteResult:
        """Undo the last effective entry; the log keeps an ``undo`` entry as audit record."""
        check_reason(data.get("by"), "by")
        check_reason(data.get("reason"))
        with self.writing(game_id):
            rt = self._runtime(st, game_id)
            self.refuse_abandoned(rt, game_id)
            record = rt.record
            assert record is not None
            if not rt.entries:
                raise Conflict("Es gibt nichts rückgängig zu machen.", code="nothing_to_undo")
            self.cache.drop(game_id)
            target = rt.entries[-1]
            seq = rt.last_seq + 1
            body = {"undoes": target.seq, "by": data.get("by"), "reason": data.get("reason")}
            entry = LogEntry(game_id, seq, "undo", body, self.clock())
            new_rt = GameRuntime.replay(header_of(record), rt.entries[:-1], seq)
            new_rt.record = record
            facts = derive_facts(seating_of(record), new_rt)
            self._append(entry, facts_write(facts, None))
            event = DomainEvent(
                f"Rückgängig gemacht: {describe_entry(target.kind, target.body)}.",
                Undone(target.seq, target.kind, target.body),
            )
            payload = self._announce(st, entry, [event])
            new_rt.facts = facts
            self._cache_after_commit(game_id, new_rt)
            return WriteResult(seq, [event], GameView(record, st.slug, new_rt), payload)

    def undo_history(self, st: Stammtisch, game_id: int) -> list[dict[str, Any]]:
        """Every undo of the game: what was undone, by whom, why, when."""
        self._game(st, game_id)
        log = self.repo.load_log(game_id)
        by_seq = {e.seq: e for e in log}
        return [
            {
                "seq": e.seq,
                "undone_seq": e.body["undoes"],
                "undone_kind": by_seq[e.body["undoes"]].kind,
                "undone": by_seq[e.body["undoes"]].body,
                "by": e.body.get("by"),
                "reason": e.body.get("reason"),
                "recorded_at": e.recorded_at,
            }
            for e in log
            if e.kind == "undo"
        ]

    def export(self, st: Stammtisch, game_id: int) -> dict[str, Any]:
        """The game as a game log: the header as given and every finished turn and penalty
        (an open throw-by-throw turn is not part of it until it ends)."""
        with self.cache.locked(game_id):
            rt = self._runtime(st, game_id)
            assert rt.record is not None
            return {**rt.record.header, "events": [dict(e) for e in rt.export]}
