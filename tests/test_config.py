"""Configuration: one object (api/config.py), the environment read when an app is made."""

from __future__ import annotations

import os

import pytest

from api.app import create_app
from api.config import Config, database_file, settings


def test_an_environment_variable_set_after_import_is_honoured(tmp_path, monkeypatch):
    db = tmp_path / "env.sqlite3"
    monkeypatch.setenv("SCHOCKEN_DATABASE", str(db))
    monkeypatch.setenv("SCHOCKEN_WRITE_RATE_PER_MINUTE", "60")
    monkeypatch.setenv("SCHOCKEN_WRITE_RATE_BURST", "2")
    monkeypatch.setenv("SCHOCKEN_COOKIE_SECURE", "1")
    monkeypatch.setenv("SCHOCKEN_SECRET_KEY", "1234567890" * 4)  # digits stay a string
    monkeypatch.setenv("SCHOCKEN_ADMIN_TOKEN", "007")
    app = create_app()
    try:
        config = app.config
        assert config["DATABASE"] == str(db) and db.exists()
        assert config["WRITE_RATE_PER_MINUTE"] == 60.0 and config["WRITE_RATE_BURST"] == 2
        assert config["SESSION_COOKIE_SECURE"] is True
        assert config["SECRET_KEY"] == "1234567890" * 4 and config["ADMIN_TOKEN"] == "007"
        client = app.test_client()
        st = client.post("/api/v1/stammtische", json={"name": "Zur Post"}).json
        auth = {"Authorization": f"Bearer {st['token']}"}
        codes = [
            client.post(
                "/api/v1/stammtische/zur-post/players", json={"name": name}, headers=auth
            ).status_code
            for name in ("Anna", "Bert", "Clara")
        ]
        assert codes == [201, 201, 429]  # a burst of two writes
    finally:
        app.extensions["schocken"].store.close()


def test_the_mapping_given_to_create_app_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("SCHOCKEN_STORAGE", "sqlite")
    monkeypatch.setenv("SCHOCKEN_MAX_JSON_DEPTH", "5")
    app = create_app({"STORAGE": "memory"})
    assert app.config["STORAGE"] == "memory" and app.config["MAX_JSON_DEPTH"] == 5


def test_environment_values_take_the_type_of_the_default(monkeypatch):
    monkeypatch.setenv("SCHOCKEN_COOKIE_SECURE", "0")
    monkeypatch.setenv("SCHOCKEN_DUCKDB_THREADS", "4")
    monkeypatch.setenv("SCHOCKEN_TESTING", "true")  # no default here: JSON, as Flask reads it
    config = settings()
    assert config["SESSION_COOKIE_SECURE"] is False and config["DUCKDB_THREADS"] == 4
    assert config["TESTING"] is True
    monkeypatch.setenv("SCHOCKEN_GAME_CACHE_SIZE", "many")
    with pytest.raises(ValueError, match="SCHOCKEN_GAME_CACHE_SIZE"):
        settings()


def test_every_default_lives_in_the_config_object(monkeypatch):
    keys = ("WRITE_RATE_PER_MINUTE", "WRITE_RATE_BURST", "IDEMPOTENCY_TTL_HOURS",
            "MAX_JSON_DEPTH", "ADMIN_TOKEN", "DUCKDB_THREADS", "GAME_CACHE_SIZE")  # fmt: skip
    for key in keys:
        monkeypatch.delenv(f"SCHOCKEN_{key}", raising=False)
    app = create_app({"STORAGE": "memory"})
    assert {key: app.config[key] for key in keys} == {key: getattr(Config, key) for key in keys}


def test_sqlite_in_the_instance_folder_is_the_default_store():
    assert Config.STORAGE == "sqlite" and Config.DATABASE is None
    assert database_file("inst") == os.path.join("inst", "schocken.sqlite3")
