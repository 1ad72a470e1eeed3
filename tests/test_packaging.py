"""What gets installed: the wheel ships the application without the benchmarks, and
.ci/constraints.txt pins every package that `pip install -e ".[test]"` brings."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"


def build_wheel(tmp_path: Path) -> zipfile.ZipFile:
    """Build from a copy of the sources, so no stale `build/` directory of the checkout leaks
    into the wheel (and the checkout gets none)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("api", "schemas", "dashboard"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["--wheel-dir", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (tmp_path / "dist").glob("schocken-*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_ships_the_application_but_not_the_benchmarks(tmp_path):
    with build_wheel(tmp_path) as wheel:
        names = set(wheel.namelist())
    assert not sorted(name for name in names if name.startswith("api/bench")), (
        "api/bench imports test-only packages: keep it out of the wheel"
    )
    for needed in (
        "api/app.py",
        "api/rules/game.py",
        "api/storage/sqlite/migrations/0001_initial.sql",
        "api/storage/postgres/migrations/0001_initial.sql",
        "schemas/__init__.py",
        "schemas/gamelog.schema.json",
        "dashboard/queries/overview.sql",
        "dashboard/static/dashboard.js",
        "dashboard/static/vendor/plotly.js-basic-dist-min/plotly-basic.min.js",
        "dashboard/static/vendor/plotly.js-basic-dist-min/LICENSE",
        "api/web/static/engine.js",
        "api/web/static/engine-worker.js",
        "api/web/templates/_engine.html",
        *(
            f"api/web/static/vendor/pyodide/{name}"
            for name in (
                "pyodide.mjs",
                "pyodide.mjs.br",
                "pyodide.asm.mjs",
                "pyodide.asm.mjs.gz",
                "pyodide.asm.wasm",
                "pyodide.asm.wasm.br",
                "pyodide.asm.wasm.gz",
                "python_stdlib.zip",
                "pyodide-lock.json",
                "package.json",
                "LICENSE",
            )
        ),
    ):
        assert needed in names


def pins() -> dict[str, str]:
    pinned = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"not an exact pin in {CONSTRAINTS.name}: {line}"
            pinned[canonicalize_name(name)] = version
    return pinned


def wanted(requirement: Requirement, extras: set[str]) -> bool:
    marker = requirement.marker
    return marker is None or any(marker.evaluate({"extra": extra}) for extra in extras | {""})


def test_the_constraints_pin_every_package_of_the_test_install():
    """Installed with the README's command, the environment is exactly the pinned closure of
    schocken[test]; a dependency added to pyproject.toml without regenerating the file fails
    here (the one-liner is at the top of .ci/constraints.txt)."""
    pinned = pins()
    missing = set()
    todo = [("schocken", {"test"})]
    seen = set()
    while todo:
        name, extras = todo.pop()
        if (name, frozenset(extras)) in seen:
            continue
        seen.add((name, frozenset(extras)))
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if not wanted(requirement, extras):
                continue
            key = canonicalize_name(requirement.name)
            if key == "schocken":  # an extra taking another one (test: postgres)
                todo.append((key, set(requirement.extras)))
                continue
            if key not in pinned:
                missing.add(key)
            elif name == "schocken" and str(requirement.specifier).startswith("=="):
                assert requirement.specifier.contains(pinned[key]), (
                    f"{key}: pyproject.toml says {requirement.specifier}, "
                    f"constraints.txt {pinned[key]}"
                )
            todo.append((requirement.name, set(requirement.extras)))
    assert not sorted(missing), f"not pinned in .ci/constraints.txt: {sorted(missing)}"


def test_the_pinned_tools_are_pinned_exactly_in_the_test_extra():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    test_extra = {
        canonicalize_name(Requirement(line).name): str(Requirement(line).specifier)
        for line in pyproject["project"]["optional-dependencies"]["test"]
    }
    for tool in ("ruff", "mypy", "import-linter"):
        assert test_extra[tool].startswith("=="), f"{tool} must be pinned: {test_extra[tool]}"


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = readme.split("Set up and run every test", 1)[1].split("```sh\n", 1)[1]
    command = command.split("\n", 1)[0]
    assert "-c .ci/constraints.txt" in command
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_default_install_is_the_embedded_mode_and_postgres_an_extra():
    """``pip install .`` brings what SQLite needs and no more; ``.[postgres]`` adds exactly the
    packages whose absence api/startup.py refuses PostgreSQL for; the test extra takes it."""
    from api.startup import POSTGRES_MODULES

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    default = {canonicalize_name(Requirement(line).name) for line in project["dependencies"]}
    postgres = {canonicalize_name(Requirement(line).name) for line in extras["postgres"]}
    assert postgres == {"psycopg", "adbc-driver-postgresql", "pyarrow"}
    assert {name.replace("-", "_") for name in postgres} == set(POSTGRES_MODULES)
    assert not default & postgres
    assert not [name for name in default if "arrow" in name or "psycopg" in name]
    assert "schocken[postgres]" in extras["test"]
