"""House rules (RULES.md, GAMELOG.md "rules"): every option, its values and its effect on a game."""

from __future__ import annotations
