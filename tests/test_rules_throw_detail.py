"""Throw-by-throw turns (RULES.md 4-6, GAMELOG.md "throws"): the detail of a turn, its dice, the throw limit, and how a refused detail is reported (code, field, German message)."""

from __future__ import annotations
