"""0001 initial: the dialect's migrations/0001_initial.sql."""

from api.storage.migrate import apply

revision, down_revision = "0001", None


def upgrade() -> None:
    apply(revision)
