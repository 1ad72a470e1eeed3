"""Group commit: the log entries (and fact rows) of turns that arrive together, from different
games, written in one transaction with one multi-row INSERT per table.

Every DuckDB statement costs about a millisecond or two on a small machine whatever it carries,
so this is what makes concurrent recording cheap. The writers are repositories
(:class:`~api.storage.duck_repository.DuckDBRepository` on cursors of their own); all this
module needs of them is :meth:`BatchWriter.write_batch`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from typing import Protocol

from .records import FactsWrite, LogEntry


class BatchWriter(Protocol):
    """What a writer thread commits a batch with."""

    def write_batch(self, items: list[tuple[LogEntry, FactsWrite]]) -> None: ...


class _Pending:
    __slots__ = ("entry", "facts", "done", "error")

    def __init__(self, entry: LogEntry, facts: FactsWrite) -> None:
        self.entry = entry
        self.facts = facts
        self.done = threading.Event()
        self.error: BaseException | None = None


class GroupCommitter:
    """Group commit: writer threads turn the log entries that arrive together (from different
    games) into one transaction with one multi-row INSERT per table.

    Every DuckDB statement costs about a millisecond here, whatever it carries, so eight
    concurrent turns cost little more than one. A caller returns only after the commit of its
    entry (acknowledged means durable). When a batch fails, its entries are retried one by one,
    so an entry fails only for its own reason. When entries arrive together (several clients),
    the writer waits ``delay`` seconds for more before it commits (PostgreSQL's
    ``commit_delay``); a lone client never waits.

    Each writer (one per repository, each its own cursor) takes the next batch while another
    one is still writing: DuckDB runs the two transactions side by side on two cores. They
    never touch the same game: a game's next entry is only sent after its last one committed
    (the service's per-game lock), and appends of different games do not conflict."""

    def __init__(
        self, repos: Sequence[BatchWriter], max_batch: int = 64, delay: float = 0.002
    ) -> None:
        self._repos = repos
        self._max = max_batch
        self._delay = delay
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(
                target=self._run, args=(repo,), name=f"duckdb-group-commit-{n}", daemon=True
            )
            for n, repo in enumerate(repos)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, entry: LogEntry, facts: FactsWrite) -> None:
        pending = _Pending(entry, facts)
        self._queue.put(pending)
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    def stop(self) -> None:
        """Each writer commits what it holds and ends at the first stop sentinel it takes."""
        alive = [t for t in self._threads if t.is_alive()]
        for _ in alive:
            self._queue.put(None)
        for thread in alive:
            thread.join(timeout=10)

    def _run(self, repo: BatchWriter) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = self._drain(batch)
            if not stop and len(batch) > 1 and self._delay:
                # others are writing too: wait a moment for more (PostgreSQL's commit_delay)
                time.sleep(self._delay)
                stop = self._drain(batch)
            self._commit(repo, batch)
            if stop:
                return

    def _drain(self, batch: list[_Pending]) -> bool:
        """Add what is queued to the batch; True when the stop sentinel came."""
        while len(batch) < self._max:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return False
            if item is None:
                return True
            batch.append(item)
        return False

    def _commit(self, repo: BatchWriter, batch: list[_Pending]) -> None:
        try:
            repo.write_batch([(p.entry, p.facts) for p in batch])
        except BaseException as exc:  # handed to the waiting request
            if len(batch) == 1:
                batch[0].error = exc
            else:
                for p in batch:
                    self._commit(repo, [p])
                return
        for p in batch:
            p.done.set()
