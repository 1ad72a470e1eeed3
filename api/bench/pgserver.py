"""A throwaway PostgreSQL server for the benchmarks (``api_bench --postgres``, ``stats_bench
--postgres``): ``initdb`` into a temporary folder, the server on a unix socket in it (no TCP),
removed at the end; or a server the caller names (``--database-url``), on which each run gets a
database of its own (``CREATE DATABASE``, dropped afterwards).

Unlike the tests' cluster (tests/pgcluster.py: ``fsync=off``), a benchmark's server is durable
as a deployment's: ``fsync=on``, ``synchronous_commit=on`` and ``full_page_writes=on`` (the
defaults), so that a COMMIT waits for its WAL on disk as SQLite's commit waits for its
``fdatasync``: the comparison is fair. As root the server runs as the ``postgres`` user
(``initdb`` refuses root), as the tests do.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from api.bench.loadgen import free_port
from api.storage import PostgresStore

#: the settings that differ from PostgreSQL's defaults (none of them durability)
SETTINGS = ("listen_addresses=''", "max_connections=200")


def binary(name: str) -> str:
    """The PostgreSQL program ``name`` (PATH first, then Debian's folders, newest first)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(folder, name), os.X_OK):
            return os.path.join(folder, name)
    raise RuntimeError(f"PostgreSQL's {name} is missing: apt-get install postgresql")


class Server:
    """A PostgreSQL server: started here (``url`` None) or an existing one at ``url``."""

    def __init__(self, url: str | None = None, settings: tuple[str, ...] = ()) -> None:
        self._names = itertools.count(1)
        self.folder: Path | None = None
        if url:
            self.url = url
            self.described = "PostgreSQL at --database-url"
            return
        self.folder = Path(tempfile.mkdtemp(prefix="schocken-bench-pg-"))
        self._root = os.geteuid() == 0
        if self._root:
            shutil.chown(self.folder, "postgres", "postgres")
        port = free_port()
        data = self.folder / "data"
        self._as_owner(binary("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                       "-E", "UTF8", "--locale=C.UTF-8")  # fmt: skip
        options = " ".join(f"-c {s}" for s in (*SETTINGS, *settings))
        self._pg_ctl = [binary("pg_ctl"), "-D", str(data)]
        self._as_owner(*self._pg_ctl, "-o", f"-p {port} -k {self.folder} {options}",
                       "-l", str(self.folder / "log"), "-w", "start")  # fmt: skip
        self.url = f"postgresql://postgres@/postgres?host={self.folder}&port={port}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            shown = conn.execute(
                "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings "
                "WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', "
                "'shared_buffers', 'wal_sync_method')"
            ).fetchone()
        version = subprocess.run([binary("postgres"), "--version"], capture_output=True,
                                 text=True, check=False).stdout.strip()  # fmt: skip
        self.described = f"{version}, throwaway cluster on a unix socket: {shown and shown[0]}"

    def _as_owner(self, *argv: str) -> None:
        command = ["runuser", "-u", "postgres", "--", *argv] if self._root else list(argv)
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder)

    def postmaster_pid(self) -> int | None:
        """The server's main process (its backends are its children), if started here."""
        if self.folder is None:
            return None
        return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])

    def _with_name(self, name: str) -> str:
        head, sep, query = self.url.partition("?")
        return f"{head.rsplit('/', 1)[0]}/{name}{sep}{query}"

    def fresh(self, migrate: bool = True) -> str:
        """The URL of a new, empty database (migrated to the API's schema)."""
        name = f"schocken_bench_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        url = self._with_name(name)
        if migrate:
            PostgresStore(url, pool_size=1).close()
        return url

    def drop(self, url: str) -> None:
        name = url.split("?", 1)[0].rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self.folder is None:
            return
        try:
            self._as_owner(*self._pg_ctl, "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
