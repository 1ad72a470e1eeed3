"""What keeps a server or a command from starting, said in one line with the real cause.

:class:`StartupError` carries a message for the operator (German, like every message of the
``schocken`` command); the command line prints it alone, without a traceback, and exits with
1 (api/cli/base.py). :func:`check_database` looks at a database file and its folder before
SQLite opens them (a folder that is a file or cannot be written, a file that cannot be read or
written); :func:`describe` turns an error that happened anyway into
such a line (a database that stopped working during a command as well: :class:`DatabaseFault`),
and says "locked" only when SQLite said so. :func:`require_postgres` refuses PostgreSQL when
the packages of its extra are not installed, saying how to install them.

Standard library only: every layer may raise or explain these errors, the engine commands of
the CLI included.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from importlib.util import find_spec
from pathlib import Path

#: what an operating system error means, by its number
REASONS = {
    errno.EACCES: "keine Berechtigung",
    errno.EPERM: "keine Berechtigung",
    errno.EROFS: "das Dateisystem ist schreibgeschützt",
    errno.ENOSPC: "der Datenträger ist voll",
    errno.EDQUOT: "das Speicherkontingent ist erschöpft",
    errno.ENOTDIR: "ein Teil des Pfads ist eine Datei, kein Ordner",
    errno.EEXIST: "dort liegt schon eine Datei",
    errno.EISDIR: "das ist ein Ordner, keine Datei",
    errno.ENOENT: "nicht vorhanden",
    errno.EIO: "Ein-/Ausgabefehler des Datenträgers",
}


class StartupError(RuntimeError):
    """A server or command cannot start; the message (one line) names the cause for the
    operator."""


class DatabaseFault(Exception):
    """Base of :class:`~api.storage.StorageUnavailable`: the database cannot work now (a
    server out of reach, a full disk). Defined here so that the command line can end a
    command it stops with one line (:func:`describe`) without importing the storage."""


def _blocking_file(folder: Path) -> Path | None:
    """The part of ``folder``'s path that exists as a file (so the folder cannot exist)."""
    for part in (folder, *folder.parents):
        if part.exists() or part.is_symlink():
            return None if part.is_dir() else part
    return None


def make_folder(folder: str | Path, role: str) -> None:
    """Create ``folder`` (and its parents) or raise :class:`StartupError`; ``role`` names it
    in the message ("Der Ordner der Datenbank …")."""
    path = Path(folder)
    try:
        blocking = _blocking_file(path)
        if blocking is not None:
            raise StartupError(f"{role} {path} ist nicht anzulegen: {blocking} ist eine Datei.")
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StartupError(f"{role} {path} ist nicht anzulegen: {os_reason(err)}.") from err


def os_reason(err: OSError) -> str:
    """An operating system error in words, with the file it concerns."""
    reason = REASONS.get(err.errno or 0) or err.strerror or str(err)
    return f"{reason} ({err.filename})" if err.filename else reason


def database_problem(path: str | Path) -> str | None:
    """What keeps the SQLite file ``path`` from being opened for writing, as far as the file
    system tells (None: nothing found). SQLite writes ``-wal`` and ``-shm`` files beside the
    database, so its folder must be writable too. The file itself is never opened here:
    closing any descriptor of a database file drops the locks of every SQLite connection of
    the process on it (POSIX locks), so a file that is no database is left to SQLite to find
    (:func:`describe`)."""
    db = Path(path)
    folder = db.absolute().parent
    blocking = _blocking_file(folder)
    if blocking is not None:
        return f"Die Datenbank {db} kann dort nicht liegen: {blocking} ist eine Datei, kein Ordner."
    if db.is_dir():
        return f"Die Datenbank {db} ist ein Ordner, keine Datei."
    if db.exists():
        if not os.access(db, os.R_OK):
            return f"Keine Leserechte auf die Datenbank {db}."
        if not os.access(db, os.W_OK):
            return f"Keine Schreibrechte auf die Datenbank {db} (die Datei ist schreibgeschützt)."
    for suffix in ("-wal", "-shm"):  # left by another user's process, say
        extra = Path(f"{db}{suffix}")
        if extra.is_file() and not os.access(extra, os.R_OK | os.W_OK):
            return f"Keine Schreibrechte auf {extra}, eine Datei der Datenbank {db.name}."
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        verb = (
            "SQLite legt dort seine -wal- und -shm-Dateien an"
            if db.exists()
            else ("die Datenbank ist dort nicht anzulegen")
        )
        return f"Keine Schreibrechte im Ordner {folder} der Datenbank {db.name}: {verb}."
    return None


def check_database(path: str | Path) -> None:
    """Create the folder of the database file ``path`` and make sure SQLite can open the file
    for writing; raises :class:`StartupError` with the cause otherwise."""
    try:
        problem = database_problem(path)
        if problem is None:
            make_folder(Path(path).absolute().parent, "Der Ordner der Datenbank")
            problem = database_problem(path)  # a folder made now may still refuse writes
    except OSError as err:  # a folder on the way that may not be entered
        raise StartupError(f"Die Datenbank {path} ist nicht zu öffnen: {os_reason(err)}.") from err
    if problem is not None:
        raise StartupError(problem)


#: the modules of the ``postgres`` extra (pyproject.toml): PostgreSQL's driver and its pool,
#: the Arrow feed of its statistics. Only PostgreSQL needs them: the embedded SQLite store
#: runs on the default install, which leaves them out.
POSTGRES_MODULES = ("psycopg", "psycopg_pool", "adbc_driver_postgresql", "pyarrow")
#: what to do when one of them is missing (German and English: an operator's message)
POSTGRES_EXTRA = (
    "PostgreSQL braucht die Pakete des Extras „postgres“, es fehlt: {missing}. Installieren "
    'mit: pip install "schocken[postgres]" (aus einem Checkout: pip install -e ".[postgres]") '
    '/ PostgreSQL needs the packages of the "postgres" extra, missing: {missing}. Install '
    'them with: pip install "schocken[postgres]".'
)


def require_postgres() -> None:
    """Refuse PostgreSQL with :class:`StartupError` naming the extra to install when one of
    :data:`POSTGRES_MODULES` is missing (checked without importing any of them)."""
    missing = [name for name in POSTGRES_MODULES if find_spec(name) is None]
    if missing:
        raise StartupError(POSTGRES_EXTRA.format(missing=", ".join(missing)))


def describe(err: BaseException, path: str | Path | None = None) -> str:
    """One line for the operator on why opening or using the database ``path`` (None: not
    known) failed with ``err``."""
    if isinstance(err, StartupError):
        return str(err)
    if isinstance(err, DatabaseFault):
        return f"Die Datenbank ist gerade nicht verfügbar, abgebrochen: {err}"
    where = f" {path}" if path else ""
    text = str(err)
    if isinstance(err, sqlite3.Error):
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
            return (
                f"Die Datenbank{where} ist gesperrt: ein anderer Prozess schreibt gerade oder "
                "hält sie fest (läuft schon ein Server darauf?)."
            )
        problem = database_problem(path) if path else None
        if problem is not None:
            return problem
        if "not a database" in lowered:
            return f"Die Datei{where} ist keine SQLite-Datenbank (oder sie ist beschädigt)."
        if "full" in lowered:
            return f"Der Datenträger der Datenbank{where} ist voll."
        if "i/o" in lowered:
            return f"Ein-/Ausgabefehler beim Zugriff auf die Datenbank{where} ({text})."
        return f"Die Datenbank{where} ist nicht zu öffnen: {text}."
    if isinstance(err, OSError):
        reason = os_reason(err)
        return f"{reason[:1].upper()}{reason[1:]}."
    return text
