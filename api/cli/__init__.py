"""The ``schocken`` command: one click group, one module per group of commands.

* :mod:`.engine`: ``replay``, ``simulate`` (the rules engine; never imports Flask)
* :mod:`.server`: ``serve``, ``openapi``, ``rebuild``
* :mod:`.backup`: ``export``, ``import``, ``backup``
* :mod:`.dashboard`: ``dashboard build``, ``demo``
* :mod:`.convert`: ``convert`` (a file of the retired DuckDB store into a new SQLite file)
* :mod:`.copy`: ``copy`` (a whole database into a new one, SQLite ↔ PostgreSQL)
* :mod:`.stats`: ``stats refresh`` (the statistics read model)
* :mod:`.keys`: ``key rotate`` (a new write key for a Stammtisch)
* :mod:`.webhooks`: ``webhooks send`` (the webhook sender)

A command's module is imported only when the command runs (:data:`COMMAND_MODULES`); every
module imports only click and the standard library at the top; what a command needs (Flask,
DuckDB, SQLite, the app) it imports when it runs. ``main`` is the console script
(``schocken = "api.cli:main"``); a command's exit code is what its function returns, and
``main(args, standalone_mode=False)`` returns it instead of exiting.
"""

from __future__ import annotations

import importlib

import click

from .base import CONTEXT, Group

#: the module of every command (``api.cli.<module>``), imported only when that command runs
#: (or ``--help`` lists them all): ``schocken replay`` loads the engine, not the server
COMMAND_MODULES = {
    "replay": "engine",
    "simulate": "engine",
    "serve": "server",
    "openapi": "server",
    "rebuild": "server",
    "export": "backup",
    "import": "backup",
    "backup": "backup",
    "dashboard": "dashboard",
    "demo": "dashboard",
    "convert": "convert",
    "copy": "copy",
    "stats": "stats",
    "key": "keys",
    "webhooks": "webhooks",
}


class LazyGroup(Group):
    """The ``schocken`` group: its commands are loaded by name (click's documented
    ``list_commands``/``get_command`` hooks for lazily loaded subcommands)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is None:
            return None
        commands: tuple[click.Command, ...] = importlib.import_module(
            f"{__name__}.{module}"
        ).COMMANDS
        return next(c for c in commands if c.name == cmd_name)


main = LazyGroup(
    "schocken",
    help="Schocken scorekeeper: rules engine, API and statistics.",
    context_settings=CONTEXT,
)

__all__ = ["COMMAND_MODULES", "main"]
