"""Mutation testing's configuration stays whole (tests/mutation/MUTATION.md): mutmut judges
api/rules by every engine test file, and every listed equivalent mutant says why."""

from __future__ import annotations

import tomllib
from pathlib import Path

from mutation.report import KINDS, read_equivalents

ROOT = Path(__file__).resolve().parent.parent


def test_mutmut_runs_every_engine_test_file_and_nothing_else():
    """A new tests/test_rules_*.py must judge the mutants too; the API tests must not (they
    would make a run take hours and hide gaps in the engine's own tests)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mutmut"]
    engine = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_rules_*.py")}
    assert set(config["pytest_add_cli_args_test_selection"]) == engine | {
        "tests/test_cli_engine.py"
    }
    assert config["only_mutate"] == ["api/rules/*"]


def test_every_equivalent_mutant_names_its_kind_and_its_reason():
    entries = read_equivalents()
    assert entries, "the equivalents file is read"
    for entry in entries.values():
        assert entry.name.startswith("api.rules."), entry.name
        assert "__mutmut_" in entry.name, entry.name
        assert len(entry.fingerprint) == 10, entry.name
        assert entry.kind in KINDS
        assert len(entry.reason.split()) >= 5, f"{entry.name}: say why in a sentence"
