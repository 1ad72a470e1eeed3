"""0013 webhooks: the dialect's migrations/0013_webhooks.sql."""

from api.storage.migrate import apply

revision, down_revision = "0013", "0012"


def upgrade() -> None:
    apply(revision)
