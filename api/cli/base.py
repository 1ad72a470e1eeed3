"""What every ``schocken`` command shares: its callback returns the exit code.

A command's function returns ``0`` (done), ``1`` (refused, with a message on stderr) or ``2``
(the database is held by another process), like the argparse commands before it; the
:class:`Command` class turns that into the process's exit code, and ``main(args,
standalone_mode=False)`` returns it (tests call the commands so).

A database or folder that cannot be used (:class:`~api.startup.StartupError`, an error of
SQLite or of the file system, a database that stops working during the command:
:class:`~api.startup.DatabaseFault`) ends a command the same way: one line on stderr naming the
cause (:class:`Refused`, no traceback) and exit code 1.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

import click

from ..startup import DatabaseFault, StartupError, describe

#: ``-h`` as well as ``--help`` on every command (subcommands inherit it from the group)
CONTEXT = {"help_option_names": ["-h", "--help"]}


class Refused(click.ClickException):
    """A command cannot run: its message alone on stderr (like the commands' own messages),
    exit code 1."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(self.format_message(), err=file is None, file=file)


class Command(click.Command):
    """A click command whose callback returns its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            code = super().invoke(ctx)
        except (StartupError, DatabaseFault, sqlite3.Error, OSError) as err:
            refused = Refused(describe(err, ctx.params.get("db")))
            refused.show()
            ctx.exit(refused.exit_code)
        ctx.exit(int(code or 0))


class Group(click.Group):
    """A click group whose commands (and subgroups) return their exit codes."""

    command_class = Command
    group_class = type


def command(name: str, short_help: str) -> Callable[[Callable[..., Any]], Command]:
    """Decorator: a :class:`Command` named ``name``; ``short_help`` is its line in the list
    of commands, the function's docstring its ``--help``."""
    return click.command(name, cls=Command, short_help=short_help)


def print_counts(counts: dict[str, int]) -> None:
    """Rows per table, one line each, as ``convert`` and ``copy`` report what they moved."""
    width = max(len(table) for table in counts)
    for table, rows in counts.items():
        print(f"{table:<{width}}  {rows:>9}")


def transfer(
    move: Callable[[], dict[str, int]],
    refused: type[Exception] | tuple[type[Exception], ...],
    done: Callable[[dict[str, int]], str],
) -> int:
    """Move a whole database (``convert``, ``copy``): the rows per table and the line ``done``
    makes of them, exit code 0; when ``move`` raises one of ``refused``, its message alone on
    stderr, exit code 1."""
    try:
        counts = move()
    except refused as err:
        print(err, file=sys.stderr)
        return 1
    print_counts(counts)
    print(done(counts))
    return 0


def duckdb_hint(db: str) -> str:
    """What to do with a database file of the retired DuckDB store."""
    return f"{db} ist eine DuckDB-Datei: erst umwandeln mit schocken convert --from {db} --to NEU.sqlite3"


def stop_event(parent: int | None) -> threading.Event:
    """An event set by SIGTERM or SIGINT, or once the process ``parent`` is no longer this
    one's parent (a SIGKILL of the server's master, say): when a watching command stops."""
    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    if parent is not None:
        threading.Thread(target=_orphaned, args=(parent, stopping), daemon=True).start()
    return stopping


def _orphaned(parent: int, stopping: threading.Event) -> None:
    while not stopping.wait(1.0):
        if os.getppid() != parent:
            stopping.set()
