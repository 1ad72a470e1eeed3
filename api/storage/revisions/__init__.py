"""Alembic's script folder of the stores of record (:mod:`api.storage.migrate` runs it): its
``env.py`` and one revision per migration in ``versions/``."""
