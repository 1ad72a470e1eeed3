"""What a use case refuses, in words a player understands; no HTTP here.

The entrypoints map these to their own answers in one place each (``api/http/errors.py`` for
the API, the error pages of ``api/web``). ``field`` names the input the message is about.
The engine's own errors (:class:`~api.rules.SchockenError`) pass through unchanged.
"""

from __future__ import annotations

from ..rules import CodedError
from ..storage import StorageUnavailable, StorageUnreachable


class DomainError(CodedError):
    """Base of every error a use case raises (besides the engine's): ``message``, ``field`` and
    ``code`` (:mod:`api.domain.problems`) as the engine's errors have them."""

    default_code = "invalid_request"


class NotFound(DomainError):
    """No such Stammtisch, player, game or preset (here)."""

    default_code = "not_found"


class Conflict(DomainError):
    """The request is understood but clashes with what is stored (a taken name, a race)."""

    default_code = "conflict"


class Invalid(DomainError):
    """The input is malformed for this use case (an empty name, an unknown player)."""

    default_code = "invalid_request"


class Unauthorized(DomainError):
    """The Stammtisch's key is needed and was not given."""

    default_code = "unauthorized"


class Forbidden(DomainError):
    """A key was given but it is not this Stammtisch's."""

    default_code = "forbidden"


#: a write lost a race with another write to the same game
CONCURRENT_CHANGE = "Das Spiel wurde gleichzeitig geändert; bitte den Stand neu laden."

#: the database cannot write now (a full disk, a read-only file or folder, an I/O error)
STORAGE_UNAVAILABLE = (
    "Die Datenbank kann gerade nicht schreiben (Speicher voll oder schreibgeschützt); "
    "nichts wurde gespeichert. Bitte gleich noch einmal versuchen."
)

#: the database server cannot be reached now (PostgreSQL down, restarting, or refusing)
DATABASE_UNREACHABLE = (
    "Die Datenbank ist gerade nicht erreichbar; nichts wurde gespeichert. Bitte in ein paar "
    "Sekunden noch einmal versuchen."
)


def unavailable_message(error: StorageUnavailable) -> str:
    """What a player is told when ``error`` kept a request from the database: its cause in
    words (the database server unreachable, or a database that cannot write)."""
    if isinstance(error, StorageUnreachable):
        return DATABASE_UNREACHABLE
    return STORAGE_UNAVAILABLE
