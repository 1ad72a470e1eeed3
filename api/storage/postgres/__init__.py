"""The PostgreSQL adapter (psycopg 3 with a connection pool), selected by a ``postgresql://``
URL: :class:`PostgresStore` connects and migrates, and hands out :class:`PostgresRepository`
objects, one pooled connection each per request. Locking and durability are explained in
:mod:`.store` and :mod:`.repository`."""

from __future__ import annotations

from .repository import PostgresRepository
from .store import PostgresStore, is_postgres_url

__all__ = ["PostgresRepository", "PostgresStore", "is_postgres_url"]
