"""The PostgreSQL store: one database server shared by every server process, a pool of
connections per process, migrations at start.

Selected by a ``postgresql://…`` URL (``SCHOCKEN_DATABASE_URL``, ``--database-url``); SQLite
stays the default. Settings, and why:

* A pool (the store's SQLAlchemy engine, :mod:`api.storage.engine`, at most
  :data:`POOL_SIZE` connections per process): a request takes a connection on its first
  statement and gives it back at its end (:meth:`PostgresRepository.close`). Connections run
  in autocommit mode; a use case's ``transaction()`` is an explicit ``BEGIN … COMMIT`` (see
  :mod:`.repository` for the locks). Each connection is checked when taken (one round trip):
  one the server ended (a restart, an idle timeout) is dropped, with every older one, and a
  new one made at once; one that breaks during a request is dropped when given back.
* Reconnecting: a connection is made when a request needs one, so the first request after a
  restart of the server finds one as soon as the server accepts them again; while the server
  is out of reach each attempt fails at once (the cause named is libpq's) and the request
  gets :class:`~api.storage.repository.StorageUnreachable` (503, "nicht erreichbar"), as
  does one that found no free connection within :data:`POOL_TIMEOUT` seconds. A server's log
  says when it lost the database and when it had it again (one line each, :meth:`_connect`).
* A URL that is no PostgreSQL URL (nor a ``key=value`` connection string), or a server that
  cannot be reached at start, stops the process with :class:`~api.startup.StartupError`: one line, the password left out.
* Durability is PostgreSQL's default ``synchronous_commit=on``: COMMIT returns once the WAL
  holds the transaction on disk. Only the rate limit's counters live in an UNLOGGED table
  (migration 0007), whose commits wait for no flush.
* Migrations are the files of ``migrations/``, numbered as SQLite's (the same tables), run by
  Alembic (:mod:`api.storage.migrate`) in one transaction under an advisory lock, so that
  servers starting at once apply each migration once; a database of a newer version is
  refused untouched.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

from ...startup import StartupError
from ..engine import postgres_engine
from ..migrate import current, upgrade
from ..repository import Background, StorageUnavailable
from .repository import PostgresRepository
from .rows import Kinds, column_kinds, mapped

#: connections per process (a server's threads share them; a refresh uses two)
POOL_SIZE = 10
#: seconds a request waits for a free connection (or a new one) before a 503
POOL_TIMEOUT = 5.0
#: seconds to wait for the server when connecting
CONNECT_TIMEOUT = 10

log = logging.getLogger(__name__)


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return bool(url) and str(url).startswith(("postgresql://", "postgres://"))


def redacted(url: str) -> str:
    """``url`` without its password (in the user part or as a ``password=`` parameter), for
    a message; a ``key=value`` connection string with ``password=…`` blanked."""
    if "://" not in url:
        return re.sub(r"(?i)(password\s*=\s*)\S+", r"\1…", url)
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            netloc = f"{user.split(':', 1)[0]}@{host}"
        query = parse_qsl(parts.query, keep_blank_values=True)
        query = [(k, v) for k, v in query if k.lower() != "password"]
        return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/")))
    except ValueError:  # a broken URL (a port that is no number, say): its scheme only
        return f"{url.split('://', 1)[0]}://…"


def check_url(url: str) -> None:
    """Raise :class:`StartupError` unless ``url`` is a PostgreSQL URL psycopg can read (or a
    ``key=value`` connection string, which psycopg takes as well)."""
    wrong = StartupError(
        f"Die Datenbank-URL {redacted(url)} ist keine PostgreSQL-URL "
        "(postgresql://benutzer@host:port/datenbank)."
    )
    if "://" in url and not is_postgres_url(url):
        raise wrong
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as err:
        if "://" not in url:  # libpq's message would quote it, password and all
            raise wrong from err
        raise StartupError(
            f"Die Datenbank-URL {redacted(url)} ist nicht zu lesen ({_scrubbed(str(err), url)})."
        ) from err


def _scrubbed(text: str, url: str) -> str:
    """libpq's message in one line, the password of ``url`` (should it be quoted) left out."""
    text = " ".join(text.split())
    password = urlsplit(url).password if "://" in url else None
    return text.replace(password, "…") if password else text.replace(url, redacted(url))


def unreachable(url: str, err: BaseException) -> StartupError:
    """The start-up error of a server ``url`` that could not be reached or refused us."""
    cause = _scrubbed(str(err.__cause__ or err), url)
    lowered = cause.lower()
    if "does not exist" in lowered and "database" in lowered:
        problem = "gibt es nicht"
    elif "authentication" in lowered or "password" in lowered or "role" in lowered:
        problem = "lässt uns nicht an (Benutzer oder Passwort falsch)"
    else:
        problem = "ist nicht erreichbar (läuft der Server, stimmen Host und Port?)"
    return StartupError(f"Die PostgreSQL-Datenbank {redacted(url)} {problem}: {cause}")


class PostgresStore:
    """The process-wide handle of one PostgreSQL database: its pool and its schema."""

    def __init__(self, url: str, pool_size: int = POOL_SIZE, until: int | None = None) -> None:
        """Connect to ``url`` and apply pending migrations (up to version ``until`` only, if
        given); raises :class:`~api.startup.StartupError` when ``url`` is no PostgreSQL URL or
        the server cannot be reached."""
        self.url = url
        self.background = Background()
        self._local = threading.local()
        self._repos: weakref.WeakSet[PostgresRepository] = weakref.WeakSet()
        self._lock = threading.Lock()
        check_url(url)
        try:
            self.migrate(until)
            conn = self.connect()
        except StorageUnavailable as err:
            raise unreachable(url, err) from err
        with conn:
            self._kinds: Kinds = column_kinds(conn)
        self.down: str | None = None  # why the last connection attempt failed
        self._pool = postgres_engine(self._connect, pool_size, POOL_TIMEOUT)

    def connect(self) -> psycopg.Connection[Any]:
        """A new connection of its own (autocommit), outside the pool."""
        with mapped():
            return psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)

    def _connect(self) -> psycopg.Connection[Any]:
        """A connection of the pool; notes whether connecting worked (a line in the log when
        the server is lost, and when it is back)."""
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.Error as err:
            cause = " ".join(str(err).split()) or type(err).__name__
            if self.down is None:
                log.warning("PostgreSQL nicht erreichbar: %s", cause)
            self.down = cause
            raise
        if self.down is not None:
            log.warning("PostgreSQL wieder erreichbar")
        self.down = None
        return conn

    def migrate(self, until: int | None = None) -> list[int]:
        """Apply every pending migration (up to version ``until``) with Alembic
        (:mod:`api.storage.migrate`); the versions applied now."""
        with mapped():
            return upgrade(self.connect, "postgresql", redacted(self.url), until)

    def applied(self) -> list[tuple[int, str]]:
        """``(version, name)`` of every migration the database has applied."""
        with mapped():
            return current(self.connect, "postgresql", redacted(self.url))

    @property
    def kinds(self) -> Kinds:
        return self._kinds

    def repository(self) -> PostgresRepository:
        """This task's repository, a thread's or a greenlet's (it takes a pooled connection on
        its first statement and gives it back when closed at the end of a request)."""
        repo: PostgresRepository | None = getattr(self._local, "repo", None)
        if repo is None or repo.disconnected:
            repo = self.open_repository()
            self._local.repo = repo
        return repo

    def open_repository(self) -> PostgresRepository:
        """A repository of its own; :meth:`PostgresRepository.disconnect` (or :meth:`close`
        of the store) ends it."""
        repo = PostgresRepository(self._pool, self._kinds, self.url)
        with self._lock:
            self._repos.add(repo)
        return repo

    def close(self) -> None:
        """Stop the threads running beside the requests, give every connection back and
        close the pool."""
        self.background.stop()
        with self._lock:
            repos = list(self._repos)
            self._repos.clear()
        for repo in repos:
            repo.disconnect()
        self._pool.dispose()
