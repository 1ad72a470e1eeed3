"""Use cases: load → rules engine → persist log entry and facts in one transaction → return.

The domain layer knows the repository port (``api/storage``) and the engine (``api/rules``),
never Flask or HTTP. Its errors (:mod:`api.domain.errors`) carry no status codes: each
entrypoint maps them in one place.

Writes are serialised by the database (each opens its write transaction first; several server
processes share one database), and each game's engine state is cached between requests
(:class:`GameCache`, checked against the game's stored version on every use), so recording a
turn costs one engine step, not a replay of the whole game.
"""

from ..table.entry import describe_entry
from .base import utcnow
from .errors import (
    CONCURRENT_CHANGE,
    DATABASE_UNREACHABLE,
    STORAGE_UNAVAILABLE,
    Conflict,
    DomainError,
    Forbidden,
    Invalid,
    NotFound,
    Unauthorized,
    unavailable_message,
)
from .runtime import GameCache, GameView, WriteResult
from .services import Services
from .stammtische import hash_token, slugify

__all__ = [
    "CONCURRENT_CHANGE",
    "DATABASE_UNREACHABLE",
    "STORAGE_UNAVAILABLE",
    "Conflict",
    "DomainError",
    "Forbidden",
    "GameCache",
    "GameView",
    "Invalid",
    "NotFound",
    "Services",
    "Unauthorized",
    "WriteResult",
    "describe_entry",
    "hash_token",
    "slugify",
    "unavailable_message",
    "utcnow",
]
