"""The reliability report: crash check plus fuzzing, in figures.

``python -m api.bench.reliability_report [--kills 5] [--fuzz 200] [--seed 1]`` runs
:mod:`api.bench.crash_check` (``schocken serve`` killed with SIGKILL ``--kills`` times while 16
games and 4 racers on one game record with ``Idempotency-Key`` and ``If-Match``) and
:mod:`api.bench.fuzz_check` (``--fuzz`` examples per fuzzer and per API operation), and prints:
requests sent, retries, conflicts, kills survived, writes acknowledged vs present, duplicates
from retries, fuzz examples run, 5xx seen, rejections that changed data; then a line per item
of issue 13's outside probe, "holds" when its regression tests pass
(:mod:`api.bench.hardening_probes`). Exit status 1 when an
acknowledged write was lost, a retry duplicated a record, fuzzing saw a 5xx or a rejection
changed the database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from . import crash_check, fuzz_check, hardening_probes


def collect(kills: int, fuzz: int, seed: int, items: bool = True) -> dict[str, Any]:
    started = time.monotonic()
    probes = hardening_probes.run() if items else []
    crash = crash_check.run(kills=kills, seed=seed)
    fuzzers = {
        "imports": fuzz_check.fuzz_imports(fuzz),
        "turn_detail": fuzz_check.fuzz_turn_detail(fuzz),
        "engine": fuzz_check.fuzz_engine(fuzz),
        "operations": fuzz_check.fuzz_operations(fuzz),
    }
    return {
        "crash": crash,
        "fuzz": fuzzers,
        "items": [
            {"item": r.item.number, "title": r.item.title, "holds": r.holds, "passed": r.passed,
             "failed": r.failed, "missing": r.missing}
            for r in probes
        ],
        "probes": probes,
        "seconds": round(time.monotonic() - started, 1),
    }  # fmt: skip


def render(figures: dict[str, Any]) -> str:
    c = figures["crash"]
    f = figures["fuzz"]
    api_fuzz = [f["imports"], f["turn_detail"], f["operations"]]
    lines = [
        "Schocken reliability report",
        "",
        "Crash check (schocken serve, SIGKILL mid-run; 16 games + 4 racers on one game)",
        f"  requests sent                      {c['requests']}",
        f"  retries (connection lost, 429)     {c['retries']}",
        f"  answered from a stored response    {c['replayed']}",
        f"  conflicts (412, If-Match stale)    {c['conflicts']}",
        f"  rate-limited (429)                 {c['throttled']}",
        f"  kills survived                     {c['kills']}",
        f"  writes acknowledged (2xx)          {c['acknowledged']}",
        f"  acknowledged writes present        {c['present']}",
        f"  acknowledged writes lost           {c['lost']}",
        f"  duplicate records from retries     {c['duplicates']}",
        f"  other violations                   {len(c['violations']) + len(c['unexpected'])}",
        f"  wall time                          {c['seconds']} s",
        "",
        "Fuzzing (no 5xx; every rejection must leave the database unchanged)",
    ]
    for name, r in f.items():
        extra = f" over {r['operations']} operations" if "operations" in r else ""
        lines.append(
            f"  {name:<12} examples {r['examples']:>6}{extra}   5xx {r['server_errors']}   "
            f"rejected {r['rejections']}   changed by a rejection "
            f"{r.get('changed_by_rejection', '-')}   statuses {r['statuses']}"
        )
    if figures["probes"]:
        lines += ["", hardening_probes.render(figures["probes"])]
    lines += [
        "",
        f"  fuzz examples run                  {sum(r['examples'] for r in f.values())}",
        f"  5xx seen                           {sum(r['server_errors'] for r in api_fuzz)}",
        f"  rejections that changed data       "
        f"{sum(r.get('changed_by_rejection', 0) for r in api_fuzz)}",
        "",
        f"total wall time {figures['seconds']} s",
    ]
    return "\n".join(lines)


def healthy(figures: dict[str, Any]) -> bool:
    c = figures["crash"]
    fuzz = figures["fuzz"].values()
    return (
        c["lost"] == 0
        and c["duplicates"] == 0
        and not c["violations"]
        and not c["unexpected"]
        and c["present"] == c["acknowledged"]
        and all(r["server_errors"] == 0 and not r.get("changed_by_rejection") for r in fuzz)
        and all(item["holds"] for item in figures["items"])
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="crash check and fuzzing, in figures")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--fuzz", type=int, default=200, help="examples per fuzzer/operation")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument(
        "--no-items", action="store_true", help="skip the issue-13 items (their tests)"
    )
    args = parser.parse_args(argv)
    figures = collect(args.kills, args.fuzz, args.seed, items=not args.no_items)
    if args.json:
        print(json.dumps({k: v for k, v in figures.items() if k != "probes"}, indent=1,
                         ensure_ascii=False))  # fmt: skip
    else:
        print(render(figures))
    return 0 if healthy(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
