"""The mutation score of api/rules after `mutmut run` (tests/mutation/MUTATION.md).

Run from the repository root after `mutmut run`::

    python tests/mutation/report.py              # the score, the survivors not yet judged
    python tests/mutation/report.py --diffs      # … with each survivor's diff
    python tests/mutation/report.py --kinds      # the equivalent mutants counted by kind

It reads mutmut's results (``mutants/``) and ``tests/mutation/equivalents.txt``, where every
mutant that no test can kill stands on one line::

    <mutant name>  <fingerprint>  <kind>  <one-line reason>

The fingerprint is a hash of the mutant's changed lines, so an entry goes stale (and is shown)
when a change to the engine renumbers the mutants of a function. The exit status is 1 while a
survivor is neither killed nor listed, or an entry is stale.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

EQUIVALENTS = Path(__file__).with_name("equivalents.txt")
#: why no test can kill a mutant (explained at the top of equivalents.txt)
KINDS = ("same-result", "unreachable", "caller-value", "order", "speed")


@dataclass(frozen=True)
class Equivalent:
    name: str
    fingerprint: str
    kind: str
    reason: str


def read_equivalents(path: Path = EQUIVALENTS) -> dict[str, Equivalent]:
    entries: dict[str, Equivalent] = {}
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if len(parts) < 4:
            sys.exit(f"{path}:{number}: want <name> <fingerprint> <kind> <reason>")
        name, fingerprint, kind, reason = parts
        if kind not in KINDS:
            sys.exit(f"{path}:{number}: kind {kind!r} is none of {', '.join(KINDS)}")
        if name in entries:
            sys.exit(f"{path}:{number}: {name} listed twice")
        entries[name] = Equivalent(name, fingerprint, kind, reason)
    return entries


def statuses() -> dict[str, tuple[str, Path]]:
    """Every mutant's mutmut status ("killed", "survived", "no tests", …) and source file."""
    from mutmut.__main__ import SourceFileMutationData, walk_mutatable_files
    from mutmut.stats import status_by_exit_code

    found: dict[str, tuple[str, Path]] = {}
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        for name, code in data.exit_code_by_key.items():
            found[name] = (status_by_exit_code[code], path)
    return found


def changed_lines(diff: str) -> list[str]:
    return [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def fingerprint(diff: str) -> str:
    text = "\n".join(line[0] + line[1:].strip() for line in changed_lines(diff))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def main() -> int:
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--diffs", action="store_true", help="show each survivor's diff")
    parser.add_argument("--kinds", action="store_true", help="count the equivalents by kind")
    args = parser.parse_args()

    equivalents = read_equivalents()
    found = statuses()
    counts = Counter(status for status, _ in found.values())
    open_, stale = [], []
    for name, (status, path) in sorted(found.items()):
        if status == "killed":
            if name in equivalents:
                stale.append((name, "is killed now: remove its line"))
            continue
        diff = get_diff_for_mutant(name, path=path)
        entry = equivalents.get(name)
        if entry is None:
            open_.append((name, status, diff))
        elif entry.fingerprint != fingerprint(diff):
            stale.append((name, f"has another diff now (fingerprint {fingerprint(diff)})"))
    stale += [(name, "no longer exists") for name in equivalents if name not in found]

    total = len(found)
    killed = counts["killed"]
    listed = sum(1 for name in equivalents if name in found and found[name][0] != "killed")
    judged = total - listed
    print(
        f"mutants: {total}  killed: {killed}  "
        + "  ".join(f"{status}: {n}" for status, n in sorted(counts.items()) if status != "killed")
    )
    print(f"raw score: {killed / total:.1%} of all mutants killed")
    print(
        f"score: {killed / judged:.1%} of the {judged} non-equivalent mutants killed "
        f"({listed} equivalent)"
    )
    if args.kinds:
        kinds = Counter(e.kind for e in equivalents.values() if e.name in found)
        for kind, n in kinds.most_common():
            print(f"  {n:4}  {kind}")
    for name, status, diff in open_:
        print(f"\n{status}: {name}  (fingerprint {fingerprint(diff)})")
        if args.diffs:
            print("\n".join(changed_lines(diff)))
    for name, why in stale:
        print(f"\nstale entry: {name} {why}")
    return 1 if open_ or stale else 0


if __name__ == "__main__":
    sys.exit(main())
