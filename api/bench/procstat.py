"""CPU time and memory of process trees, from /proc (the benchmarks' servers and PostgreSQL),
and where their CPU went: py-spy's samples of each process (:func:`spying`)."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


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


def cpu_seconds(*pids: int, reaped: bool = False) -> float:
    """User + system CPU time of processes and their live children so far (from /proc);
    ``reaped``: and of the children that ended (counted in their parent's cutime once it
    reaped them: PostgreSQL's backends of connections closed meanwhile)."""
    return sum(cpu_by_role(*pids, reaped=reaped).values())


#: a process of ``schocken serve`` by its command line: (what it runs, its role)
ROLES = (("stats refresh", "refresher"), ("webhooks send", "sender"))


def role_of(pid: int, roots: tuple[int, ...]) -> str:
    """``master`` (one of ``roots``), ``refresher``, ``sender`` or ``worker``."""
    if pid in roots:
        return "master"
    try:
        with open(f"/proc/{pid}/cmdline", encoding="utf-8", errors="replace") as fh:
            command = fh.read().replace("\0", " ")
    except OSError:
        return "worker"
    return next((role for text, role in ROLES if text in command), "worker")


def cpu_by_role(*pids: int, reaped: bool = False) -> dict[str, float]:
    """:func:`cpu_seconds` split by role: ``master`` (the processes given), ``refresher``,
    ``sender`` (``schocken serve``'s background children) and ``worker`` (every other
    child: gunicorn's workers, PostgreSQL's backends)."""
    total: dict[str, float] = {}
    for p in {p for pid in pids for p in tree(pid)}:
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        ticks = int(fields[11]) + int(fields[12])
        if reaped and p in pids:
            ticks += int(fields[13]) + int(fields[14])
        role = role_of(p, pids)
        total[role] = total.get(role, 0.0) + ticks / os.sysconf("SC_CLK_TCK")
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


def children_cpu() -> float:
    """CPU seconds of this process's finished children (user + system)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def loadavg() -> str:
    """/proc/loadavg as it is (1, 5, 15 min, running/all, last pid)."""
    try:
        return Path("/proc/loadavg").read_text(encoding="ascii").strip()
    except OSError:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine_ticks() -> tuple[int, int]:
    """(busy, all) CPU ticks of the whole machine so far (/proc/stat: every core; busy is all
    but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as fh:
        values = [int(v) for v in fh.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


def busy_percent(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time (all cores) that was busy between two readings."""
    return 100 * (after[0] - before[0]) / max(1, after[1] - before[1])


def spying(pids: list[int], seconds: float, folder: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy recording every process of the servers for ``seconds`` (CPU only: ``--gil``),
    the stacks of each into ``folder/<role>-<pid>.txt``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    folder.mkdir(parents=True, exist_ok=True)
    started = []
    for pid in {p for root in pids for p in tree(root)}:
        out = folder / f"{role_of(pid, tuple(pids))}-{pid}.txt"
        argv = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--gil"]
        argv += ["--rate", "200", "--format", "raw", "--nonblocking", "--output", str(out)]
        started.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(0.5)  # attached before the clients start
    return started


def print_profile(folder: Path, top: int = 25) -> None:
    """Where the sampled CPU went, per role: its share of all samples, then (inclusive) the
    packages and our functions it was spent in."""
    by_role: dict[str, Counter[str]] = {}
    totals: Counter[str] = Counter()
    for path in sorted(folder.glob("*.txt")):
        role = path.stem.split("-")[0]
        inclusive = by_role.setdefault(role, Counter())
        for line in path.read_text(encoding="utf-8").splitlines():
            stack, _, samples = line.rpartition(" ")
            totals[role] += int(samples)
            for name in {_frame(frame) for frame in stack.split(";")}:
                inclusive[name] += int(samples)
    everything = sum(totals.values()) or 1
    for role, inclusive in by_role.items():
        print(f"\n{role}: {100 * totals[role] / everything:.1f} % of the CPU samples")
        for name, count in inclusive.most_common(top):
            print(f"  {100 * count / max(1, totals[role]):5.1f} %  {name}")


def _frame(frame: str) -> str:
    """``function (path:line)`` → ``our.module:function``, else the package (py-spy writes
    paths below the interpreter's and the project's folders relative to them)."""
    function, _, where = frame.rpartition(" (")
    path = where.rsplit(":", 1)[0].split("site-packages/")[-1]
    parts = Path(path.removesuffix(".py")).parts
    if len(parts) > 1 and parts[0] in ("api", "schemas", "dashboard"):
        return f"{'.'.join(parts)}:{function}"
    return parts[0] if parts else frame
