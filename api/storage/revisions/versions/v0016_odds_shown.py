"""0016 odds shown: the dialect's migrations/0016_odds_shown.sql."""

from api.storage.migrate import apply

revision, down_revision = "0016", "0015"


def upgrade() -> None:
    apply(revision)
