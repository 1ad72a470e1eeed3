"""PostgreSQL's part of the relational adapter (:mod:`api.storage.relational`): one database
server shared by every server process, a pool of connections per process, migrations at start.

Selected by a ``postgresql://…`` URL (``SCHOCKEN_DATABASE_URL``, ``--database-url``).

* A pool (the store's SQLAlchemy engine, :mod:`api.storage.engine`, at most :data:`POOL_SIZE`
  connections per process, each checked when taken): connections run in autocommit mode; a
  use case's ``transaction()`` is an explicit ``BEGIN … COMMIT`` at READ COMMITTED, and
  ``reading()`` a REPEATABLE READ, READ ONLY transaction. While the server is out of reach a
  request gets :class:`~api.storage.repository.StorageUnreachable` (503), as does one that
  found no free connection within :data:`POOL_TIMEOUT` seconds; the log says when the
  database was lost and when it was back (one line each).
* Writes to one game go in turn: in a write transaction the first read of a game or an append
  to its log locks the game's row (``SELECT … FOR UPDATE``) until the commit. An idempotency
  key is locked (an advisory transaction lock) before it is looked up in a write.
* Every entry's events are announced on the channel :data:`CHANNEL` (``NOTIFY``, delivered at
  the commit to every server's listener, :mod:`api.storage.watch`), in one statement with the
  webhooks' outbox write.
* Senders on several servers share the outbox: a claim locks the rows of the webhooks it takes
  with ``FOR UPDATE SKIP LOCKED``, marks them busy and moves one due delivery of each past its
  lease, in one statement.
* The one-refresher lock is a session-level advisory lock on a pooled connection of its own.
* The rate limit's counters live in UNLOGGED tables (migrations 0007, 0011) and commit at once.
* A URL that is no PostgreSQL URL, or a server that cannot be reached at start, stops the
  process with :class:`~api.startup.StartupError`: one line, the password left out.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, ClassVar, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus
from sqlalchemy.dialects.postgresql import psycopg as pg_dialect
from sqlalchemy.pool import PoolProxiedConnection

from ...startup import StartupError
from ..engine import postgres_engine
from ..migrate import current, upgrade
from ..records import CHANNEL
from ..relational import RelationalStore, pooled, take
from ..relational_outbox import RelationalRepository, outgoing
from ..repository import StorageConflict, StorageUnavailable, StorageUnreachable
from ..statements import Kinds, compiled, naive, named, to_json
from ..webhook_records import Outgoing

#: connections per process (a server's threads share them; a refresh uses two)
POOL_SIZE = 10
#: seconds a request waits for a free connection (or a new one) before a 503
POOL_TIMEOUT = 5.0
#: seconds to wait for the server when connecting
CONNECT_TIMEOUT = 10
#: the advisory lock of the statistics refresh (any constant bigint, the same everywhere)
STATS_LOCK = 0x5C40C6E8
#: SQLSTATE classes that mean "cannot work now": connection (08), insufficient resources such
#: as a full disk (53), operator intervention such as a shutdown (57), system or I/O error (58)
_UNAVAILABLE_CLASSES = frozenset({"08", "53", "57", "58"})
#: the server is shutting down or starting up
_GOING = frozenset({"57P01", "57P02", "57P03"})
#: read_only_sql_transaction (a standby, or default_transaction_read_only)
_READ_ONLY = "25006"

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


def fault(exc: Exception, conflict: str | None = None) -> Exception | None:
    """The port's error for psycopg's ``exc``: a taken key or a lost race
    :class:`StorageConflict`; a lost or refused connection, a full disk, a read-only server
    :class:`StorageUnavailable` (:class:`StorageUnreachable` when the server is out of reach);
    None: it stays what it is."""
    if isinstance(exc, errors.UniqueViolation | errors.TransactionRollback):
        return StorageConflict(conflict or str(exc).strip())
    text = " ".join(str(exc).split()) or type(exc).__name__
    lost = isinstance(exc, psycopg.InterfaceError | psycopg.OperationalError)
    state = getattr(exc, "sqlstate", None) or ""
    if not lost and state[:2] not in _UNAVAILABLE_CLASSES and state != _READ_ONLY:
        return None
    if state[:2] == "08" or state in _GOING or (not state and lost):
        return StorageUnreachable(f"PostgreSQL unreachable: {text}")
    return StorageUnavailable(f"PostgreSQL: {text}")


@contextmanager
def mapped(conflict: str | None = None) -> Iterator[None]:
    """psycopg's errors inside as the port's (:func:`fault`)."""
    try:
        yield
    except psycopg.Error as exc:
        port = fault(exc, conflict)
        if port is None:
            raise
        raise port from exc


def column_kinds(conn: psycopg.Connection[Any]) -> Kinds:
    """Every table's columns with their types, read from the schema."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in conn.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    ).fetchall():
        found.setdefault(str(table), []).append((str(column), str(kind)))
    return {table: tuple(columns) for table, columns in found.items()}


#: PostgreSQL's own statements, and the entry's notification with its outbox write in one
#: statement (a data-modifying WITH runs whether read or not)
_OWN = named(__package__)
_OWN["announce"] = f"WITH outbox AS ({_OWN['enqueue']}) SELECT pg_notify(:channel, :note)"


class PostgresRepository(RelationalRepository):
    """The relational repository on a pooled PostgreSQL connection."""

    _DIALECT = pg_dialect.dialect()  # type: ignore[no-untyped-call]
    _DRIVER_ERROR = psycopg.Error
    _BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    _OWN_SQL: ClassVar[dict[str, str]] = _OWN

    def __init__(self, pool: Any, kinds: Kinds, url: str) -> None:
        super().__init__(None, kinds, pool)
        self._url = url  # for the statistics' Arrow feed (a connection of its own)

    def _take(self) -> PoolProxiedConnection:
        with mapped():
            return super()._take()

    def _busy(self, conn: Any) -> bool:
        return bool(conn.info.transaction_status != TransactionStatus.IDLE)

    def _fault(self, exc: Exception, conflict: str | None) -> Exception | None:
        return fault(exc, conflict)

    def _lock_game(self, game_id: int) -> None:
        """Lock the game's row until the write transaction ends (once per transaction)."""
        if self._writing and game_id not in self._locked:
            self._x("lock_game", {"game_id": game_id})
            self._locked.add(game_id)

    def _announce(self, row: dict[str, Any], kinds: list[str]) -> None:
        note = f"{row['st']} {row['position']} {row['game']} {row['seq']}"
        self._x("announce", {**row, "channel": CHANNEL, "note": note, "kinds": to_json(kinds)})

    def get_response(self, stammtisch_id: int, key_hash: str) -> Any:
        """In a write transaction the key is locked first (until the commit): a request with
        the same key, on any server, waits here and then finds this one's stored answer."""
        if self._writing:
            name = hashlib.blake2b(f"{stammtisch_id}:{key_hash}".encode(), digest_size=8)
            self._x("lock_key", {"key": int.from_bytes(name.digest(), signed=True)})
        return super().get_response(stammtisch_id, key_hash)

    def probe(self) -> None:
        """Can the server take writes now? Raises :class:`StorageUnavailable` if not (one
        cheap query: a standby, or a server refusing writes, is read-only)."""
        if self._depth:
            return
        sql = "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')"
        recovery, read_only = self._one(sql) or (False, "off")
        if recovery or read_only == "on":
            raise StorageUnavailable("PostgreSQL: the server is read-only")

    def _counted(self, name: str, params: dict[str, Any]) -> Any:
        """A statement on the rate limits' tables, committed at once: on this connection
        outside a transaction, else on a pooled one of its own (a ``reading()`` cannot write,
        and a rolled-back write must not give a token back)."""
        if not self._depth:
            cursor = self._x(name, params)
        else:
            assert self._pool is not None
            with mapped(), pooled(self._pool) as conn:
                cursor = conn.execute(self._sql_of[name], params)
                return cursor.fetchone() if cursor.description else None
        return cursor.fetchone() if cursor.description else None

    def take_token(self, who: str, now: float, per_second: float, burst: int) -> float:
        params = {"who": who, "now": now, "rate": per_second, "burst": float(burst)}
        tokens, granted = self._counted("take_token", params)
        return 0.0 if granted else (1.0 - float(tokens)) / per_second

    def purge_tokens(self, before: float) -> None:
        self._counted("purge_tokens", {"before": before})

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int) -> list[Outgoing]:
        params = {"now": naive(now), "lease": naive(lease_until), "limit": limit}
        with self.transaction():
            rows = self._all("claim", params)
        return outgoing(rows)

    def stats_csv(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[str]]:
        """As the port's, but PostgreSQL renders each table's lines (``COPY … TO STDOUT`` as
        CSV: every value quoted, NULL as an unquoted ``\\N``, each value as the port renders
        it), one text per table, no Python object per value."""
        out: dict[str, list[str]] = {}
        with self.reading():
            for table, columns, where, params in self._selects(tables, stammtische):
                kinds = dict(self._kinds[table])
                values = ", ".join(_csv_sql(c, kinds[c]) for c in columns)
                sql = (f"COPY (SELECT {values} FROM {table}{where}) TO STDOUT "  # noqa: S608
                       "(FORMAT csv, FORCE_QUOTE *, NULL '\\N')")  # fmt: skip
                with (
                    mapped(),
                    self._conn.cursor() as cursor,
                    cursor.copy(compiled(self._DIALECT, sql), params) as copy,
                ):
                    text = b"".join(bytes(chunk) for chunk in copy).decode("utf-8")
                out[table] = [text.removesuffix("\n")] if text else []
        return out

    @contextmanager
    def stats_arrow(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int]
    ) -> Iterator[Iterator[tuple[str, Any]] | None]:
        """The rows of :meth:`stats_rows` as Arrow streams, ``(table, RecordBatchReader)`` in
        the order of ``tables``, each to be read to its end before the next is taken: ADBC's
        PostgreSQL driver (binary COPY → Arrow in C++, no Python object per row or value) on a
        connection of its own, all tables in one REPEATABLE READ, READ ONLY transaction. None
        when ``adbc-driver-postgresql`` is not installed: the caller takes :meth:`stats_csv`.
        At ``stats_bench`` full scale the feed of a full refresh took 5.9 s against 10-11 s by
        CSV chunks."""
        try:
            import adbc_driver_postgresql.dbapi as adbc
        except ImportError:  # the optional extra is not installed
            yield None
            return
        literal = "'{" + ",".join(str(int(s)) for s in sorted(stammtische)) + "}'::bigint[]"
        try:
            conn = adbc.connect(self._url)
        except adbc.Error as exc:  # as the pool's connections: the server cannot be reached
            raise StorageUnavailable(f"PostgreSQL: {exc}") from exc
        try:
            cursor = conn.cursor()
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield self._arrow_tables(cursor, tables, literal)
        finally:
            conn.rollback()
            conn.close()

    def _arrow_tables(
        self, cursor: Any, tables: Mapping[str, Sequence[str]], ids: str
    ) -> Iterator[tuple[str, Any]]:
        for table, columns in tables.items():
            self._check(table, columns)
            if table == "stammtische":
                where = f"id = ANY({ids})"
            elif "stammtisch_id" in dict(self._kinds[table]):
                where = f"stammtisch_id = ANY({ids})"
            else:
                where = f"game_id IN (SELECT id FROM games WHERE stammtisch_id = ANY({ids}))"
            cursor.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {where}")  # noqa: S608
            yield table, cursor.fetch_record_batch()

    @contextmanager
    def stats_lock(self, wait: bool | float = True) -> Iterator[bool]:
        with mapped():
            taken = take(cast(Any, self._pool))
        conn = cast(psycopg.Connection[Any], taken.dbapi_connection)
        try:
            if not _advisory_lock(conn, wait):
                yield False
                return
            try:
                yield True
            finally:
                with mapped():
                    conn.execute("SELECT pg_advisory_unlock(%s)", [STATS_LOCK])
        finally:
            taken.close()


def _advisory_lock(conn: psycopg.Connection[Any], wait: bool | float) -> bool:
    """Take the refresh's advisory lock on ``conn``: waiting (True), not (False) or up to
    ``wait`` seconds; whether it was taken."""
    with mapped():
        if wait is True:
            conn.execute("SELECT pg_advisory_lock(%s)", [STATS_LOCK])
            return True
        deadline = time.monotonic() + float(wait)
        while True:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", [STATS_LOCK]).fetchone()
            if row and row[0]:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def _csv_sql(column: str, kind: str) -> str:
    """``column`` as the port's CSV renders it: a flag as 0/1, a time as Python's isoformat
    (microseconds only when there are any), the rest as PostgreSQL writes it."""
    if kind == "boolean":
        return f"{column}::int"
    if kind.startswith("timestamp"):
        whole = f"to_char({column}, 'YYYY-MM-DD HH24:MI:SS')"
        return (
            f"CASE WHEN mod(date_part('microseconds', {column})::bigint, 1000000) = 0 "
            f"THEN {whole} ELSE to_char({column}, 'YYYY-MM-DD HH24:MI:SS.US') END"
        )
    return column


class PostgresStore(RelationalStore[PostgresRepository]):
    """The process-wide handle of one PostgreSQL database: its pool and its schema."""

    def __init__(self, url: str, pool_size: int = POOL_SIZE, until: int | None = None) -> None:
        """Connect to ``url`` and apply pending migrations (up to version ``until`` only, if
        given); raises :class:`~api.startup.StartupError` when ``url`` is no PostgreSQL URL or
        the server cannot be reached."""
        super().__init__()
        self.url = url
        check_url(url)
        try:
            self.migrate(until)
            conn = self.connect()
        except StorageUnavailable as err:
            raise unreachable(url, err) from err
        with conn:
            self._kinds = column_kinds(conn)
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

    def _new_repository(self, own: Any = None) -> PostgresRepository:
        return PostgresRepository(self._pool, self._kinds, self.url)

    def open_repository(self) -> PostgresRepository:
        """A repository of its own; its ``disconnect`` (or :meth:`close` of the store) ends
        it."""
        return self._register(self._new_repository())
