"""0014 game numbers: the dialect's migrations/0014_game_numbers.sql."""

from api.storage.migrate import apply

revision, down_revision = "0014", "0013"


def upgrade() -> None:
    apply(revision)
