"""Statistics and the static dashboard.

``queries/*.sql`` are the named statistics (DuckDB SQL, also valid SQLite), :mod:`.stats` runs
them with bound parameters, :mod:`.figures` turns their rows into Plotly figures, :mod:`.site`
writes the static site, :mod:`.web` serves it from the running server, :mod:`.demo` and
:mod:`.bulk` fill a database with simulated years. Importing this package does no work.
"""
