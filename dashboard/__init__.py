"""Statistics and the static dashboard.

``queries/*.sql`` are the named set-based statistics (DuckDB SQL, also valid SQLite),
:mod:`.stats` runs and shapes them, :mod:`.readmodel` computes them in DuckDB from the row
store and keeps them there (:mod:`.refresher`: the server's background refresh),
:mod:`.figures` turns their rows into Plotly figures, :mod:`.site` writes the static site,
:mod:`.web` serves it from the running server, :mod:`.demo` and :mod:`.bulk` fill a database
with simulated years. Importing this package does no work.
"""
