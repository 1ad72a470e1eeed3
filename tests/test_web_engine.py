"""The rules engine in the phone's browser (api/web/engine.py, static/engine.js, engine-worker.js,
sw.js): the bundle holds the engine and nothing it does not need, the vendored Pyodide is
served compressed and immutable, and in real Chromium ``SchockenEngine.call`` answers from
Python under the pages' strict policy, also offline after a first visit through an invite link.

One live server (werkzeug, in-process) and one browser for the module.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brotli
import pytest
from flask import Flask
from test_web_browser import (
    Phone,
    browser_type_launch_args,  # noqa: F401 - Debian's Chromium
)
from test_web_offline_browser import Table, opened

from api.app import create_app
from api.http.headers import STRICT_CSP
from api.web import engine

VENDOR = engine.VENDOR
#: what the engine needs from Python besides the standard library
BUNDLED = ("api/rules/", "api/table/", "jinja2/", "markupsafe/")
PYTHON = json.loads((VENDOR / "pyodide-lock.json").read_text())["info"]["python"]


@pytest.fixture(scope="module")
def app() -> Iterator[Flask]:
    application = create_app({"STORAGE": "memory", "SECRET_KEY": "engine-test-" + "x" * 32})
    yield application


@pytest.fixture(scope="module")
def urls(app: Flask) -> dict[str, str]:
    with app.test_request_context("/"):
        return engine.engine_urls()


def test_the_bundle_holds_the_engine_and_jinja_and_imports_nothing_else(
    app: Flask, urls: dict[str, str], tmp_path: Path
) -> None:
    answer = app.test_client().get(urls["bundle"])
    assert answer.status_code == 200
    assert answer.mimetype == "application/zip"
    assert answer.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    names = zipfile.ZipFile(io.BytesIO(answer.data)).namelist()
    assert "api/__init__.py" in names and "api/table/browser.py" in names
    for prefix in BUNDLED:
        assert any(n.startswith(prefix) for n in names), prefix
    others = [n for n in names if n != "api/__init__.py" and not n.startswith(BUNDLED)]
    assert others == []
    assert all(n.endswith((".py", ".html")) for n in names)
    assert app.test_client().get("/engine/0123456789abcdef.zip").status_code == 404
    # only the zip and the standard library: no site-packages, not even the checkout
    bundle = tmp_path / "engine.zip"
    bundle.write_bytes(answer.data)
    probe = f"""
import doctest, sys
sys.path.insert(0, {str(bundle)!r})
import api.rules, api.table.browser, jinja2, markupsafe
failed, tried = doctest.testmod(api.rules)
assert tried and not failed, (failed, tried)
print(api.table.browser.hello('{{"a": 1}}'))
stdlib = {sysconfig.get_paths()["stdlib"]!r}
outside = sorted(
    name for name, module in sys.modules.items()
    if getattr(module, "__file__", None)
    and not module.__file__.startswith(({str(bundle)!r}, stdlib))
)
assert not outside, outside
"""
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["echo"] == {"a": 1}


@pytest.mark.parametrize("name", engine.RUNTIME)
def test_the_runtime_is_served_compressed_immutable_and_typed(
    app: Flask, urls: dict[str, str], name: str
) -> None:
    raw = (VENDOR / name).read_bytes()
    client = app.test_client()
    types = {
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".zip": "application/zip",
        ".json": "application/json",
    }
    decode = {"br": brotli.decompress, "gzip": gzip.decompress, None: bytes}
    for accepted, expected in (("gzip, deflate, br", "br"), ("gzip", "gzip"), ("", None)):
        if name.endswith(".zip"):
            expected = None  # compressed already
        r = client.get(urls["pyodide"] + name, headers={"Accept-Encoding": accepted})
        assert r.status_code == 200
        assert r.mimetype == types[Path(name).suffix]
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert r.headers.get("Content-Encoding") == expected
        assert "Accept-Encoding" in r.headers["Vary"]
        assert decode[expected](r.get_data()) == raw
        r.close()
    assert f"/pyodide/{engine.pyodide_version()}/" in urls["pyodide"]
    assert client.get(f"/engine/pyodide/0.0.1/{name}").status_code == 404


def test_the_worker_alone_may_compile_webassembly(app: Flask, urls: dict[str, str]) -> None:
    r = app.test_client().get(urls["worker"])
    assert r.status_code == 200 and r.mimetype == "text/javascript"
    assert "script-src 'self' 'wasm-unsafe-eval';" in r.headers["Content-Security-Policy"]
    assert "unsafe-eval'" not in r.headers["Content-Security-Policy"].replace("wasm-unsafe", "")
    assert "wasm" not in STRICT_CSP


def test_the_vendored_pyodide_keeps_its_licence_and_version() -> None:
    meta = json.loads((VENDOR / "package.json").read_text())
    assert (meta["name"], meta["license"]) == ("pyodide", "MPL-2.0")
    assert "Mozilla Public License Version 2.0" in (VENDOR / "LICENSE").read_text()
    assert engine.pyodide_version() == meta["version"]


# ----------------------------------------------------------------------------- in Chromium

READY = "() => window.SchockenEngine.start().then(() => window.SchockenEngine.timings)"
ENGINE_TIMEOUT = 90_000  # a cold start on a busy 2-core machine


@pytest.fixture(scope="module")
def table(api_server: str) -> Table:
    return Table(api_server)


def logged_in(browser: Any, base: str, table: Table) -> Phone:
    p = opened(browser, base, table, ENGINE_TIMEOUT)
    p.page.wait_for_load_state("load")
    return p


def hello(p: Phone) -> Any:
    return p.page.evaluate("() => window.SchockenEngine.call('hello', {n: 7, s: 'Schock aus'})")


@pytest.mark.browser
def test_python_answers_in_chromium_under_the_pages_strict_policy(
    browser: Any, api_server: str, table: Table
) -> None:
    p = logged_in(browser, api_server, table)
    page = p.page
    with page.expect_response(lambda r: r.url.endswith(table.url)) as answer:
        page.goto(table.url)
    assert answer.value.headers["content-security-policy"] == STRICT_CSP
    timings = page.evaluate(READY)
    assert set(timings) >= {"runtime", "fetch", "bundle", "import", "total", "ready"}
    assert hello(p) == {"echo": {"n": 7, "s": "Schock aus"}, "python": PYTHON}
    refused = page.evaluate(
        "() => window.SchockenEngine.call('_private', {}).then(() => 'called', e => e.message)"
    )
    assert refused == "Die Engine kennt keine Funktion '_private'."
    p.close()
    assert p.outside == [], f"requests left 127.0.0.1: {p.outside}"
    assert p.console_errors == [], f"console errors (CSP?): {p.console_errors}"


CACHED = """async ([pages, url, files]) => {
  const page = await (await caches.open(pages)).match(url);
  const engine = await caches.open("schocken-engine-v1");
  const assets = await caches.open("schocken-assets-v2");
  const scripts = [...document.querySelectorAll("script[src]")].map((s) => s.src);
  const stored = await Promise.all([
    ...files.map((f) => engine.match(f)), ...scripts.map((s) => assets.match(s))]);
  return Boolean(page) && stored.every(Boolean);
}"""


@pytest.mark.browser
@pytest.mark.timeout(300)  # the engine's files loaded twice, offline: long on a busy machine
def test_a_game_opened_through_an_invite_link_works_offline_at_once(
    browser: Any, api_server: str, table: Table, urls: dict[str, str]
) -> None:
    host = logged_in(browser, api_server, table)
    host.page.goto(table.url)
    link = host.page.locator("#invite-link").text_content() or ""
    assert "/einladung/" in link
    host.close()
    guest = Phone(browser, api_server, 390, True)  # a second phone: never here before
    guest.context.set_default_timeout(ENGINE_TIMEOUT)
    page = guest.page
    page.goto(link)
    assert page.url == api_server + table.url
    page.evaluate(READY)
    files = [api_server + f for f in urls["files"].split()]
    page.wait_for_function(CACHED, arg=["schocken-pages-v2", page.url, files], polling=200)
    guest.context.set_offline(True)
    page.reload()
    assert page.locator("#spiel-nr").count() == 1  # the stored game page
    page.evaluate(READY)
    assert hello(guest)["python"] == PYTHON
    guest.close()
    assert guest.outside == [], f"requests left 127.0.0.1: {guest.outside}"
    assert guest.console_errors == [], f"console errors (CSP?): {guest.console_errors}"


@pytest.mark.browser
def test_without_webassembly_ready_says_why_in_german(
    browser: Any, api_server: str, table: Table
) -> None:
    p = logged_in(browser, api_server, table)
    p.context.add_init_script("delete globalThis.WebAssembly")
    p.page.goto(table.url)
    said = p.page.evaluate(
        "() => window.SchockenEngine.start().then(() => 'ready', e => e.message)"
    )
    assert said == "Dieser Browser kann die Spiel-Engine nicht laden (kein WebAssembly)."
    refused = p.page.evaluate(
        "() => window.SchockenEngine.call('hello', {}).then(() => 'answered', e => e.message)"
    )
    assert refused == said
    p.close()
    assert p.console_errors == []


@pytest.mark.browser
def test_a_start_without_an_answer_in_time_fails_in_german_and_the_next_start_works(
    browser: Any, api_server: str, table: Table
) -> None:
    """The backstop: a start that has not answered within ``SchockenEngine.deadline`` ms (here
    far too short for any phone) rejects with a German note and ends its worker; the next
    start, with the usual deadline, begins anew and loads the engine."""
    p = logged_in(browser, api_server, table)
    p.page.goto(table.url)
    said = p.page.evaluate(
        """() => {
          window.SchockenEngine.deadline = 50;
          return window.SchockenEngine.start().then(() => 'ready', e => e.message);
        }"""
    )
    assert said == (
        "Die Spiel-Engine lädt zu lange. Bitte die Seite neu laden; ohne Netz bitte die Würfe "
        "aufschreiben und später eintragen."
    )
    p.page.evaluate("() => { window.SchockenEngine.deadline = 150000; }")
    assert hello(p)["python"] == PYTHON  # call() starts it again
    p.close()
    assert p.console_errors == []
