"""``schocken replay`` and ``schocken simulate``: the engine's command-line face."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from api.cli import main
from api.rules import replay_log

ROOT = Path(__file__).resolve().parents[1]
GAMELOG_MD = (ROOT / "schemas/GAMELOG.md").read_text(encoding="utf-8")
#: the example game log of schemas/GAMELOG.md and the outcome it documents for that log
EXAMPLE, DOCUMENTED_OUTCOME = (
    json.loads(block) for block in re.findall(r"```json\n(.*?)```", GAMELOG_MD, re.S)
)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv), standalone_mode=False)
    return code, capsys.readouterr().out


def test_replay_prints_the_outcome_gamelog_md_documents_for_its_example(tmp_path, capsys):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(EXAMPLE), encoding="utf-8")
    code, out = run(capsys, "replay", str(path))
    outcome = json.loads(out)
    assert code == 0
    # the documented keys, those of every round too (more keys are welcome, says the format)
    shown = {key: outcome[key] for key in DOCUMENTED_OUTCOME}
    shown["rounds"] = [
        {key: real[key] for key in documented}
        for real, documented in zip(outcome["rounds"], DOCUMENTED_OUTCOME["rounds"], strict=True)
    ]
    assert shown == DOCUMENTED_OUTCOME  # the penalty after the round: one more Deckel for Bert
    first = outcome["rounds"][0]
    assert (first["best_result"], first["worst_result"], first["value"]) == (
        "Schock 4",
        "Zahl 632",
        4,
    )


def test_replay_names_the_event_that_breaks_a_rule_and_exits_1(tmp_path, capsys):
    bad = {
        **EXAMPLE,
        "events": [*EXAMPLE["events"][:2], {"player": "Dieter", "dice": [1, 2, 3], "throws": 1}],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    code, out = run(capsys, "replay", str(path))
    assert code == 1
    assert json.loads(out) == {"error": "event 2: Dieter ist nicht an der Reihe, sondern Clara."}


def test_replay_of_malformed_input_prints_an_error_not_a_traceback(tmp_path, capsys):
    cases = {
        "not json": "{nope",
        "unknown option": json.dumps(
            {**EXAMPLE, "rules": {"preset": "standard", "overrides": {"jule": "maybe"}}}
        ),
        "missing file": None,
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.json"
        if text is not None:
            path.write_text(text, encoding="utf-8")
        code, out = run(capsys, "replay", str(path))
        assert code == 1, name
        error = json.loads(out)["error"]
        assert error, name
    assert (
        "jule"
        in json.loads(
            subprocess.run(
                [sys.executable, "-m", "api.cli", "replay", "-"],
                input=cases["unknown option"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
        )["error"]
    )


def test_simulate_writes_complete_valid_game_logs(tmp_path, capsys):
    out = tmp_path / "games.jsonl"
    code, _ = run(
        capsys, "simulate", "-n", "5", "--preset", "nrw", "--players", "5", "--seed", "7",
        "--start", "2025-01-02T20:00:00+01:00", "--detail", "--out", str(out),
    )  # fmt: skip
    assert code == 0
    logs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(logs) == 5
    assert [log["played_at"][:10] for log in logs] == [
        "2025-01-02", "2025-01-09", "2025-01-16", "2025-01-23", "2025-01-30",
    ]  # fmt: skip
    for log in logs:
        assert log["rules"]["preset"] == "nrw"
        assert any("detail" in e for e in log["events"])
        game = replay_log(log)
        assert game.finished and game.loser in log["players"]


def test_simulate_is_reproducible_with_a_seed(capsys):
    _, first = run(capsys, "simulate", "-n", "3", "--seed", "42")
    _, second = run(capsys, "simulate", "-n", "3", "--seed", "42")
    _, other = run(capsys, "simulate", "-n", "3", "--seed", "43")
    assert first == second != other


def test_replay_never_imports_flask_or_duckdb():
    script = (
        "import sys; from api.cli import main; "
        "code = main(['replay', '-'], standalone_mode=False); "
        "main(['--help'], standalone_mode=False); "
        "heavy = sorted({'flask', 'duckdb', 'api.app'} & set(sys.modules)); "
        "print(code, heavy, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(EXAMPLE),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout.splitlines()[0])["state"]["phase"] == "half1"
    assert result.stderr.strip().splitlines()[-1] == "0 []"


def test_every_command_has_help(capsys):
    for argv in (
        [], ["replay"], ["simulate"], ["serve"], ["openapi"], ["rebuild"], ["export"],
        ["import"], ["backup"], ["dashboard"], ["dashboard", "build"], ["demo"],
    ):  # fmt: skip
        assert main([*argv, "--help"], standalone_mode=False) == 0, argv
        out = capsys.readouterr().out
        assert out.startswith("Usage: ") and "Options:" in out, argv


def test_every_command_is_found_by_name_and_replay_loads_no_other_command_module() -> None:
    import importlib
    import subprocess
    import sys

    from api.cli import COMMAND_MODULES

    for module in set(COMMAND_MODULES.values()):
        names = {c.name for c in importlib.import_module(f"api.cli.{module}").COMMANDS}
        assert names == {n for n, m in COMMAND_MODULES.items() if m == module}, module
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from api.cli import main; "
            "main(['replay', '--help'], standalone_mode=False); "
            "print(sorted(m for m in sys.modules if m.startswith('api.cli.')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1]
    assert loaded == "['api.cli.base', 'api.cli.engine']"
