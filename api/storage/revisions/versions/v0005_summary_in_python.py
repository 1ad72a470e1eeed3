"""0005 summary in python: the dialect's migrations/0005_summary_in_python.sql."""

from api.storage.migrate import apply

revision, down_revision = "0005", "0004"


def upgrade() -> None:
    apply(revision)
