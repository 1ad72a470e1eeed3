"""Turns (RULES.md): the opener's limit, blind turns, turning sixes, and how a refused turn is reported."""

from __future__ import annotations
