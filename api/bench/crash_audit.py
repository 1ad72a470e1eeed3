"""What :mod:`api.bench.crash_check` counts, and the checks it runs on a copy of the database
(the server is down).

Each one appends what it finds wrong to ``figures.violations``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from api.domain import Services
    from api.storage import LogEntry, Repository


@dataclass
class Figures:
    requests: int = 0
    retries: int = 0
    conflicts: int = 0  # 412: another phone was quicker
    throttled: int = 0  # 429
    replayed: int = 0  # answered from the stored response (a retry of a committed write)
    kills: int = 0
    acknowledged: int = 0
    present: int = 0
    lost: int = 0
    duplicates: int = 0
    unexpected: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)

    def wait_for_more(self, acknowledged: int, more: int, seconds: float = 60.0) -> None:
        """Until ``more`` writes past ``acknowledged`` are acknowledged (``seconds`` at most:
        then the run's ``acknowledged`` figure tells)."""
        deadline = time.monotonic() + seconds
        while self.acknowledged < acknowledged + more and time.monotonic() < deadline:
            time.sleep(0.02)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


@dataclass
class Table:
    slug: str
    token: str
    plans: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # game -> turns


def check_acked(
    figures: Figures,
    label: str,
    acked: list[tuple[int, int, dict[str, Any]]],
    logs: dict[int, list[LogEntry]],
) -> int:
    """Every acknowledged turn is in its game's log; returns how many are."""
    present = 0
    for game, seq, body in acked:
        log = logs.get(game, [])
        if seq <= len(log) and log[seq - 1].seq == seq and log[seq - 1].body == body:
            present += 1
        else:
            figures.violations.append(f"{label}: lost game {game} seq {seq}")
    return present


def check_logs(
    figures: Figures, label: str, tables: list[Table], logs: dict[int, list[LogEntry]]
) -> None:
    """Every log is a prefix of its game's plan, numbered without gaps."""
    plans = {g: p for t in tables for g, p in t.plans.items()}
    for game, log in logs.items():
        bodies = [e.body for e in log]
        plan = plans.get(game)
        if plan is None:
            if bodies:
                figures.violations.append(f"{label}: unplanned game {game}")
            continue
        if bodies != plan[: len(bodies)]:
            figures.add("duplicates")
            figures.violations.append(f"{label}: game {game} log != plan")
        if [e.seq for e in log] != list(range(1, len(log) + 1)):
            figures.violations.append(f"{label}: game {game} seq gaps")


def check_deckel(
    figures: Figures,
    label: str,
    tables: list[Table],
    svc: Services,
    logs: dict[int, list[LogEntry]],
) -> None:
    """A running game still has all its Deckel (in the middle or on the stacks)."""
    for game in logs:
        record = svc.repo.get_game_by_id(game)
        st = next((s for s in tables if game in s.plans), None)
        if st is None:  # created, its answer not yet back: no turns either
            continue
        view = svc.game(svc.stammtisch(st.slug), game).to_dict()
        state = view["outcome"]["state"]
        if view["status"] == "running":
            total = state["mitte"] + sum(state["stacks"].values())
            if total != view["options"]["deckel"]:
                figures.violations.append(f"{label}: game {game} has {total} Deckel")
        assert record is not None


def check_facts(
    figures: Figures, label: str, svc: Services, logs: dict[int, list[LogEntry]]
) -> None:
    """The stored facts equal those a rebuild derives from the logs."""
    stored = {g: svc.repo.read_facts(g) for g in logs}
    svc.rebuild()
    rebuilt = {g: svc.repo.read_facts(g) for g in logs}
    for game in logs:
        if stored[game] != rebuilt[game]:
            figures.violations.append(f"{label}: facts of {game} != replay")


def check_read_model(figures: Figures, label: str, repo: Repository) -> None:
    """After a restart the statistics a reader sees (the read model, its stale Stammtische
    refreshed incrementally as the server's refresher does) equal a full recomputation."""
    from dashboard.readmodel import compute_periods, from_json, refresh, to_json

    refresh(repo)
    ids = repo.stammtisch_ids()
    full = compute_periods(repo, ids)
    for (st, year), period in sorted(full.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        stored = repo.read_stats(st, year)
        if stored is None or from_json(stored) != from_json(to_json(period)):
            figures.violations.append(f"{label}: statistics of {st}/{year} != full refresh")
    shown = {(st, year) for st, year, games in repo.stats_years(None) if games}
    computed = {(st, year) for (st, year), p in full.items() if year and p["overview"]["games"]}
    if shown != computed:
        figures.violations.append(f"{label}: years shown {sorted(shown ^ computed)} differ")
