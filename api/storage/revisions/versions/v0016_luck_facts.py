"""0016 luck facts: the dialect's migrations/0016_luck_facts.sql."""

from api.storage.migrate import apply

revision, down_revision = "0016", "0015"


def upgrade() -> None:
    apply(revision)
