"""Server time of a dashboard year page (``GET /dashboard/demo/<year>.html``), in process.

    python -m api.bench.yearpage_bench [--before TREE] [--rounds 3] [--visits 20]

Each round, a new process makes the demo Stammtisch (ten years) in a new SQLite file, then
visits the page of its last year ``--visits`` times through Flask's test client (the server's
whole work for a request: routing, the read model, rendering, compression) and prints the first
visit (the first page that process renders) and the median of the others. Round 1 starts
without the dashboard's compiled templates (api/jinja_cache.py), as the first process after an
install or a change of a template; later rounds find them, as every later process does.
``--before TREE``: the same measure of another checkout (its own code, this interpreter), run
alternately with this one, ``--rounds`` times each. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from api.jinja_cache import compiled_templates

from .procstat import loadavg


def measure(visits: int) -> tuple[float, float, float]:
    """(first visit, median of the rest, median of 5 re-renders) in ms, on a new demo database.
    A re-render is a visit after the app forgot the pages it kept, as after a finished game
    changed the read model (a checkout without kept pages renders every visit anyway)."""
    from api.app import create_app
    from dashboard import web
    from dashboard.demo import create_demo

    with tempfile.TemporaryDirectory(prefix="yearpage-") as folder:
        app = create_app({"DATABASE": f"{folder}/s.sqlite3", "DASHBOARD_DIR": f"{folder}/site"})
        try:
            last = create_demo(app.extensions["schocken"].store)["years"][1]
            client = app.test_client()
            times: list[float] = []
            again: list[float] = []
            for n in range(visits + 5):
                if n >= visits and hasattr(web, "PAGES"):
                    app.extensions[web.PAGES] = web.Kept()
                start = time.perf_counter()
                r = client.get(f"/dashboard/demo/{last}.html", headers={"Accept-Encoding": "gzip"})
                (times if n < visits else again).append(time.perf_counter() - start)
                assert r.status_code == 200  # noqa: S101 - a benchmark of a working page
        finally:
            app.extensions["schocken"].store.close()
    return times[0] * 1000, statistics.median(times[1:]) * 1000, statistics.median(again) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--visits", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"load average at the start: {loadavg()}")
    for n in range(1, args.rounds + 1):
        if args.before is not None:
            _print(n, "before", *_other(args.before, args.visits))
        if n == 1:
            _forget_compiled_templates()
        _print(n, "now", *_other(Path(__file__).resolve().parents[2], args.visits))
    print(f"load average at the end: {loadavg()}")


def _print(n: int, which: str, first: float, rest: float, again: float) -> None:
    print(
        f"round {n} {which + ':':7} first visit {first:.1f} ms, then median {rest:.1f} ms,"
        f" re-render after a change median {again:.1f} ms"
    )


def _forget_compiled_templates() -> None:
    cache = compiled_templates("dashboard")
    if cache is not None:
        cache.clear()


def _other(tree: Path, visits: int) -> tuple[float, float, float]:
    """:func:`measure` of this file run on the code of ``tree`` (which may lack this file)."""
    source = Path(__file__).read_text(encoding="utf-8").split("\ndef main(")[0]  # measure()
    code = (
        source.replace("from .procstat import loadavg", "").replace(
            "from api.jinja_cache import compiled_templates", ""
        )
        + f"\nprint(*measure({visits}))\n"
    )
    out = subprocess.run(  # noqa: S603 - this interpreter, our own code
        [sys.executable, "-c", code], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    return float(out[-3]), float(out[-2]), float(out[-1])


if __name__ == "__main__":
    main()
