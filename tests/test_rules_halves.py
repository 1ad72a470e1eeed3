"""Halves, the Finale, penalties and the end of a game (RULES.md): who loses, who holds the Deckel, who starts."""

from __future__ import annotations
