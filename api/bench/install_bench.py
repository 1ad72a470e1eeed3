"""What the default install and the extra ``postgres`` weigh, and what starting the app costs.

Run: ``python -m api.bench.install_bench [--before TREE] [--runs 7]``. It prints

1. the installed size of the default install's packages (the closure of ``schocken``'s
   dependencies, from the installed distributions' file lists) and of what the extra
   ``postgres`` adds on top (its packages and their own dependencies, those of the default
   install left out);
2. for this tree (and ``--before``: another source tree, e.g. main unpacked by ``git
   archive``), the median wall time of a fresh interpreter that imports ``api.app`` and makes
   the app on a SQLite file, and which of the extra's modules it loaded;
3. the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from api.startup import POSTGRES_MODULES

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys, time
started = time.perf_counter()
from api.app import create_app
create_app({{"DATABASE": {db!r}}}).extensions["schocken"].store.close()
took = time.perf_counter() - started
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({modules!r}))
print(f"{{took:.4f}} {{','.join(loaded) or '-'}}")
"""


def closure(name: str, extras: set[str], seen: set[str]) -> set[str]:
    """The distributions ``name[extras]`` needs (installed ones), ``seen`` left out."""
    found: set[str] = set()
    for line in metadata.requires(name) or []:
        req = Requirement(line)
        marker = req.marker
        if marker is not None and not any(marker.evaluate({"extra": e}) for e in extras | {""}):
            continue
        key = canonicalize_name(req.name)
        if key == "schocken" or key in seen or key in found:
            continue
        try:
            metadata.distribution(key)
        except metadata.PackageNotFoundError:
            continue
        found.add(key)
        found |= closure(key, set(req.extras), seen | found)
    return found


def size(names: set[str]) -> int:
    """Bytes on disk of the installed files of the distributions ``names``."""
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total


def start_time(tree: Path, runs: int) -> tuple[float, str]:
    """Median seconds of a fresh interpreter importing the app of ``tree`` and making it on a
    new SQLite file; the extra's modules it loaded."""
    times, loaded = [], ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            code = PROBE.format(db=str(Path(folder) / "b.sqlite3"), modules=POSTGRES_MODULES)
            env = {**os.environ, "PYTHONPATH": str(tree)}
            env.pop("SCHOCKEN_DATABASE_URL", None)
            out = subprocess.run(
                [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True,
                check=True,
            ).stdout.split()  # fmt: skip
        times.append(float(out[0]))
        loaded = out[1]
    return statistics.median(times), loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="TREE", help="another source tree to compare")
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per tree")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    default = closure("schocken", set(), set())
    postgres = closure("schocken", {"postgres"}, default) - default
    mib = 1024 * 1024
    print(f"default install: {len(default)} packages, {size(default) / mib:.0f} MiB")
    print(
        f"extra postgres adds: {len(postgres)} packages, {size(postgres) / mib:.0f} MiB "
        f"({', '.join(sorted(postgres))})"
    )
    trees = [("before", Path(args.before))] if args.before else []
    for label, tree in [*trees, ("this tree", ROOT)]:
        took, loaded = start_time(tree, args.runs)
        print(f"{label}: import api.app + create_app on SQLite {took * 1000:.0f} ms "
              f"(median of {args.runs}); modules of the extra loaded: {loaded}")  # fmt: skip
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
