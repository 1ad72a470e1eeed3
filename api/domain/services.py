"""The use cases behind one name: what entrypoints (API resources, the form, the CLI) call.

Each aggregate has its own module (``stammtische``, ``players``, ``games``, ``recording``,
``rebuild``); :class:`Services` joins them over one repository (one request), the process's
:class:`~api.domain.runtime.GameCache` and a clock. The rules catalogue needs no storage and is
plain functions (``api/domain/catalog.py``).
"""

from __future__ import annotations

from .abandon import AbandonUseCases
from .events import EventUseCases
from .games import GameUseCases
from .players import PlayerUseCases
from .rebuild import RebuildUseCases
from .recording import RecordingUseCases
from .stammtische import StammtischUseCases
from .webhooks import WebhookUseCases


class Services(
    EventUseCases,
    StammtischUseCases,
    PlayerUseCases,
    GameUseCases,
    RecordingUseCases,
    RebuildUseCases,
    AbandonUseCases,
    WebhookUseCases,
):
    """The use cases, on one repository (one request)."""
