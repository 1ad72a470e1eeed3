"""Alembic's environment: the migrations run on the connection :mod:`api.storage.migrate`
hands over (``config.attributes["connection"]``), inside its transaction."""

from alembic import context

context.configure(connection=context.config.attributes["connection"])
with context.begin_transaction():
    context.run_migrations()
