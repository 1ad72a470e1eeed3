"""0006 stats read model: the dialect's migrations/0006_stats_read_model.sql."""

from api.storage.migrate import apply

revision, down_revision = "0006", "0005"


def upgrade() -> None:
    apply(revision)
