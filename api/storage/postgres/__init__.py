"""PostgreSQL's part of the relational adapter (:mod:`.store`, psycopg 3) and its migrations
(``migrations/``), selected by a ``postgresql://`` URL."""

from __future__ import annotations

from .store import PostgresRepository, PostgresStore, is_postgres_url

__all__ = ["PostgresRepository", "PostgresStore", "is_postgres_url"]
