"""0003 player game facts: the dialect's migrations/0003_player_game_facts.sql."""

from api.storage.migrate import apply

revision, down_revision = "0003", "0002"


def upgrade() -> None:
    apply(revision)
