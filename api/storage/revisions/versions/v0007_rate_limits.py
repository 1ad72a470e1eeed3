"""0007 rate limits: the dialect's migrations/0007_rate_limits.sql."""

from api.storage.migrate import apply

revision, down_revision = "0007", "0006"


def upgrade() -> None:
    apply(revision)
