"""The toolchain of pyproject.toml holds for the whole tree: ruff lint, ruff format, mypy, and
the size limits of modules and functions."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing():
    result = run(tool("ruff"), "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_formatted_by_ruff():
    result = run(tool("ruff"), "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_engine_passes_mypy_strict():
    result = run(tool("mypy"), "api/rules")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing_in_api_schemas_and_dashboard():
    """`mypy --strict` over the files of [tool.mypy] in pyproject.toml (api, schemas, dashboard)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert set(config["files"]) == {"api", "schemas", "dashboard"} and config["strict"] is True
    result = run(tool("mypy"), "--strict")
    assert result.returncode == 0, result.stdout + result.stderr


PACKAGES = ("api", "schemas", "dashboard")
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
# the engine's state machine is one piece: splitting it would scatter the rules of a game
LONG_MODULES_ALLOWED = {"api/rules/game.py"}


def oversized() -> list[str]:
    """Modules over MAX_MODULE_LINES lines and functions or methods (nested ones too) over
    MAX_FUNCTION_LINES lines, from `def` to the last line of the body, decorators not counted."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            source = path.read_text(encoding="utf-8")
            lines = len(source.splitlines())
            if lines > MAX_MODULE_LINES and name not in LONG_MODULES_ALLOWED:
                found.append(f"{name}: {lines} lines")
            for node in ast.walk(ast.parse(source, filename=name)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        found.append(f"{name}:{node.lineno} {node.name}(): {length} lines")
    return found


def test_no_module_or_function_is_too_long():
    found = oversized()
    assert not found, (
        f"over {MAX_MODULE_LINES} lines per module or {MAX_FUNCTION_LINES} per function:\n"
        + "\n".join(found)
    )


def test_the_heavy_modules_run_first_and_exist():
    """tests/conftest.py's HEAVY_FIRST names test files that exist (a renamed one would start
    late again), and the default run hands them out in that order."""
    from conftest import HEAVY_FIRST

    assert all((ROOT / "tests" / name).is_file() for name in HEAVY_FIRST), HEAVY_FIRST
    assert len(set(HEAVY_FIRST)) == len(HEAVY_FIRST)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert "loadfile" in addopts and "--no-loadscope-reorder" in addopts
