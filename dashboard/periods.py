"""Every period of the read model as JSON, computed and rendered by DuckDB in one statement.

The ten set-based queries of :data:`~dashboard.stats.SET_QUERIES` (portable SQL, the same
files the benchmark runs on SQLite) become the common table expressions of one DuckDB
statement; around them, DuckDB-only SQL (lists of structs, ``to_json``) groups their rows per
(Stammtisch, period) and shapes them exactly as :func:`dashboard.stats.shape` does in Python
(ranking, Verlierer, safest, the categories against their probabilities, all time of the
yearly-only queries), so that a refresh fetches one JSON text per period instead of a Python
object per row and value. :func:`dashboard.stats.compute` stays the reference (tests, the
oracle, :class:`~dashboard.stats.Statistics`); the read model tests compare both.

A query's rows keep its ORDER BY through ``row_number() OVER ()`` (``ord``): each list is
aggregated in that order. Moments are rendered as ``datetime.isoformat`` renders them.
"""

from __future__ import annotations

import json
from collections.abc import Collection

import duckdb

from .stats import (
    CATEGORIES,
    CATEGORY_NAMES,
    MIN_GAMES_SHARE,
    PARAMS,
    PROBABILITIES,
    RANKING_FIELDS,
    SET_QUERIES,
    Connection,
    queries,
)

#: the key columns of every set-based query, and the ordinal added to keep its order
KEYS = ("stammtisch_id", "period")
#: columns holding a moment (TIMESTAMP): rendered as ``datetime.isoformat`` does
MOMENT_COLUMNS = frozenset({"first_game", "last_game", "played_local"})
#: (query, its row's list in the period) of the queries whose rows are listed as they are
LISTS = {
    "head_to_head": "head_to_head",
    "record_longest_games": "longest_games",
    "record_schock_aus": "most_schock_aus",
    "record_deckel_half": "most_deckel_in_half",
    "luck": "luck",
}
#: a period as stored: (stammtisch_id, year or None, finished games, the period as JSON)
StoredPeriod = tuple[int, int | None, int, str]
#: queries computed per year only: all time lists every year's rows in turn
YEARLY = ("trend_month", "attendance_year")


def _value(column: str, table: str = "") -> str:
    value = f"{table}{column}"
    if column in MOMENT_COLUMNS:  # as isoformat: 'T' between date and time
        return f"replace(CAST({value} AS VARCHAR), ' ', 'T')"
    return value


def _struct(columns: Collection[str]) -> str:
    return "{" + ", ".join(f"'{c}': {_value(c)}" for c in columns) + "}"


def _array(columns: Collection[str], where: str = "") -> str:
    """A JSON array of the group's rows (in the query's order), ``[]`` without any."""
    filtered = f" FILTER (WHERE {where})" if where else ""
    return f"coalesce(to_json(list({_struct(columns)} ORDER BY ord){filtered}), '[]')"


def columns(conn: Connection) -> dict[str, tuple[str, ...]]:
    """The output columns of every set-based query but the keys (described on ``conn``)."""
    found = {}
    for name in SET_QUERIES:
        query = queries()[name]
        cur = conn.execute(
            f"SELECT * FROM ({query.sql}) q LIMIT 0",  # noqa: S608 - our own files
            {k: PARAMS[k] for k in query.params},
        )
        found[name] = tuple(d[0] for d in cur.description if d[0] not in KEYS)
    return found


def _categories_sql() -> str:
    """The categories of a period: per player (first seen first) and in total."""
    pivot = ", ".join(
        f"coalesce(sum(throws) FILTER (WHERE category = '{c}'), 0) AS \"{c}\"" for c in CATEGORIES
    )
    num = {c: p.numerator for c, p in PROBABILITIES.items()}
    den = {c: p.denominator for c, p in PROBABILITIES.items()}

    def counts(prefix: str) -> str:
        return "{" + ", ".join(f"'{c}': \"{prefix}{c}\"" for c in CATEGORIES) + "}"

    def expected(n: str) -> str:
        return "{" + ", ".join(
            f"'{c}': CAST({n} * {num[c]} AS DOUBLE) / {den[c]}" for c in CATEGORIES
        ) + "}"  # fmt: skip

    totals = ", ".join(f'coalesce(sum("{c}"), 0) AS "t_{c}"' for c in CATEGORIES)
    player = (
        f"{{'player_id': player_id, 'name': name, 'counts': {counts('')}, 'throws': n, "
        f"'expected': {expected('n')}}}"
    )
    return f"""
c_players AS (
    SELECT stammtisch_id, period, player_id, name, min(ord) AS ord, {pivot},
           sum(throws) AS n
    FROM r_categories GROUP BY stammtisch_id, period, player_id, name
),
j_categories AS (
    SELECT stammtisch_id, period,
           to_json(list({player} ORDER BY ord)) AS players, {totals}, sum(n) AS t_n
    FROM c_players GROUP BY stammtisch_id, period
),
t_categories AS (
    SELECT stammtisch_id, period, players,
           {{'player_id': NULL, 'name': 'Alle', 'counts': {counts("t_")},
             'throws': t_n, 'expected': {expected("t_n")}}} AS total
    FROM j_categories
)"""


def _empty_total() -> str:
    zero = {c: 0 for c in CATEGORIES}
    total = {"player_id": None, "name": "Alle", "counts": zero, "throws": 0,
             "expected": {c: 0.0 for c in CATEGORIES}}  # fmt: skip
    return json.dumps(total, ensure_ascii=False, separators=(",", ":"))


def _category_info() -> str:
    info = [
        {
            "category": cat,
            "name": CATEGORY_NAMES[cat],
            "probability": float(PROBABILITIES[cat]),
            "outcomes": int(PROBABILITIES[cat] * 216),
        }
        for cat in CATEGORIES
    ]
    return json.dumps(info, ensure_ascii=False, separators=(",", ":"))


def _inputs() -> str:
    """Each set-based query as a CTE ``r_<name>``, its rows numbered in its order."""
    return ",\n".join(
        f"r_{name} AS (SELECT row_number() OVER () AS ord, * FROM (\n{queries()[name].sql}\n) q)"
        for name in SET_QUERIES
    )


def _lists(cols: dict[str, tuple[str, ...]]) -> str:
    ranking = f"""
j_player_stats AS (
    SELECT stammtisch_id, period,
           {_array(cols["player_stats"])} AS players,
           coalesce(to_json(list({_struct(RANKING_FIELDS)} ORDER BY rank, name, player_id)),
                    '[]') AS ranking,
           coalesce(to_json(list({_struct(RANKING_FIELDS)} ORDER BY rank, name, player_id)
                            FILTER (WHERE rank = 1 AND games_lost > 0)), '[]') AS verlierer,
           coalesce(to_json(list({_struct(RANKING_FIELDS)} ORDER BY rank, name, player_id)
                            FILTER (WHERE safe_rank = 1)), '[]') AS safest
    FROM r_player_stats GROUP BY stammtisch_id, period
)"""
    plain = [
        f"j_{name} AS (SELECT stammtisch_id, period, {_array(cols[name])} AS rows "
        f"FROM r_{name} GROUP BY stammtisch_id, period)"
        for name in LISTS
    ]
    yearly = [  # each year's rows, and all time: every year's in turn (ord follows the years)
        f"j_{name} AS (SELECT stammtisch_id, period, {_array(cols[name])} AS rows "
        f"FROM r_{name} GROUP BY stammtisch_id, period "
        f"UNION ALL SELECT stammtisch_id, 0, {_array(cols[name])} "
        f"FROM r_{name} GROUP BY stammtisch_id)"
        for name in YEARLY
    ]
    return ",\n".join([ranking, *plain, *yearly])


def _overview(cols: tuple[str, ...]) -> str:
    """The overview of a period: the query's row, or that of a period without games."""
    fields = ", ".join(
        f"'{c}': {_value(c, 'o.')}" if c in MOMENT_COLUMNS else f"'{c}': coalesce(o.{c}, 0)"
        for c in cols
    )
    return "{'year': NULLIF(k.period, 0), " + fields + "}"


def _rows_of(name: str) -> str:
    return f"coalesce(j_{name}.rows, '[]')"


#: the statement, made at its first use (its queries' columns described by DuckDB)
_STATEMENT: list[str] = []


def statement(conn: Connection) -> str:
    """The one statement: $1, the ids of the Stammtische refreshed (each has an all-time
    period) → (stammtisch_id, period, games, body)."""
    if not _STATEMENT:
        _STATEMENT.append(_inlined(_statement(columns(conn))))
    return _STATEMENT[0]


def _statement(cols: dict[str, tuple[str, ...]]) -> str:
    num, den = MIN_GAMES_SHARE.numerator, MIN_GAMES_SHARE.denominator
    joins = "\n".join(
        f"LEFT JOIN j_{name} ON j_{name}.stammtisch_id = k.stammtisch_id "
        f"AND j_{name}.period = k.period"
        for name in ("player_stats", *LISTS, *YEARLY)
    )
    records = ", ".join(f"'{field}': {_rows_of(name)}" for name, field in LISTS.items()
                        if name.startswith("record_"))  # fmt: skip
    return f"""
WITH
{_inputs()},
{_categories_sql()},
{_lists(cols)},
keys AS (
    SELECT stammtisch_id, period FROM r_overview
    UNION SELECT unnest($ids::BIGINT[]), 0
)
SELECT k.stammtisch_id, k.period, coalesce(o.games, 0) AS games, CAST(to_json({{
    'overview': {_overview(cols["overview"])},
    'verlierer': {{
        'ranking': coalesce(j_player_stats.ranking, '[]'),
        'verlierer': coalesce(j_player_stats.verlierer, '[]'),
        'safest': coalesce(j_player_stats.safest, '[]'),
        'min_games': greatest(1, (coalesce(o.games, 0) * {num} + {den} - 1) // {den})
    }},
    'players': coalesce(j_player_stats.players, '[]'),
    'categories': {{
        'categories': CAST($category_info AS JSON),
        'players': coalesce(c.players, '[]'),
        'total': coalesce(to_json(c.total), CAST($empty_total AS JSON))
    }},
    'head_to_head': {_rows_of("head_to_head")},
    'records': {{{records}}},
    'trend': {_rows_of("trend_month")},
    'attendance': {_rows_of("attendance_year")},
    'luck': {_rows_of("luck")}
}}) AS VARCHAR) AS body
FROM keys k
LEFT JOIN r_overview o ON o.stammtisch_id = k.stammtisch_id AND o.period = k.period
LEFT JOIN t_categories c ON c.stammtisch_id = k.stammtisch_id AND c.period = k.period
{joins}
ORDER BY k.stammtisch_id, k.period
"""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _inlined(sql: str) -> str:
    """The statement with its constant parameters as literals: only the ids (``$1``) are
    left."""
    constants = {
        **{k: str(int(v)) for k, v in PARAMS.items()},
        "category_info": _literal(_category_info()),
        "empty_total": _literal(_empty_total()),
    }
    for name in sorted(constants, key=len, reverse=True):
        sql = sql.replace(f"${name}", constants[name])
    return sql.replace("$ids", "$1")


def period_rows(
    conn: duckdb.DuckDBPyConnection, stammtische: Collection[int]
) -> list[StoredPeriod]:
    """(stammtisch_id, year or None, finished games, the period as JSON) of every period of
    the Stammtische whose rows ``conn`` (DuckDB) holds; ``stammtische`` get an all-time
    period even without a finished game."""
    ids = sorted(int(s) for s in stammtische)
    rows = conn.execute(statement(conn), [ids]).fetchall()
    return [(int(st), int(period) or None, int(games), body) for st, period, games, body in rows]
