"""0012 game events: the dialect's migrations/0012_game_events.sql."""

from api.storage.migrate import apply

revision, down_revision = "0012", "0011"


def upgrade() -> None:
    apply(revision)
