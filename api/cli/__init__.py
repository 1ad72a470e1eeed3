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

Every module imports only click and the standard library at the top; what a command needs
(Flask, DuckDB, SQLite, the app) it imports when it runs. ``main`` is the console script
(``schocken = "api.cli:main"``); a command's exit code is what its function returns, and
``main(args, standalone_mode=False)`` returns it instead of exiting.
"""

from __future__ import annotations

from . import backup, convert, copy, dashboard, engine, keys, server, stats, webhooks
from .base import CONTEXT, Group

main = Group(
    "schocken",
    help="Schocken scorekeeper: rules engine, API and statistics.",
    context_settings=CONTEXT,
)
for _module in (engine, server, backup, dashboard, convert, copy, stats, keys, webhooks):
    for _command in _module.COMMANDS:
        main.add_command(_command)

__all__ = ["main"]
