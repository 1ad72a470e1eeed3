"""0004 game row per phase: the dialect's migrations/0004_game_row_per_phase.sql."""

from api.storage.migrate import apply

revision, down_revision = "0004", "0003"


def upgrade() -> None:
    apply(revision)
