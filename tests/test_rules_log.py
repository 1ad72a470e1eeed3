"""Game logs (GAMELOG.md): reading, writing and replaying a log, its records and its events, exactly as third-party apps depend on them."""

from __future__ import annotations
