"""The slow half of tests/test_api_no_server_error.py (``pytest -m slow``): many more
examples and sequences on a database of its own. A module of its own, so that the default run
(``-m 'not slow'``) does not even collect it: building its schemathesis tests would cost every
worker seconds (tests/conftest.py, ``SLOW_ONLY``)."""

from __future__ import annotations

from typing import Any

import pytest
from test_api_contract import excluded_checks
from test_api_no_server_error import SLOW, _hypothesis, _sqlite_schema, _Workflow

pytestmark = pytest.mark.slow


slow_schema, SLOW_APP, SLOW_SEEDED = _sqlite_schema()


@pytest.mark.slow
@slow_schema.parametrize()
@_hypothesis(SLOW)
def test_no_operation_answers_a_server_error_over_many_examples(case: Any) -> None:
    case.call_and_validate(excluded_checks=excluded_checks(case, SLOW_APP))


class _ManySequences(_Workflow, slow_schema.as_state_machine()):  # type: ignore[misc]
    app, seeded = SLOW_APP, SLOW_SEEDED


TestManySequencesWithoutAServerError = pytest.mark.slow(_ManySequences.TestCase)
TestManySequencesWithoutAServerError.settings = _hypothesis(SLOW * 3, steps=10)
