"""Compiled templates are shared between processes (api/jinja_cache.py): a template is compiled
once, later environments load it; the cache never stops a page from rendering."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from jinja2 import DictLoader, Environment

from api import jinja_cache
from api.app import create_app
from dashboard import site


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temporary folder of the test's own, where Jinja makes its cache folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _env(templates, kind="test"):
    return Environment(
        loader=DictLoader(templates), bytecode_cache=jinja_cache.compiled_templates(kind)
    )


def _compiles(env, monkeypatch):
    """Count the templates ``env`` compiles from their source."""
    compiled = []
    original = env.compile

    def counting(source, *args, **kwargs):
        compiled.append(source)
        return original(source, *args, **kwargs)

    monkeypatch.setattr(env, "compile", counting)
    return compiled


def test_a_template_is_compiled_once_and_loaded_by_later_environments(private_tmp, monkeypatch):
    first = _env({"p.html": "Hallo {{ name }}"})
    compiled = _compiles(first, monkeypatch)
    assert first.get_template("p.html").render(name="Anna") == "Hallo Anna"
    assert len(compiled) == 1
    (folder,) = private_tmp.glob("_jinja2-cache-*")
    assert [p.name.startswith("schocken-test-") for p in folder.iterdir()] == [True]

    later = _env({"p.html": "Hallo {{ name }}"})
    compiled = _compiles(later, monkeypatch)
    assert later.get_template("p.html").render(name="Bert") == "Hallo Bert"
    assert compiled == []  # loaded from the cache

    edited = _env({"p.html": "Servus {{ name }}"})
    compiled = _compiles(edited, monkeypatch)
    assert edited.get_template("p.html").render(name="Clara") == "Servus Clara"
    assert len(compiled) == 1  # the source changed: compiled again, never the old text


def test_a_cache_that_cannot_be_written_only_costs_time(private_tmp):
    env = _env({"p.html": "{{ 6 * 7 }}"})
    shutil.rmtree(next(private_tmp.glob("_jinja2-cache-*")))  # a clean-up removed the folder
    assert env.get_template("p.html").render() == "42"


def test_without_a_safe_temporary_folder_templates_compile_in_memory(private_tmp):
    elsewhere = private_tmp / "elsewhere"
    elsewhere.mkdir()
    # the cache folder is a link to another folder, as an attacker could plant it: refused
    (private_tmp / f"_jinja2-cache-{os.getuid()}").symlink_to(elsewhere)
    assert jinja_cache.compiled_templates("test") is None
    env = _env({"p.html": "{{ 6 * 7 }}"})
    assert env.get_template("p.html").render() == "42"


def test_the_form_and_the_dashboard_use_the_cache():
    app = create_app({"STORAGE": "memory", "TESTING": True})
    assert isinstance(app.jinja_env.bytecode_cache, jinja_cache.FileSystemBytecodeCache)
    assert app.jinja_env.bytecode_cache.pattern.startswith("schocken-web-")
    assert site.environment().bytecode_cache.pattern.startswith("schocken-dashboard-")
