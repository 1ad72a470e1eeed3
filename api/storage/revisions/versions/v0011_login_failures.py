"""0011 login failures: the dialect's migrations/0011_login_failures.sql."""

from api.storage.migrate import apply

revision, down_revision = "0011", "0010"


def upgrade() -> None:
    apply(revision)
