"""The default install is the embedded mode (SQLite): PostgreSQL's packages come with the extra
``postgres`` (pyproject.toml). Without them SQLite works as ever and PostgreSQL is refused
with one line saying what to install (api/startup.py: ``require_postgres``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import main
from api.startup import POSTGRES_MODULES, StartupError, require_postgres

ROOT = Path(__file__).resolve().parents[1]
URL = "postgresql://schocken:geheim@127.0.0.1:1/schocken"
INSTALL = 'pip install "schocken[postgres]"'


@pytest.fixture
def without_postgres(monkeypatch):
    """The packages of the extra as if not installed (an import of any of them fails)."""
    for name in POSTGRES_MODULES:
        monkeypatch.setitem(sys.modules, name, None)


def test_postgresql_without_the_extra_is_refused_naming_what_to_install(without_postgres):
    with pytest.raises(StartupError) as refused:
        require_postgres()
    message = str(refused.value)
    assert INSTALL in message and "Extras „postgres“" in message and "extra" in message
    assert "psycopg" in message and "pyarrow" in message


def test_the_app_on_postgresql_without_the_extra_says_what_to_install(without_postgres):
    from api.app import create_app

    with pytest.raises(StartupError, match='pip install "schocken\\[postgres\\]"'):
        create_app({"STORAGE": "postgresql", "DATABASE_URL": URL})


@pytest.mark.parametrize(
    "command",
    [
        ["serve", "--database-url", URL],
        ["stats", "refresh", "--database-url", URL],
        ["webhooks", "send", "--database-url", URL],
        ["backup", "OUT", "--database-url", URL],
        ["copy", "a.sqlite3", URL],
    ],
)
def test_a_command_on_postgresql_without_the_extra_says_what_to_install_in_one_line(
    command, without_postgres, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main(command, standalone_mode=False) == 1
    said = capsys.readouterr()
    assert INSTALL in said.err and "Traceback" not in said.err + said.out
    assert "geheim" not in said.err


def test_the_embedded_mode_imports_none_of_the_extra(tmp_path):
    """A fresh interpreter in which the extra's packages cannot be imported (as after
    ``pip install .``): the app on SQLite starts, records, backs up and streams."""
    script = f"""
import sys
for name in {POSTGRES_MODULES!r}:
    sys.modules[name] = None
from pathlib import Path
from api.app import create_app
from api.domain.backup import backup_folder
from api.storage.watch import watch_of
app = create_app({{"DATABASE": {str(tmp_path / "pub.sqlite3")!r}, "TESTING": True}})
client = app.test_client()
made = client.post("/api/v1/stammtische", json={{"name": "Zur Post"}})
assert made.status_code == 201, made.get_json()
assert client.get("/api/v1/health").status_code == 200
store = app.extensions["schocken"].store
watch_of(store).close()
assert backup_folder(store, Path({str(tmp_path / "backup")!r}))["tables"] > 0
loaded = [m for m in sys.modules if m.split(".")[0] in {POSTGRES_MODULES!r} and sys.modules[m]]
assert not loaded and "api.storage.postgres" not in sys.modules, loaded
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
