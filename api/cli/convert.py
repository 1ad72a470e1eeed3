"""``schocken convert --from DUCKDB_FILE --to SQLITE_FILE``: a DuckDB database into a new SQLite
file (the logic, without Flask, is api/storage/convert.py)."""

from __future__ import annotations

import click

from .base import command, transfer


@command("convert", "convert a DuckDB database file into a new SQLite file")
@click.option(
    "--from", "source", required=True, metavar="DUCKDB_FILE", help="DuckDB file (only read)"
)
@click.option("--to", "target", required=True, metavar="SQLITE_FILE", help="new SQLite file")
def convert(source: str, target: str) -> int:
    """Copy every Stammtisch, player, game, game log, fact row and stored idempotent response of
    the DuckDB file DUCKDB_FILE into the new SQLite file SQLITE_FILE, in one transaction. The
    DuckDB file stays as it is. Serve the result with --db SQLITE_FILE (or SCHOCKEN_DATABASE);
    the default instance/schocken.duckdb is converted by the first start by itself."""
    from ..storage.convert import ConvertError
    from ..storage.convert import convert as convert_file

    return transfer(
        lambda: convert_file(source, target),
        ConvertError,
        lambda counts: f"converted {source} into {target}",
    )


COMMANDS = (convert,)
