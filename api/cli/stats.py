"""``schocken stats refresh [--all]``: the statistics read model (dashboard/readmodel.py).

Recomputes the Stammtische marked stale (``--all``: every one) in the SQLite database, under
the same one-refresher lock as the server's refreshers: it works with no server running and
beside a running one (several processes).
"""

from __future__ import annotations

import sys
import time

import click

from api.rules import count

from .base import Group, stop_event
from .database import database_url_option, open_database, pick_url

stats = Group("stats", short_help="the statistics read model", help="The statistics read model.")


@stats.command("refresh", short_help="recompute stale statistics (--all: everything)")
@click.option("--all", "everything", is_flag=True, help="every Stammtisch, not only stale ones")
@click.option("--db", metavar="PATH", help="SQLite database file (default: the server's)")
@database_url_option
@click.option(
    "--processes",
    type=int,
    default=1,
    show_default=True,
    help="processes sharing a big refresh (on a busy 2-core machine 1 was fastest)",
)
@click.option("--watch", is_flag=True, help="then keep refreshing what turns stale, until Ctrl-C")
@click.option("--interval", type=float, default=1.0, show_default=True, help="--watch: seconds")
@click.option("--parent", type=int, hidden=True, help="--watch: stop when this process ends")
def refresh_command(
    everything: bool,
    db: str | None,
    database_url: str | None,
    processes: int,
    watch: bool,
    interval: float,
    parent: int | None,
) -> int:
    """Recompute the statistics of the stale Stammtische (--all: of every one); --watch: then
    go on refreshing every --interval seconds until SIGTERM / Ctrl-C (what `schocken serve`
    runs beside its workers, dashboard/refresher.py)."""
    from dashboard.readmodel import refresh_file

    from ..config import default_database
    from .database import refresh_url

    url = pick_url(database_url, db)
    if watch:
        from dashboard.refresher import watch as watching

        if everything:
            (refresh_url(url, everything) if url else
             refresh_file(db or default_database(), everything, processes))  # fmt: skip
        watching(open_database(url, db or default_database()), stop_event(parent), interval)
        return 0

    started = time.perf_counter()
    if url:  # PostgreSQL: one process
        done = refresh_url(url, everything)
    else:
        done = refresh_file(db or default_database(), everything, processes)
    print(
        f"Statistik: {count(done.stammtische, 'Stammtisch', 'Stammtische')}, "
        f"{count(done.periods, 'Zeitraum', 'Zeiträume')} neu berechnet "
        f"in {time.perf_counter() - started:.2f} s (Speicher höchstens {peak_mib()} MiB).",
        file=sys.stderr,
    )
    return 0


def peak_mib() -> int:
    """This process's peak resident memory (VmHWM of /proc: its own, not that of a parent it
    was forked from), 0 where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


COMMANDS = (stats,)
