"""The slow half of tests/test_reliability_fuzz.py (``pytest -m slow``): 200 examples per
operation and fuzzer, and schemathesis' stateful sequences. A module of its own, so that the
default run (``-m 'not slow'``) does not even collect it: building its schemathesis tests
would cost every worker seconds (tests/conftest.py, ``SLOW_ONLY``)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance
from test_api_contract import _seeded_schema, excluded_checks
from test_reliability_fuzz import SLOW, assert_clean

from api.bench.fuzz_check import fuzz_engine, fuzz_imports, fuzz_turn_detail
from api.domain import GameCache

pytestmark = pytest.mark.slow


@pytest.mark.slow
@pytest.mark.parametrize("fuzzer", [fuzz_imports, fuzz_turn_detail])
def test_many_fuzzed_writes_never_fail_and_rejections_change_nothing(fuzzer):
    assert_clean(fuzzer(SLOW * 2))


@pytest.mark.slow
def test_the_engine_survives_many_fuzzed_logs():
    assert fuzz_engine(SLOW * 5)["examples"] == SLOW * 5


slow_schema, SLOW_APP = _seeded_schema(WRITE_RATE_PER_MINUTE=0, CREATE_RATE_PER_HOUR=0)


@pytest.mark.slow
@slow_schema.parametrize()
@settings(
    max_examples=SLOW, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_every_operation_keeps_its_contract_over_many_examples(case):
    case.call_and_validate(excluded_checks=excluded_checks(case, SLOW_APP))


def _memory_state(app):
    """A copy of the in-memory store's data, to start every sequence from the seeded state."""
    repo = app.extensions["schocken"].store.repository()
    return {name: copy.deepcopy(getattr(repo, name)) for name in repo._STATE}


_SEEDED = _memory_state(slow_schema.app)


class _Workflow(slow_schema.as_state_machine()):
    def setup(self):
        # each sequence starts from the seeded Stammtisch (else examples depend on earlier ones)
        state = slow_schema.app.extensions["schocken"]
        repo = state.store.repository()
        for name, value in _SEEDED.items():
            setattr(repo, name, copy.deepcopy(value))
        state.cache = GameCache(state.cache.size)

    def validate_response(self, response, case, **kwargs):
        case.validate_response(response, excluded_checks=[positive_data_acceptance])


TestStatefulSequences = pytest.mark.slow(_Workflow.TestCase)
TestStatefulSequences.settings = settings(
    max_examples=SLOW,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
