"""The architecture holds: import-linter's contracts (pyproject.toml, ``[tool.importlinter]``)
are kept by the code, and they do catch an import that points the wrong way."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import FunctionType

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
CONTRACTS = 6


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache"], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_every_import_contract_is_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {CONTRACTS} kept, 0 broken." in result.stdout


@pytest.fixture
def copy_of_the_code(tmp_path: Path) -> Path:
    for name in ("api", "schemas", "dashboard"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("module", "bad_import", "broken"),
    [
        # a use case reaching up into the HTTP layer: the layers contract
        ("api/domain/base.py", "from api.http import context", "not allowed to import api.http"),
        # the engine importing a web framework: the purity contract
        ("api/rules/results.py", "import flask", "is not allowed to import flask"),
        # storage importing a use case: the layers contract again, from below
        ("api/storage/records.py", "import api.domain", "not allowed to import api.domain"),
        # the game screen (it runs in the phone's browser too) importing the server's framework
        ("api/table/views.py", "import werkzeug", "is not allowed to import werkzeug"),
    ],
)
def test_an_import_against_the_layers_breaks_a_contract(
    copy_of_the_code, module, bad_import, broken
):
    path = copy_of_the_code / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{bad_import}  # noqa\n", "utf-8")
    result = lint_imports(copy_of_the_code)
    assert result.returncode != 0
    assert broken in result.stdout


def test_an_import_inside_a_function_counts_too(copy_of_the_code):
    path = copy_of_the_code / "api/storage/records.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text + "\n\ndef _late():\n    from api.app import create_app  # noqa\n", "utf-8"
    )
    result = lint_imports(copy_of_the_code)
    assert result.returncode != 0
    assert "api.storage is not allowed to import api.app" in result.stdout


#: underscore methods a library documents as the ones to override: marshmallow's custom fields
#: ("Creating a field class": implement ``_serialize`` and/or ``_deserialize``)
DOCUMENTED_HOOKS = {"marshmallow": {"_serialize", "_deserialize"}}


def _private_overrides(cls: type) -> list[str]:
    """The names of ``cls``'s own methods that replace a private method of a class from
    another package (a dependency's internals: they change without notice)."""
    mine = [  # not _sunder_ names: the enum module's documented hooks
        n
        for n, v in vars(cls).items()
        if n.startswith("_")
        and not n.startswith("__")
        and not n.endswith("_")
        and isinstance(v, FunctionType | classmethod | staticmethod | property)
    ]
    found = []
    for base in cls.__mro__[1:]:
        package = base.__module__.split(".")[0]
        if package in ("api", "schemas", "dashboard", "builtins"):
            continue
        allowed = DOCUMENTED_HOOKS.get(package, set())
        found += [
            f"{base.__module__}.{base.__qualname__}.{n}"
            for n in mine
            if n in vars(base) and n not in allowed
        ]
    return found


def test_no_class_overrides_a_private_method_of_a_dependency():
    import importlib
    import inspect
    import pkgutil

    import api
    import dashboard
    import schemas

    found = []
    for package in (api, schemas, dashboard):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if ".bench" in info.name or ".revisions" in info.name or info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__:
                    found += [
                        f"{module.__name__}.{cls.__name__}: {o}" for o in _private_overrides(cls)
                    ]
    assert found == []


def test_the_private_override_check_finds_one():
    from flask_smorest import Api

    class Patched(Api):  # type: ignore[misc]
        def _register_responses(self) -> None:  # the kind of override the rule forbids
            pass

    assert _private_overrides(Patched) == ["flask_smorest.spec.APISpecMixin._register_responses"]
