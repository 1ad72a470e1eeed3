"""The documentation in the repository: the rule book (api/rules/RULES.md) against the engine,
the game-log format (schemas/gamelog.schema.json, schemas/GAMELOG.md) against real exported
logs, and every cited file exists."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import make_table, store_config
from jsonschema import Draft202012Validator

from api.app import create_app
from api.rules import PRESETS
from api.rules.ruleset import _ENUMS, HAND_BEATS_VALUES, HAND_ONLY_VALUES, OPTION_NAMES
from api.rules.simulate import simulate_logs
from schemas.gamelog import gamelog_schema

ROOT = Path(__file__).resolve().parents[1]
RULES_MD = (ROOT / "api" / "rules" / "RULES.md").read_text(encoding="utf-8")
GAMELOG_MD = (ROOT / "schemas" / "GAMELOG.md").read_text(encoding="utf-8")
VALIDATOR = Draft202012Validator(gamelog_schema())


def _errors(log: object) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(log)]


# ---------------------------------------------------------------------------- RULES.md


def test_the_rule_book_names_every_option_value_and_preset_of_the_engine():
    values = [v.value for enum in _ENUMS.values() for v in enum]
    words = [*OPTION_NAMES, *PRESETS, *values, *HAND_ONLY_VALUES, *HAND_BEATS_VALUES]
    assert [w for w in words if f"`{w}`" not in RULES_MD] == []


def _table(heading: str) -> list[list[str]]:
    section = RULES_MD.split(heading, 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [
        [cell.strip() for cell in row.strip("|").split("|")] for row in rows if "---" not in row
    ]


def _cell(text: str) -> object:
    """A cell of the tables of RULES.md §8 as the JSON value it writes."""
    text = text.replace("`", "")
    if text.startswith("["):
        return [item.strip() for item in text.strip("[]").split(",") if item.strip()]
    return json.loads(text) if text in ("true", "false", "null") or text.isdigit() else text


def test_the_preset_table_of_the_rule_book_is_the_engines():
    """RULES.md §8.2: every cell is the preset's value; options not listed keep the default."""
    header, *rows = _table("### 8.2 Presets")
    presets = [re.sub(r"[`].*|\s.*", "", name.strip("`")) for name in header[1:]]
    assert presets == list(PRESETS)
    listed = set()
    for option, *cells in rows:
        option = option.strip("`")
        listed.add(option)
        for preset, cell in zip(presets, cells, strict=True):
            assert PRESETS[preset].options()[option] == _cell(cell), (preset, option)
    default = PRESETS["standard"].options()
    for preset in presets:
        others = {k: v for k, v in PRESETS[preset].options().items() if k not in listed}
        assert others == {k: default[k] for k in others}, preset


def test_the_option_table_of_the_rule_book_lists_every_option_with_its_default_first():
    header, *rows = _table("### 8.1 Options")
    default = PRESETS["standard"].options()
    assert [row[0].strip("`") for row in rows] == list(OPTION_NAMES)
    for option, values, _section in rows:
        first = values.split(";")[0]
        assert _cell(first) == default[option.strip("`")], option


# ---------------------------------------------------------------------------- the game log


def test_the_game_log_schema_is_valid_json_schema_2020_12_and_knows_every_option_and_preset():
    schema = gamelog_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert list(schema["$defs"]["Overrides"]["properties"]) == list(OPTION_NAMES)
    assert schema["$defs"]["Rules"]["properties"]["preset"]["enum"] == list(PRESETS)


def test_the_examples_of_gamelog_md_are_valid_game_logs():
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", GAMELOG_MD, re.S)]
    logs = [b for b in blocks if "players" in b]
    assert logs
    for log in logs:
        assert _errors(log) == []


@pytest.mark.parametrize("preset", list(PRESETS))
def test_exported_logs_of_every_preset_are_valid_game_logs(preset):
    rules = PRESETS[preset]
    if rules.blind is False:
        rules = rules.replace(blind=True, specials=["achter"])  # more of the format in use
    for detail in (False, True):
        for log in simulate_logs(rules, 3, seed=7, detail=detail):
            assert _errors(log) == [], (preset, detail)


def test_the_schema_rejects_what_the_format_forbids():
    good = {"players": ["Anna", "Bert"], "starter": "Anna"}
    assert _errors(good) == []
    for bad in (
        {**good, "bier": True},
        {**good, "players": ["Anna"]},
        {**good, "rules": {"overrides": {"jule": "sometimes"}}},
        {**good, "rules": {"preset": "kneipe"}},
        {**good, "events": [{"player": "Anna", "dice": [1, 1, 7], "throws": 1}]},
        {**good, "events": [{"player": "Anna", "detail": [{"dice": [6, 6, 1], "sixes": 3}]}]},
        {**good, "events": [{"penalty": {"player": "Anna"}}]},
    ):
        assert _errors(bad), bad


def test_the_api_exports_valid_game_logs(tmp_path):
    """An imported log (turns in detail, penalties) exported again by the API is valid."""
    app = create_app(store_config("sqlite", tmp_path))
    try:
        client = app.test_client()
        table = make_table(client)
        rules = {"preset": "wikipedia", "overrides": {"blind": True}}
        (log,) = simulate_logs(PRESETS["wikipedia"].replace(blind=True), 1, seed=3, detail=True)
        log = {**log, "rules": rules, "played_at": "2026-11-27T20:15:00+01:00"}
        log["events"].insert(1, {"penalty": {"player": log["players"][0], "reason": "zu früh"}})
        r = table.post("/imports", log)
        assert r.status_code == 201, r.json
        exported = table.get(f"/games/{r.json['id']}/log", headers=table.auth)
        assert exported.status_code == 200
        assert _errors(exported.json) == []
        assert "penalty" in exported.json["events"][1]
    finally:
        app.extensions["schocken"].store.close()


# ---------------------------------------------------------------------------- citations

#: a cited file: a path ending in .md, .json, .yaml or .yml
CITATION = re.compile(
    r"(?<![\w./<{*-])((?:\.\./|[\w.-]+/)*[\w.-]*[A-Za-z_-][\w.-]*\.(?:md|json|ya?ml))\b"
)
#: where a cited .json or .yaml file lives: the repository's own folders (other names are data
#: made at run time or other projects' files: r.json, instance/demo_key.json, package.json)
OWN = {"api", "schemas", "dashboard", "tests", ".ci"}


def _is_citation(cited: str) -> bool:
    if cited.endswith(".md"):
        return True
    first = cited.split("/", 1)[0]
    return (
        first in OWN
        or cited in ("openapi.yaml", "pyproject.toml")
        or cited.endswith(".schema.json")
    )


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    files = []
    for name in out.splitlines():
        path = ROOT / name
        if (
            "vendor" in path.parts
            or path.name == "test_docs.py"
            or path.suffix
            not in {".py", ".md", ".yaml", ".yml", ".toml", ".sql", ".js", ".html", ".txt", ""}
        ):
            continue
        if path.is_file():
            files.append(path)
    return files


def test_every_cited_file_exists():
    """A path to a .md, .json or .yaml file named in the code, the docs or openapi.yaml exists,
    from the repository's root or from the citing file's folder; RULES.md and GAMELOG.md are
    always cited with their folder."""
    missing = []
    for path in _tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for line_no, line in enumerate(text.splitlines(), 1):
            for cited in CITATION.findall(line):
                if not _is_citation(cited):
                    continue
                if (ROOT / cited).exists() or (path.parent / cited).resolve().exists():
                    continue
                missing.append(f"{path.relative_to(ROOT)}:{line_no}: {cited}")
    assert missing == []


def _rule_sections() -> set[str]:
    """The numbers RULES.md can be cited by: "4" (## 4.), "8.1" (### 8.1), "3.3" (a paragraph
    "3.3 …"), "10.4" and "9.1" (item 4 of the list of section 10, item 1 of section 9)."""
    found: set[str] = set()
    section = ""
    for line in RULES_MD.splitlines():
        if m := re.match(r"#{2,3} (\d+(?:\.\d+)?)\.? ", line):
            found.add(m[1])
            section = m[1].split(".")[0]
        elif m := re.match(r"(\d+\.\d+) ", line):
            found.add(m[1])
        elif section and (m := re.match(r"(\d+)\. ", line)):
            found.add(f"{section}.{m[1]}")
    return found


def test_every_cited_section_of_the_rule_book_exists():
    """ "api/rules/RULES.md §10.4" (and "§8 and §10", "§10.8/10.9") name sections that exist."""
    sections = _rule_sections()
    assert {"2", "3.3", "4.2", "4.4", "5.4", "7", "8.2", "9.1", "10.4", "10.22"} <= sections
    cite = re.compile(r"RULES\.md §(\d+(?:\.\d+)*)((?:(?:/|, | and §?)\d+(?:\.\d+)*)*)")
    missing = []
    for path in [*_tracked_text_files(), ROOT / "api" / "rules" / "RULES.md"]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for first, more in cite.findall(text):
            for number in [first, *re.findall(r"\d+(?:\.\d+)*", more)]:
                if number not in sections:
                    missing.append(f"{path.relative_to(ROOT)}: §{number}")
    assert missing == []


def test_the_readme_is_a_guide_of_at_most_350_lines():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 350
    for linked in ("api/rules/RULES.md", "openapi.yaml", "/docs", "api/cli/HOSTING.md"):
        assert linked in readme
