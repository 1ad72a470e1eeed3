"""CPU time and memory of process trees, from /proc (the benchmarks' servers and PostgreSQL)."""

from __future__ import annotations

import os


def tree(pid: int) -> list[int]:
    """The process and its children (gunicorn's master and its workers, PostgreSQL's backends)."""
    found = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            for child in fh.read().split():
                found += tree(int(child))
    except OSError:
        pass
    return found


def cpu_seconds(*pids: int) -> float:
    """User + system CPU time of processes and their children so far (from /proc): the live
    ones (a child that ended is counted in its parent's cutime once it is reaped)."""
    total = 0.0
    for p in {p for pid in pids for p in tree(pid)}:
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def peak_memory_mb(*pids: int) -> tuple[float, float]:
    """The largest VmHWM and VmRSS of one process of the trees (a worker), in MB."""
    peak = rss = 0.0
    for p in {p for pid in pids for p in tree(pid)}:
        fields = {}
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as fh:
                for line in fh:
                    key, _, value = line.partition(":")
                    fields[key] = value.strip()
        except OSError:
            continue
        if "VmHWM" in fields:
            peak = max(peak, int(fields["VmHWM"].split()[0]) / 1024)
            rss = max(rss, int(fields["VmRSS"].split()[0]) / 1024)
    return peak, rss
