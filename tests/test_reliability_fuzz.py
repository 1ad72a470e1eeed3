"""Fuzzing (api/bench/fuzz_check.py): game logs through the import endpoint, turns in detail
and single throws through the API, the same documents into the engine, and schemathesis over
every operation, also in stateful sequences. No 5xx, no crash, and every rejection leaves the
database exactly as it was.

The default run takes few examples; ``pytest -m slow`` runs 200 per operation and fuzzer."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance
from test_api_contract import _seeded_schema, excluded_checks

from api.bench.fuzz_check import fuzz_engine, fuzz_imports, fuzz_operations, fuzz_turn_detail
from api.domain import GameCache

SLOW = 200


def assert_clean(result, reaches=(201, 409, 422)):
    assert result["server_errors"] == 0, result
    assert result["changed_by_rejection"] == 0, result
    # the examples got past the schemas to the engine, and some were accepted
    assert set(reaches) <= set(result["statuses"]), result


def test_fuzzed_imports_never_fail_and_rejections_change_nothing():
    assert_clean(fuzz_imports(25))


def test_fuzzed_turns_in_detail_and_single_throws_never_fail_and_rejections_change_nothing():
    assert_clean(fuzz_turn_detail(25))


def test_the_engine_answers_fuzzed_logs_with_an_outcome_or_its_own_error():
    result = fuzz_engine(60)
    assert result["examples"] == 60 and {200, 422} <= set(result["statuses"])


def test_every_operation_answers_generated_requests_without_a_server_error():
    result = fuzz_operations(2)
    assert result["operations"] >= 30 and result["server_errors"] == 0


# ------------------------------------------------------------------------------ slow run
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
