"""0002 idempotency: the dialect's migrations/0002_idempotency.sql."""

from api.storage.migrate import apply

revision, down_revision = "0002", "0001"


def upgrade() -> None:
    apply(revision)
