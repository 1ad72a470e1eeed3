"""The revisions, one per number of ``api/storage/{sqlite,postgres}/migrations/`` (each runs the
dialect's SQL file of its number)."""
