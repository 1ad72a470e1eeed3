"""Issue 13, item 6: unusable folders and databases stop a command with one line naming the
real cause and exit code 1 (no traceback); the dashboard works with a folder it cannot write;
instance data (secret key, admin token, dashboard assets) lives beside its database.

Permissions mean nothing to root: as root, the commands run as the user ``nobody``
(65534) in a subprocess, on a folder of their own that every user may enter. Where the
checkout itself lies in a folder only root may enter (a clone in ``mktemp -d``), ``nobody``
keeps one capability, ``CAP_DAC_READ_SEARCH``: it reads and enters every folder, but writes only
where the permissions allow, which is what these tests are about; only the test of an unreadable
database skips then.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from api.app import create_app
from api.cli import main
from api.storage import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
TRACEBACK = "Traceback"


@functools.cache
def other_user() -> tuple[str, ...]:
    """The prefix that runs a command whose permissions count: as ``nobody`` when we are
    root (setpriv, util-linux)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    plain = (setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
    reading = (*plain, "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search")
    for prefix in (plain, reading):
        probe = [*prefix, sys.executable, "-c", "import api"]
        if subprocess.run(probe, env=child_env(), cwd="/", check=False).returncode == 0:
            return prefix
    pytest.skip("the user nobody cannot run this checkout")


def reads_everything() -> bool:
    """Whether the commands run with ``CAP_DAC_READ_SEARCH`` (see the module's text)."""
    return any("dac_read_search" in part for part in other_user())


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOCKEN_")}
    env["PYTHONPATH"] = str(ROOT)  # the checkout under test, wherever it is
    # not the run's bytecode tree (tests/conftest.py): this user could not add to it, and with
    # it Python would compile every package from source rather than read their __pycache__
    env.pop("PYTHONPYCACHEPREFIX", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(folder: Path, *args: str, code: str = "") -> subprocess.CompletedProcess[str]:
    """``schocken ARGS`` (or ``python -c CODE ARGS``) in ``folder`` as a user without
    privileges."""
    command = ["-c", code, *args] if code else ["-m", "api.cli", *args]
    return subprocess.run(
        [*other_user(), sys.executable, *command],
        cwd=folder,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder every user may write in (tmp_path's parents are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="schocken-hardening-"))
    folder.chmod(0o777)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o777)
    shutil.rmtree(folder)


def database(folder: Path, mode: int = 0o666) -> Path:
    """A migrated database file in ``folder`` (made by us, then given ``mode``)."""
    path = folder / "pub.sqlite3"
    SQLiteStore(path).close()
    for extra in folder.glob("pub.sqlite3*"):
        extra.chmod(0o666)
    path.chmod(mode)
    return path


def refused(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """The command stopped with exit code 1 and one line naming the cause."""
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    assert TRACEBACK not in result.stderr, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], lines[0]
    assert "Server darauf" not in lines[0]  # nothing is locked here
    return lines[0]


def test_a_read_only_database_folder_stops_serve(place: Path) -> None:
    (place / "ro").mkdir()
    (place / "ro").chmod(0o555)
    refused(run(place, "serve", "--db", "ro/pub.sqlite3"), "Schreibrechte", "ro")


def test_a_database_folder_that_is_a_file_stops_serve(place: Path) -> None:
    (place / "afile").write_text("")
    refused(run(place, "serve", "--db", "afile/pub.sqlite3"), "afile", "Datei")


@pytest.mark.parametrize(
    "command",
    [
        ["serve"],
        ["rebuild"],
        ["demo", "--years", "1"],
        ["stats", "refresh"],
        ["dashboard", "build", "--out", "site"],
        ["export", "out"],
    ],
    ids=lambda c: c[0],
)
def test_a_file_that_is_not_a_database_stops_every_command(place: Path, command: list[str]) -> None:
    (place / "notes.sqlite3").write_text("Einkaufsliste: Bier, Würfel, Bierdeckel\n")
    (place / "notes.sqlite3").chmod(0o666)
    result = run(place, *command, "--db", "notes.sqlite3")
    refused(result, "notes.sqlite3", "keine SQLite-Datenbank")
    assert (place / "notes.sqlite3").read_text().startswith("Einkaufsliste")


def test_a_database_without_write_permission_stops_serve(place: Path) -> None:
    database(place, 0o444)
    refused(run(place, "serve", "--db", "pub.sqlite3"), "Schreibrechte", "pub.sqlite3")


def test_a_database_without_read_permission_stops_serve(place: Path) -> None:
    if reads_everything():
        pytest.skip("the checkout is readable only with CAP_DAC_READ_SEARCH, which reads all")
    path = database(place, 0o600)
    if os.geteuid() != 0:
        path.chmod(0o000)
    refused(run(place, "serve", "--db", "pub.sqlite3"), "Leserechte", "pub.sqlite3")


def test_a_read_only_instance_folder_stops_serve(place: Path) -> None:
    database(place)
    (place / "pub.sqlite3-instance").mkdir()
    (place / "pub.sqlite3-instance").chmod(0o555)
    refused(run(place, "serve", "--db", "pub.sqlite3"), "Instanzordner", "pub.sqlite3-instance")


def test_an_instance_path_that_is_a_file_stops_serve(place: Path) -> None:
    database(place)
    (place / "pub.sqlite3-instance").write_text("")
    refused(run(place, "serve", "--db", "pub.sqlite3"), "Instanzordner", "ist eine Datei")


def test_a_default_instance_folder_that_is_a_file_stops_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    instance = tmp_path / "instance"
    instance.write_text("")
    monkeypatch.setattr(Flask, "auto_find_instance_path", lambda self: str(instance))
    for name in ("SCHOCKEN_DATABASE", "SCHOCKEN_STORAGE"):
        monkeypatch.delenv(name, raising=False)
    assert main(["serve"], standalone_mode=False) == 1
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1 and str(instance) in line and "Datei" in line, line


def test_locked_is_said_only_when_the_database_is_locked(tmp_path: Path) -> None:
    from api.startup import describe

    path = database(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError) as caught:
            sqlite3.connect(path, timeout=0).execute("BEGIN IMMEDIATE")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "gesperrt" in describe(caught.value, path) and "Server" in describe(caught.value, path)
    other = describe(sqlite3.OperationalError("unable to open database file"), path)
    assert "gesperrt" not in other and "Server" not in other


DASHBOARD = """
import json, sys
from api.app import create_app
from dashboard import assets
app = create_app(json.loads(sys.argv[1]))
client = app.test_client()
r = client.post("/api/v1/stammtische", json={"name": "Zur Post"})
slug = r.json["slug"]
names = assets.names()
urls = ["/dashboard/", f"/dashboard/{slug}/", f"/dashboard/{names['style.css']}",
        f"/dashboard/{names['plotly.js']}"]
print(json.dumps({u: client.get(u).status_code for u in urls}))
app.extensions["schocken"].store.close()
"""


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_the_dashboard_works_with_a_folder_it_cannot_write(place: Path, storage: str) -> None:
    site = place / "site"
    site.mkdir()
    site.chmod(0o555)
    config = {"STORAGE": storage, "DASHBOARD_DIR": str(site), "SECRET_KEY": "k" * 64}
    if storage == "sqlite":
        # migrated by us first: the user without privileges reads this checkout only through
        # the capability to read any file, which access(2) ignores (Alembic checks its folder
        # with it); an installed package is readable by every user
        config["DATABASE"] = str(database(place))
    result = run(place, json.dumps(config), code=DASHBOARD)
    assert result.returncode == 0, result.stderr[-2000:]
    statuses = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(statuses.values()) == {200}, statuses
    assert not any(site.iterdir())


def close(app: Flask) -> None:
    app.extensions["schocken"].store.close()


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The instance folder of a checkout (in tmp_path), no SCHOCKEN_* settings."""
    instance = tmp_path / "checkout" / "instance"
    monkeypatch.setattr(Flask, "auto_find_instance_path", lambda self: str(instance))
    for name in [n for n in os.environ if n.startswith("SCHOCKEN_")]:
        monkeypatch.delenv(name)
    return instance


def instance_data(app: Flask) -> dict[str, Any]:
    from api.http.context import admin_token

    with app.app_context():
        token = admin_token(app)
    folder = app.extensions["schocken_dashboard"]
    return {"secret": app.config["SECRET_KEY"], "admin": token, "dashboard": folder}


def test_two_databases_in_one_checkout_share_no_instance_data(
    checkout: Path, tmp_path: Path
) -> None:
    one = create_app({"DATABASE": str(tmp_path / "a" / "one.sqlite3")})
    two = create_app({"DATABASE": str(tmp_path / "b" / "two.sqlite3")})
    try:
        first, second = instance_data(one), instance_data(two)
        for key in first:
            assert first[key] != second[key], key
        assert Path(one.instance_path) == tmp_path / "a" / "one.sqlite3-instance"
        assert (Path(one.instance_path) / "secret_key").read_text().strip() == first["secret"]
        assert (Path(two.instance_path) / "admin_token").read_text().strip() == second["admin"]
        assert first["dashboard"] == tmp_path / "a" / "one.sqlite3-instance" / "dashboard"
        assert not checkout.exists()  # the checkout's instance folder is not touched
    finally:
        close(one)
        close(two)
    again = create_app({"DATABASE": str(tmp_path / "a" / "one.sqlite3")})
    try:
        assert instance_data(again)["secret"] == first["secret"]  # kept across restarts
    finally:
        close(again)


def test_the_default_database_keeps_its_instance_folder_and_secrets(checkout: Path) -> None:
    checkout.mkdir(parents=True)
    (checkout / "secret_key").write_text("s" * 64 + "\n")
    (checkout / "admin_token").write_text("admin-geheim")
    app = create_app({})
    try:
        assert app.config["DATABASE"] == str(checkout / "schocken.sqlite3")
        assert Path(app.instance_path) == checkout
        data = instance_data(app)
        assert data["secret"] == "s" * 64 and data["admin"] == "admin-geheim"
        assert data["dashboard"] == checkout / "dashboard"
    finally:
        close(app)
    explicit = create_app({"DATABASE": str(checkout / "schocken.sqlite3")})
    try:
        assert Path(explicit.instance_path) == checkout  # --db naming the default file
    finally:
        close(explicit)
