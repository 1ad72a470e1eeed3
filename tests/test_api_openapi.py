"""openapi.yaml: committed, generated from the app, valid OpenAPI 3.1, every field documented;
Swagger UI at /docs from local files, rendered in headless Chromium without any other host."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import yaml
from openapi_spec_validator import validate
from werkzeug.serving import make_server

from api.app import create_app
from api.cli import main
from api.cli.server import openapi_yaml

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_openapi_yaml_is_what_the_app_generates():
    committed = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    assert committed == openapi_yaml(), "openapi.yaml drifted: run `schocken openapi`"


def test_schocken_openapi_check_fails_on_drift(tmp_path, capsys):
    out = tmp_path / "openapi.yaml"
    out.write_text("openapi: 3.1.0\n")
    assert main(["openapi", "--check", "--out", str(out)], standalone_mode=False) == 1
    assert main(["openapi", "--out", str(out)], standalone_mode=False) == 0
    assert main(["openapi", "--check", "--out", str(out)], standalone_mode=False) == 0


def test_openapi_yaml_is_valid_openapi_3_1():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    assert spec["openapi"] == "3.1.0"
    validate(spec)


def _properties(schema, path):
    for name, prop in schema.get("properties", {}).items():
        yield f"{path}.{name}", prop
        if "items" in prop:
            yield from _properties(prop["items"], f"{path}.{name}[]")


def test_every_field_of_our_schemas_has_a_description_and_an_example():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    schemas = spec["components"]["schemas"]
    missing = [
        where
        for name, schema in schemas.items()
        if name != "PaginationMetadata"
        for where, prop in _properties(schema, name)
        if "$ref" not in prop and ("description" not in prop or "example" not in prop)
    ]
    assert missing == []
    assert len(schemas) >= 20


def test_every_operation_has_a_summary_and_writes_declare_the_bearer_token():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    ours = {"health", "stammtische", "players", "rules", "games", "imports"}
    operations = 0
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in ("get", "post", "patch", "put", "delete"):
                continue
            assert op.get("summary"), (method, path)
            if not ours & set(op.get("tags", [])):
                continue  # other resources (statistics) document their own access rules
            operations += 1
            if method != "get":
                public = path in (
                    "/api/v1/stammtische",
                    "/api/v1/rules/evaluate",
                    "/api/v1/rules/odds",
                )
                expected = None if public else [{"bearerAuth": []}]
            elif path == "/api/v1/health":
                expected = [{}, {"adminToken": []}]  # details for the operator only
            elif path.startswith("/api/v1/stammtische/"):
                expected = [{}, {"bearerAuth": []}]  # private Stammtische need the token
            elif path == "/api/v1/health":
                expected = [{}, {"adminToken": []}]  # the admin sees the webhook sender too
            else:
                expected = None
            assert op.get("security") == expected, (method, path)
    assert (
        operations == 24
    )  # with POST /stammtische/{slug}/key, /games/{game_id}/abandon, /rules/odds


def test_docs_page_and_its_assets_come_from_this_server():
    client = create_app({"STORAGE": "memory"}).test_client()
    page = client.get("/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    urls = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert urls and all(u.startswith("/docs/static/") for u in urls), urls
    for url in urls:
        asset = client.get(url)
        assert asset.status_code == 200 and len(asset.data) > 1000, url
        asset.close()
    assert client.get("/openapi.json").json["info"]["title"] == "Schocken scorekeeper API"


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium not installed")
def test_swagger_ui_renders_in_headless_chromium_without_other_hosts(tmp_path):
    app = create_app({"STORAGE": "memory"})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/docs"
        result = subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-sync",
                "--disable-component-update",
                f"--user-data-dir={tmp_path / 'profile'}",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--virtual-time-budget=15000",
                "--dump-dom",
                url,
            ],  # fmt: skip
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
    finally:
        server.shutdown()
    dom = result.stdout
    assert "swagger-ui" in dom, result.stderr[-2000:]
    assert "Schocken scorekeeper API" in dom  # the spec was fetched and rendered
    assert "Record a single throw" in dom
