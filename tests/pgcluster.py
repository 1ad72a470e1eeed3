"""A throwaway PostgreSQL cluster for the tests: ``initdb`` into a temporary folder, the server
on a unix socket in it (no TCP: ``listen_addresses=''``) at a free port number, stopped at the
end of the session.

As root (sessions and CI) the cluster runs as the ``postgres`` user (``initdb`` refuses root);
otherwise as the current user. The binaries come from PATH or from Debian's
``/usr/lib/postgresql/<version>/bin`` (the ``postgresql`` package that .ci/run installs). The
cluster is made for speed, not durability (``fsync=off``): it lives for one test run.

Every test gets a fresh database, ``CREATE DATABASE … TEMPLATE`` a database migrated once
(:meth:`Cluster.fresh_url`), and drops it afterwards.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from api.bench.loadgen import free_port
from api.bench.pgserver import binary

TEMPLATE = "schocken_template"


class Cluster:
    """One running server; :meth:`stop` ends it and removes its folder."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="schocken-pg-"))
        self.port = free_port()
        self._root = os.geteuid() == 0
        if self._root:
            shutil.chown(self.folder, "postgres", "postgres")
        data, log = self.folder / "data", self.folder / "log"
        self._as_owner(binary("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                       "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")  # fmt: skip
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses='' -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._pg_ctl = [binary("pg_ctl"), "-D", str(data)]
        self._start, self._log = ["-o", options, "-l", str(log), "-w", "start"], str(log)
        self._as_owner(*self._pg_ctl, *self._start)
        self._names = itertools.count(1)
        self.url = self.database_url("postgres")
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE}")

    def _as_owner(self, *argv: str) -> None:
        command = ["runuser", "-u", "postgres", "--", *argv] if self._root else list(argv)
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder)

    def database_url(self, name: str) -> str:
        return f"postgresql://postgres@/{name}?host={self.folder}&port={self.port}"

    def template_url(self) -> str:
        return self.database_url(TEMPLATE)

    def fresh_url(self) -> str:
        """A new database, a copy of the migrated template (migrate it first)."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.database_url(name)

    def empty_url(self, name: str) -> str:
        """A new database without any table (made again when it exists): for tests that build
        an old schema or load a dump themselves."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0")
        return self.database_url(name)

    def drop(self, url: str) -> None:
        name = url.split("?", 1)[0].rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session ends, the server starts again (with its
        settings; its output to its log, not to our pipe)."""
        self._as_owner(*self._pg_ctl, "-m", "fast", "-l", self._log, "-w", "restart")

    def halt(self) -> None:
        """``pg_ctl stop -m fast``: the server ends every session and stops (see resume)."""
        self._as_owner(*self._pg_ctl, "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the halted server again, with its settings."""
        self._as_owner(*self._pg_ctl, *self._start)

    def stop(self) -> None:
        try:
            self._as_owner(*self._pg_ctl, "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
