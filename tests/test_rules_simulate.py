"""The simulated games (api.rules.simulate) that feed the demo and the benchmarks: every one is a legal game under its ruleset."""

from __future__ import annotations
