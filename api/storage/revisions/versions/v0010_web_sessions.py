"""0010 web sessions: the dialect's migrations/0010_web_sessions.sql."""

from api.storage.migrate import apply

revision, down_revision = "0010", "0007"


def upgrade() -> None:
    apply(revision)
