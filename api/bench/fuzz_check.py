"""Fuzzing the input paths a hostile or sloppy client reaches (needs the test extras).

* :func:`fuzz_imports`: game logs through ``POST …/imports`` — simulated logs mutated field by
  field, and arbitrary JSON — on a SQLite database;
* :func:`fuzz_turn_detail`: turns in detail (throw by throw lists) and single throws through
  ``POST …/turns`` / ``…/throws`` on a running game;
* :func:`fuzz_engine`: the same documents straight into the engine (``replay_text``,
  ``parse_event``): only the engine's own errors may come out;
* :func:`fuzz_operations`: schemathesis-generated requests for every operation of
  ``openapi.yaml`` (the contract checks themselves run in ``tests/test_api_contract.py``).

Every API answer must be below 500; every rejection (4xx) must leave the database exactly as
it was: the fuzzers compare a snapshot (every game's log and facts, the players, the stored
idempotent answers) before and after. Each returns its figures:
``{"examples", "server_errors", "rejections", "changed_by_rejection", "statuses"}``.
``python -m api.bench.fuzz_check [-n 200]`` prints them.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]

_json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
any_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=25,
)
dice = st.lists(st.integers(-1, 8), min_size=0, max_size=4)
names = st.sampled_from(PLAYERS + ["", "Zoe", "anna", "A" * 41])
detail_throw = st.fixed_dictionaries(
    {"dice": dice},
    optional={
        "aside": st.lists(st.integers(0, 7), max_size=4),
        "sixes": st.integers(-1, 3),
        "blind": st.booleans(),
        "hand": any_json,
    },
)
turn_event = st.fixed_dictionaries(
    {"player": names},
    optional={
        "dice": dice,
        "throws": st.integers(-1, 6) | any_json,
        "hand": st.booleans() | any_json,
        "blind": st.booleans(),
        "detail": st.lists(detail_throw, max_size=5),
        "penalty": st.fixed_dictionaries(
            {"player": names},
            optional={"deckel": st.integers(-1, 20), "reason": st.text(max_size=5)},
        ),
        "x": any_json,
    },
)

# well-shaped turns, so that most examples reach the engine's checks (api/rules/RULES.md §3)
pips = st.lists(st.integers(1, 6), min_size=1, max_size=3)
plausible_turn = st.one_of(
    st.fixed_dictionaries(
        {
            "player": st.sampled_from(PLAYERS),
            "dice": st.lists(st.integers(1, 6), min_size=3, max_size=3),
            "throws": st.integers(1, 3),
        },
        optional={"hand": st.booleans(), "blind": st.booleans()},
    ),
    st.fixed_dictionaries(
        {
            "player": st.sampled_from(PLAYERS),
            "detail": st.lists(
                st.fixed_dictionaries(
                    {"dice": pips},
                    optional={
                        "aside": st.lists(st.integers(1, 6), max_size=3),
                        "sixes": st.integers(0, 2),
                    },
                ),
                min_size=1,
                max_size=3,
            ),
        },
        optional={"blind": st.booleans()},
    ),
)


class Report:
    def __init__(self) -> None:
        self.statuses: Counter[int] = Counter()
        self.examples = 0
        self.changed: list[str] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "server_errors": sum(n for s, n in self.statuses.items() if s >= 500),
            "rejections": sum(n for s, n in self.statuses.items() if 400 <= s < 500),
            "changed_by_rejection": len(self.changed),
            "statuses": dict(sorted(self.statuses.items())),
        }


def _app(storage: str = "sqlite") -> Any:
    from api.app import create_app

    # not TESTING: an exception must become the 500 a client would see, and be counted
    config: dict[str, Any] = {
        "STORAGE": storage,
        "WRITE_RATE_PER_MINUTE": 0,
        "CREATE_RATE_PER_HOUR": 0,
    }
    if storage == "sqlite":  # a fresh file, removed when the process ends
        folder = tempfile.mkdtemp(prefix="schocken-fuzz-")
        atexit.register(shutil.rmtree, folder, True)
        config["DATABASE"] = os.path.join(folder, "fuzz.sqlite3")
    return create_app(config)


def snapshot(app: Any) -> Any:
    """Everything a write could change: every game's log and facts, players, stored answers."""
    with app.app_context():
        from api.http.context import services

        repo = services().repo
        games = repo.game_ids()
        stammtische = [1]
        return (
            games,
            [(repo.load_log(g), repo.read_facts(g)) for g in games],
            [repo.list_players(s) for s in stammtische],
            len(_responses(repo)),
        )


def _responses(repo: Any) -> list[Any]:
    if hasattr(repo, "responses"):
        return list(repo.responses)
    return list(repo.table_rows({"idempotency_keys": ("key_hash",)})["idempotency_keys"])


def _seeded(storage: str = "sqlite") -> tuple[Any, str, dict[str, str], int]:
    app = _app(storage)
    client = app.test_client()
    r = client.post("/api/v1/stammtische", json={"name": "Zur Post"})
    auth = {"Authorization": f"Bearer {r.json['token']}"}
    for name in PLAYERS:
        client.post("/api/v1/stammtische/zur-post/players", json={"name": name}, headers=auth)
    game = client.post(
        "/api/v1/stammtische/zur-post/games",
        json={"players": PLAYERS, "starter": "Anna"},
        headers=auth,
    ).json["id"]
    return app, "/api/v1/stammtische/zur-post", auth, game


def _send(app: Any, report: Report, path: str, body: Any, auth: dict[str, str]) -> int:
    before = snapshot(app)
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    r = app.test_client().post(
        path, data=data, headers={**auth, "Content-Type": "application/json"}
    )
    report.examples += 1
    report.statuses[r.status_code] += 1
    if 400 <= r.status_code < 500 and snapshot(app) != before:
        report.changed.append(f"{r.status_code} {path} {str(body)[:200]}")
    return int(r.status_code)


def _close(app: Any) -> None:
    app.extensions["schocken"].store.close()


def _mutated_logs(n: int) -> Any:
    from api.rules import PRESETS
    from api.rules.simulate import simulate_logs

    logs = list(simulate_logs(PRESETS["standard"], 5, players=PLAYERS, seed=3))
    logs += list(simulate_logs(PRESETS["nrw"], 3, players=PLAYERS, seed=4, detail=True))
    base = st.sampled_from(logs)

    @st.composite
    def mutate(draw: Any) -> Any:
        log = json.loads(json.dumps(draw(base)))
        events = log["events"]
        for _ in range(draw(st.integers(0, 3))):
            what = draw(st.sampled_from(["event", "drop", "swap", "field", "head", "cut"]))
            if what == "event" and events:
                events[draw(st.integers(0, len(events) - 1))] = draw(turn_event)
            elif what == "drop" and events:
                del events[draw(st.integers(0, len(events) - 1))]
            elif what == "swap" and len(events) > 1:
                i = draw(st.integers(0, len(events) - 2))
                events[i], events[i + 1] = events[i + 1], events[i]
            elif what == "field" and events:
                event = events[draw(st.integers(0, len(events) - 1))]
                event[draw(st.sampled_from(["dice", "throws", "hand", "player", "detail"]))] = draw(
                    any_json
                )
            elif what == "head":
                log[draw(st.sampled_from(["players", "starter", "rules", "played_at", "v"]))] = (
                    draw(any_json)
                )
            elif what == "cut":
                log["events"] = events = events[: draw(st.integers(0, len(events)))]
        return log

    return mutate() | any_json


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def _run(one: Any, app: Any, report: Report) -> dict[str, Any]:
    """Run a fuzz test against the app, then close it; the report with the first changes."""
    try:
        one()
    finally:
        _close(app)
    return report.to_dict() | {"changes": report.changed[:5]}


def fuzz_imports(n: int = 50) -> dict[str, Any]:
    app, base, auth, _game = _seeded()
    report = Report()

    @_settings(n)
    @given(_mutated_logs(n))
    def one(doc: Any) -> None:
        _send(app, report, base + "/imports", doc, auth)

    return _run(one, app, report)


def fuzz_turn_detail(n: int = 50) -> dict[str, Any]:
    app, base, auth, game = _seeded()
    report = Report()

    @_settings(n)
    @given(plausible_turn | turn_event, st.booleans())
    def one(event: Any, single: bool) -> None:
        if single:  # one throw: {player, dice, aside, sixes, blind, stop}
            first = (event.get("detail") or [{}])[0]
            event = {"player": event.get("player"), **first} | (
                {"dice": event["dice"]} if "dice" in event else {}
            )
        _send(app, report, f"{base}/games/{game}/{'throws' if single else 'turns'}", event, auth)

    return _run(one, app, report)


def fuzz_engine(n: int = 100) -> dict[str, Any]:
    """The engine alone: a document or an event in, an outcome or a SchockenError out."""
    from api.rules import PRESETS, SchockenError, parse_event, replay_text

    report = Report()

    @_settings(n)
    @given(_mutated_logs(n), turn_event)
    def one(doc: Any, event: Any) -> None:
        report.examples += 1
        outcome = replay_text(json.dumps(doc))
        report.statuses[422 if "error" in outcome else 200] += 1
        try:
            parse_event(event, PRESETS["standard"])
        except SchockenError:
            pass

    one()
    result = report.to_dict()
    del result["changed_by_rejection"]  # no database here
    return result


def fuzz_operations(n: int = 10) -> dict[str, Any]:
    """Every operation of the OpenAPI document, ``n`` generated requests each."""
    import schemathesis
    from schemathesis.core.result import Err

    app, _base, auth, game = _seeded()
    config = schemathesis.Config.from_dict(
        {
            "parameters": {"path.slug": "zur-post", "path.game_id": game, "path.player_id": 1},
            "auth": {"openapi": {"bearerAuth": {"bearer": auth["Authorization"][7:]}}},
        }
    )
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app, config=config)
    report = Report()
    operations = 0
    for found in schema.get_all_operations():
        if isinstance(found, Err):  # the document itself is broken: nothing to fuzz
            raise found.err()
        operation = found.ok()
        operations += 1

        @_settings(n)
        @given(operation.as_strategy())
        def one(case: Any) -> None:
            response = case.call()
            report.examples += 1
            report.statuses[response.status_code] += 1

        one()
    figures = report.to_dict() | {"operations": operations}
    del figures["changed_by_rejection"]  # many operations, no snapshot: only statuses counted
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fuzz the API and the engine")
    parser.add_argument("-n", type=int, default=200, help="examples per fuzzer / operation")
    args = parser.parse_args(argv)
    result = {
        "imports": fuzz_imports(args.n),
        "turn_detail": fuzz_turn_detail(args.n),
        "engine": fuzz_engine(args.n),
        "operations": fuzz_operations(args.n),
    }
    print(json.dumps(result, indent=1, ensure_ascii=False))
    bad = any(r["server_errors"] or r.get("changed_by_rejection") for r in result.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
