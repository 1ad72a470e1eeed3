"""No 500 on any input (issue 25): schemathesis over the whole API on a SQLite file — every
operation with every check, its examples, coverage and fuzzing phases, then the stateful phase
(sequences of calls chained through the ids the answers carry) — finds no server error and no
other failed check.

Left out of the fuzzed operations is what would lock the run out of its own Stammtisch: a new
key (``rotateStammtischKey``) ends the token every later request carries. Rate limits are off
(thousands of requests come from one address and one token). A request that makes the
Stammtisch private is the only one excused from ``ignored_auth`` (a private Stammtisch answers
404 without its token, where schemathesis expects 401), and the Stammtisch is made public
again before the next one (see :func:`test_api_contract.excluded_checks`); schemas check shape
and the engine checks legality, so a well-shaped request the rules forbid (a documented 409 or
422) is no failure of ``positive_data_acceptance``. Each stateful sequence starts from the
seeded database (the SQLite backup API copies the seeded file back).

The default run keeps to a small budget (well under a minute); ``pytest -m slow`` runs many
more examples and sequences (tests/test_api_no_server_error_slow.py).
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import ignored_auth
from test_api_contract import _seeded_schema, excluded_checks

from api.domain import GameCache

#: the operations that would lock the run out of its own Stammtisch
LOCKING_OUT = ["rotateStammtischKey"]
#: examples per operation and sequences: the default run, and ``-m slow``
QUICK, SLOW = 5, 100


def _sqlite_schema() -> tuple[Any, Any, Path]:
    folder = Path(tempfile.mkdtemp(prefix="schocken-no500-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    database = folder / "api.sqlite3"
    schema, app = _seeded_schema(
        STORAGE="sqlite",
        DATABASE=str(database),
        WRITE_RATE_PER_MINUTE=0,
        CREATE_RATE_PER_HOUR=0,
    )
    seeded = folder / "seeded.sqlite3"
    with sqlite3.connect(database) as live, sqlite3.connect(seeded) as copy:
        live.backup(copy)
    return schema.exclude(operation_id=LOCKING_OUT), app, seeded


def _restore(app: Any, seeded: Path) -> None:
    """The database as seeded, and no game state cached from the sequence before."""
    with sqlite3.connect(seeded) as copy, sqlite3.connect(app.config["DATABASE"]) as live:
        copy.backup(live)
    state = app.extensions["schocken"]
    state.cache = GameCache(state.cache.size)


schema, APP, SEEDED = _sqlite_schema()


def _hypothesis(examples: int, steps: int | None = None) -> settings:
    extra = {"stateful_step_count": steps} if steps else {}
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        **extra,
    )


@schema.parametrize()
@_hypothesis(QUICK)
def test_no_operation_answers_a_server_error(case: Any) -> None:
    case.call_and_validate(excluded_checks=excluded_checks(case, APP))


class _Workflow:
    """Sequences from the seeded database; a Stammtisch made in a sequence is written to with
    the token its creation answered (as a client would), the seeded one with the configured
    token."""

    app: Any
    seeded: Path

    def setup(self) -> None:
        _restore(self.app, self.seeded)
        self.tokens: dict[str, str] = {}

    def before_call(self, case: Any) -> None:
        token = self.tokens.get(str((case.path_parameters or {}).get("slug")))
        if token is not None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}

    def after_call(self, response: Any, case: Any) -> None:
        if case.operation.path == "/api/v1/stammtische" and response.status_code == 201:
            made = response.json()
            self.tokens[made["slug"]] = made["token"]

    def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
        excused = excluded_checks(case, self.app)
        if str((case.path_parameters or {}).get("slug")) in self.tokens:
            # the token is the test's own header here, not schemathesis' auth: it cannot
            # take it away to see the request refused
            excused.append(ignored_auth)
        case.validate_response(response, excluded_checks=excused)


class _Sequences(_Workflow, schema.as_state_machine()):  # type: ignore[misc]
    app, seeded = APP, SEEDED


TestSequencesWithoutAServerError = _Sequences.TestCase
TestSequencesWithoutAServerError.settings = _hypothesis(QUICK * 6, steps=6)
