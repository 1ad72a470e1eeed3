"""0017 luck facts: the dialect's migrations/0017_luck_facts.sql."""

from api.storage.migrate import apply

revision, down_revision = "0017", "0016"


def upgrade() -> None:
    apply(revision)
