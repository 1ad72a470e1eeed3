"""0015 webhook busy: the dialect's migrations/0015_webhook_busy.sql."""

from api.storage.migrate import apply

revision, down_revision = "0015", "0014"


def upgrade() -> None:
    apply(revision)
