"""Fuzzing (api/bench/fuzz_check.py): game logs through the import endpoint, turns in detail
and single throws through the API, the same documents into the engine, and schemathesis over
every operation, also in stateful sequences. No 5xx, no crash, and every rejection leaves the
database exactly as it was.

The default run takes few examples; ``pytest -m slow`` runs 200 per operation and fuzzer
(tests/test_reliability_fuzz_slow.py)."""

from __future__ import annotations

from api.bench.fuzz_check import fuzz_engine, fuzz_imports, fuzz_operations, fuzz_turn_detail

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
