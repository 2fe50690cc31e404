"""Section C: invariants of UPDATE of `jobs/status` (ST-001..ST-011, ST-020..ST-041).

Every case is an UPDATE of the status subresource: the server copies `spec` from the old
object, so only the old object's spec matters. Gated checks (RULES.md §C.1) run only when the
fields they read change between the old and the new object.
"""

from __future__ import annotations

import copy
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from jobguard.validators.context import JobStatusContext
from jobguard.validators.errors import MAX_LISTED, MoreErrors
from jobguard.validators.rules import status as status_rules
from jobguard.validators.settings import RuleOverride
from tests.builders import (
    LATER,
    START,
    causes,
    cond,
    job,
    messages,
    settings,
    status_update,
    with_status,
)
from tests.cases import read_object, read_update

EVEN_LATER = "2026-01-01T12:00:00Z"
EARLIER = "2026-01-01T09:30:00Z"

INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
DUPLICATE = "FieldValueDuplicate"
CONDITIONS = "status.conditions"

SCM = cond("SuccessCriteriaMet")
COMPLETE = cond("Complete")
FAILED = cond("Failed")
FAILURE_TARGET = cond("FailureTarget")

RUNNING = with_status(job(), startTime=START, active=1)
DONE = with_status(
    job(),
    startTime=START,
    completionTime=LATER,
    conditions=[SCM, COMPLETE],
    succeeded=1,
    active=0,
)
FAILING = with_status(job(), startTime=START, active=0, failed=7, conditions=[FAILURE_TARGET])
FAILED_JOB = with_status(FAILING, conditions=[FAILURE_TARGET, FAILED])
# A Complete Job written before SuccessCriteriaMet existed (stored, never re-validated).
LEGACY_DONE = with_status(DONE, conditions=[COMPLETE])


def indexed(completions: int = 4, parallelism: int | None = None, **spec: Any) -> dict[str, Any]:
    return job(
        completionMode="Indexed",
        completions=completions,
        parallelism=completions if parallelism is None else parallelism,
        **spec,
    )


def per_index(completions: int = 10) -> dict[str, Any]:
    """An Indexed Job with backoffLimitPerIndex, defaulted as the server stores it."""
    return indexed(
        completions,
        backoffLimitPerIndex=1,
        backoffLimit=2147483647,
        podReplacementPolicy="Failed",
    )


def finish(old: dict[str, Any], **status: Any) -> dict[str, Any]:
    """`old` completed successfully, with `status` overriding the usual finishing fields."""
    fields: dict[str, Any] = {
        "active": 0,
        "succeeded": 1,
        "completionTime": LATER,
        "conditions": [SCM, COMPLETE],
    }
    fields.update(status)
    return with_status(old, **fields)


def without(obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for key in keys:
        out["status"].pop(key, None)
    return out


# --- baseline ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(job(), with_status(job(), startTime=START, active=1), id="start"),
        pytest.param(RUNNING, with_status(RUNNING, ready=1), id="ready"),
        pytest.param(RUNNING, finish(RUNNING), id="complete"),
        pytest.param(RUNNING, with_status(RUNNING, conditions=[SCM]), id="scm-before-complete"),
        pytest.param(FAILING, FAILED_JOB, id="fail-after-failure-target"),
        pytest.param(DONE, copy.deepcopy(DONE), id="no-op"),
    ],
)
def test_normal_controller_updates_are_accepted(old, new):
    verdict = status_update(new, old)
    assert causes(verdict) == []
    assert verdict.allowed


# --- ST-001..ST-005 counters (always on) -----------------------------------------------------


COUNTERS = [
    ("ST-001", "active"),
    ("ST-002", "succeeded"),
    ("ST-003", "failed"),
    ("ST-004", "ready"),
    ("ST-005", "terminating"),
]


@pytest.mark.parametrize(("rule", "name"), COUNTERS)
def test_negative_counter_rejected_even_when_unchanged(rule, name):
    old = with_status(RUNNING, **{name: -1})
    verdict = status_update(copy.deepcopy(old), old)
    assert causes(verdict) == [(rule, f"status.{name}", INVALID)]
    assert messages(verdict) == [
        f"status.{name}: Invalid value: -1: must be greater than or equal to 0"
    ]
    assert not verdict.allowed


@pytest.mark.parametrize(("rule", "name"), COUNTERS)
def test_zero_counter_accepted(rule, name):
    assert causes(status_update(with_status(RUNNING, **{name: 0}), RUNNING)) == []


@pytest.mark.parametrize(
    ("name", "counter_rule", "decrease_rule"),
    [("succeeded", "ST-002", "ST-020"), ("failed", "ST-003", "ST-021")],
)
def test_negative_counter_that_decreased_reports_both(name, counter_rule, decrease_rule):
    verdict = status_update(with_status(RUNNING, **{name: -1}), RUNNING)
    assert causes(verdict) == [
        (counter_rule, f"status.{name}", INVALID),
        (decrease_rule, f"status.{name}", INVALID),
    ]


# --- ST-006 uncountedTerminatedPods -----------------------------------------------------------


def test_st006_empty_and_duplicate_uids_across_both_lists():
    new = with_status(
        RUNNING,
        uncountedTerminatedPods={"succeeded": ["a", "", "a", "b"], "failed": ["b", "", "c", "a"]},
    )
    verdict = status_update(new, RUNNING)
    path = "status.uncountedTerminatedPods"
    assert causes(verdict) == [
        ("ST-006", f"{path}.succeeded[1]", INVALID),
        ("ST-006", f"{path}.succeeded[2]", DUPLICATE),
        ("ST-006", f"{path}.failed[0]", DUPLICATE),
        ("ST-006", f"{path}.failed[1]", INVALID),
        ("ST-006", f"{path}.failed[3]", DUPLICATE),
    ]
    assert messages(verdict) == [
        f'{path}.succeeded[1]: Invalid value: "": must not be empty',
        f'{path}.succeeded[2]: Duplicate value: "a"',
        f'{path}.failed[0]: Duplicate value: "b"',
        f'{path}.failed[1]: Invalid value: "": must not be empty',
        f'{path}.failed[3]: Duplicate value: "a"',
    ]


def test_st006_empty_uids_are_not_remembered_as_seen():
    new = with_status(RUNNING, uncountedTerminatedPods={"succeeded": [""], "failed": [""]})
    assert causes(status_update(new, RUNNING)) == [
        ("ST-006", "status.uncountedTerminatedPods.succeeded[0]", INVALID),
        ("ST-006", "status.uncountedTerminatedPods.failed[0]", INVALID),
    ]


def test_st006_always_on_even_when_unchanged():
    old = with_status(RUNNING, uncountedTerminatedPods={"succeeded": ["a"], "failed": ["a"]})
    assert causes(status_update(copy.deepcopy(old), old)) == [
        ("ST-006", "status.uncountedTerminatedPods.failed[0]", DUPLICATE)
    ]


def _st006_reference(succeeded: list[str], failed: list[str]) -> list[tuple[str, str, str]]:
    """upstream validateJobStatus, one UID at a time."""
    seen: set[str] = set()
    out = []
    for name, uids in (("succeeded", succeeded), ("failed", failed)):
        for i, uid in enumerate(uids):
            path = f"status.uncountedTerminatedPods.{name}[{i}]"
            if uid == "":
                out.append(("ST-006", path, INVALID))
            elif uid in seen:
                out.append(("ST-006", path, DUPLICATE))
            else:
                seen.add(uid)
    return out


@hypothesis_settings(max_examples=200, deadline=None)
@given(
    succeeded=st.lists(st.sampled_from(["", "a", "b", "c", "d"]), max_size=6),
    failed=st.lists(st.sampled_from(["", "a", "b", "c", "e"]), max_size=6),
)
def test_st006_in_upstream_order_for_any_lists(succeeded, failed):
    new = with_status(RUNNING, uncountedTerminatedPods={"succeeded": succeeded, "failed": failed})
    assert causes(status_update(new, RUNNING)) == _st006_reference(succeeded, failed)


@hypothesis_settings(max_examples=200, deadline=None)
@given(
    succeeded=st.lists(st.sampled_from(["", "a", "b", "c", "d"]), max_size=8),
    failed=st.lists(st.sampled_from(["", "a", "b", "c", "e"]), max_size=8),
)
def test_st006_past_max_listed_errors_are_counted_per_list(succeeded, failed):
    """With at most 2 listed per list: the first 2 of each list's reference errors, then one
    MoreErrors at the list's path counting the rest of that list's."""
    new = with_status(RUNNING, uncountedTerminatedPods={"succeeded": succeeded, "failed": failed})
    with mock.patch.object(status_rules, "MAX_LISTED", 2):
        verdict = status_update(new, RUNNING)
    expected = []
    reference = _st006_reference(succeeded, failed)
    for name in ("succeeded", "failed"):
        path = f"status.uncountedTerminatedPods.{name}"
        own = [error for error in reference if error[1].startswith(f"{path}[")]
        expected += own[:2]
        if len(own) > 2:
            expected.append(("ST-006", path, "FieldValueTooMany"))
    assert causes(verdict) == expected
    tallies = [v.error for v in verdict.violations if isinstance(v.error, MoreErrors)]
    assert [t.count for t in tallies] == [
        len([e for e in reference if e[1].startswith(f"{t.path}[")]) - 2 for t in tallies
    ]
    assert sum(v.error.stands_for for v in verdict.violations) == len(reference)


def test_st006_250000_duplicates_list_max_listed_and_count_the_rest():
    uids = [str(i) for i in range(250_000)]
    new = with_status(RUNNING, uncountedTerminatedPods={"succeeded": uids, "failed": uids})
    violations = status_update(new, RUNNING).violations
    assert len(violations) == MAX_LISTED + 1
    assert violations[MAX_LISTED - 1].error.path == (
        f"status.uncountedTerminatedPods.failed[{MAX_LISTED - 1}]"
    )
    tally = violations[-1].error
    assert isinstance(tally, MoreErrors)
    assert tally.message() == (
        f"status.uncountedTerminatedPods.failed: {250_000 - MAX_LISTED} more errors not listed"
    )
    assert (tally.rule, tally.type.reason) == ("ST-006", "FieldValueTooMany")


def test_st006_distinct_uids_accepted():
    new = with_status(RUNNING, uncountedTerminatedPods={"succeeded": ["a", "b"], "failed": ["c"]})
    assert causes(status_update(new, RUNNING)) == []


# --- ST-007..ST-011 SuccessCriteriaMet (always on) --------------------------------------------


def test_st007_success_criteria_met_with_failed():
    # The old Job already failed; only SuccessCriteriaMet is added, so no gated check runs.
    old = with_status(FAILING, conditions=[FAILED])
    verdict = status_update(with_status(old, conditions=[FAILED, SCM]), old)
    assert causes(verdict) == [("ST-007", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true "
        "conditions"
    ]


def test_st007_always_on_for_a_stored_violation():
    old = with_status(FAILING, conditions=[FAILED, SCM])
    assert causes(status_update(with_status(old, failed=8), old)) == [
        ("ST-007", CONDITIONS, INVALID)
    ]


def test_st007_success_criteria_met_with_failed_false_accepted():
    new = with_status(RUNNING, conditions=[cond("Failed", "False"), SCM])
    assert causes(status_update(new, RUNNING)) == []


def test_st008_success_criteria_met_with_failure_target():
    verdict = status_update(with_status(FAILING, conditions=[FAILURE_TARGET, SCM]), FAILING)
    assert causes(verdict) == [("ST-008", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and "
        "FailureTarget=true conditions"
    ]


def test_st008_failure_target_unknown_accepted():
    new = with_status(RUNNING, conditions=[cond("FailureTarget", "Unknown"), SCM])
    assert causes(status_update(new, RUNNING)) == []


SUCCESS_POLICY_JOB = indexed(3, successPolicy={"rules": [{"succeededIndexes": "0"}]})


def test_st009_complete_without_scm_when_success_policy_set():
    # Stored Complete without SuccessCriteriaMet: gated ST-029 stays quiet, ST-009 is always on.
    old = with_status(
        SUCCESS_POLICY_JOB,
        startTime=START,
        completionTime=LATER,
        conditions=[COMPLETE],
        succeeded=1,
        completedIndexes="0",
    )
    verdict = status_update(copy.deepcopy(old), old)
    assert causes(verdict) == [("ST-009", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set Complete=True for Job with SuccessPolicy "
        "unless SuccessCriteriaMet=True"
    ]


def test_st009_not_applied_without_success_policy():
    assert causes(status_update(copy.deepcopy(LEGACY_DONE), LEGACY_DONE)) == []


def test_st009_complete_with_scm_and_success_policy_accepted():
    old = with_status(SUCCESS_POLICY_JOB, startTime=START, active=3)
    new = finish(old, completedIndexes="0")
    assert causes(status_update(new, old)) == []


@pytest.mark.parametrize(
    "new_conditions",
    [
        pytest.param([], id="removed"),
        pytest.param([cond("SuccessCriteriaMet", "False")], id="false"),
    ],
)
def test_st010_success_criteria_met_cannot_be_disabled(new_conditions):
    old = with_status(RUNNING, active=0, conditions=[SCM])
    verdict = status_update(with_status(old, conditions=new_conditions), old)
    assert causes(verdict) == [("ST-010", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition"
    ]


def test_st010_keeping_success_criteria_met_accepted():
    old = with_status(RUNNING, active=0, conditions=[SCM])
    assert causes(status_update(finish(old), old)) == []


def test_st011_success_criteria_met_after_complete():
    verdict = status_update(with_status(LEGACY_DONE, conditions=[COMPLETE, SCM]), LEGACY_DONE)
    assert causes(verdict) == [("ST-011", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True for Job already "
        "has Complete=true conditions"
    ]


def test_st011_success_criteria_met_before_complete_accepted():
    assert causes(status_update(with_status(RUNNING, conditions=[SCM]), RUNNING)) == []


# --- ST-020 / ST-021 counters do not decrease -------------------------------------------------


def test_st020_succeeded_cannot_decrease():
    old = with_status(RUNNING, succeeded=2)
    verdict = status_update(with_status(old, succeeded=1), old)
    assert causes(verdict) == [("ST-020", "status.succeeded", INVALID)]
    assert messages(verdict) == [
        "status.succeeded: Invalid value: 1: cannot decrease the succeeded counter"
    ]


@pytest.mark.parametrize(
    ("spec", "rejected"),
    [
        pytest.param(indexed(3), False, id="indexed-completions-eq-parallelism"),
        pytest.param(indexed(3, parallelism=2), True, id="indexed-completions-ne-parallelism"),
        pytest.param(job(completions=3, parallelism=3), True, id="nonindexed-eq"),
    ],
)
def test_st020_indexed_completions_equal_parallelism_exemption(spec, rejected):
    old = with_status(spec, startTime=START, active=1, succeeded=2)
    new = with_status(old, succeeded=1)
    expected = [("ST-020", "status.succeeded", INVALID)] if rejected else []
    assert causes(status_update(new, old)) == expected


def test_st020_increase_accepted():
    old = with_status(RUNNING, succeeded=1)
    assert causes(status_update(with_status(old, succeeded=2), old)) == []


def test_st021_failed_cannot_decrease_even_for_elastic_indexed():
    old = with_status(indexed(3), startTime=START, active=1, failed=3)
    verdict = status_update(with_status(old, failed=2), old)
    assert causes(verdict) == [("ST-021", "status.failed", INVALID)]
    assert messages(verdict) == [
        "status.failed: Invalid value: 2: cannot decrease the failed counter"
    ]


def test_st021_failed_increase_accepted():
    old = with_status(RUNNING, failed=1)
    assert causes(status_update(with_status(old, failed=2), old)) == []


# --- ST-022 terminal conditions are sticky -----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new_conditions", "expected"),
    [
        pytest.param(FAILED_JOB, [FAILURE_TARGET], [("ST-022", "Failed")], id="failed-removed"),
        pytest.param(
            FAILED_JOB,
            [FAILURE_TARGET, cond("Failed", "False")],
            [("ST-022", "Failed")],
            id="failed-false",
        ),
        pytest.param(
            FAILING,
            [cond("FailureTarget", "Unknown")],
            [("ST-022", "FailureTarget")],
            id="failure-target-unknown",
        ),
        pytest.param(
            FAILED_JOB,
            [],
            [("ST-022", "Failed"), ("ST-022", "FailureTarget")],
            id="failed-and-failure-target-removed",
        ),
    ],
)
def test_st022_terminal_condition_cannot_be_disabled(old, new_conditions, expected):
    verdict = status_update(with_status(old, conditions=new_conditions), old)
    assert causes(verdict) == [(rule, CONDITIONS, INVALID) for rule, _ in expected]
    assert messages(verdict) == [
        f"status.conditions: Invalid value: cannot disable the terminal {name}=True condition"
        for _, name in expected
    ]


def test_st022_complete_cannot_be_disabled():
    new = with_status(DONE, conditions=[SCM, cond("Complete", "False")])
    verdict = status_update(new, DONE)
    # completionTime without Complete=True is reported too (ST-036, completeChanged).
    assert causes(verdict) == [
        ("ST-036", "status.completionTime", INVALID),
        ("ST-022", CONDITIONS, INVALID),
    ]
    assert messages(verdict)[1] == (
        "status.conditions: Invalid value: cannot disable the terminal Complete=True condition"
    )


def test_st022_keeping_terminal_condition_accepted():
    assert causes(status_update(with_status(FAILED_JOB, failed=8), FAILED_JOB)) == []


# --- ST-023..ST-027 completedIndexes / failedIndexes ------------------------------------------


@pytest.mark.parametrize(
    ("indexes", "detail"),
    [
        ("0,5", 'too large index: "5"'),
        ("1,0", "non-increasing order, previous: 1, current: 0"),
        ("2-1", "non-increasing order, previous: 2, current: 1"),
        (
            "0-1-2",
            'the fragment "0-1-2" violates the requirement that an index interval can '
            "have at most two parts separated by '-'",
        ),
        ("a", 'cannot convert string to integer for index: "a"'),
    ],
)
def test_st023_completed_indexes_grammar(indexes, detail):
    old = with_status(indexed(4), startTime=START, active=4)
    verdict = status_update(with_status(old, completedIndexes=indexes), old)
    assert causes(verdict) == [("ST-023", "status.completedIndexes", INVALID)]
    assert messages(verdict) == [
        f"status.completedIndexes: Invalid value: {_q(indexes)}: error parsing "
        f"completedIndexes: {detail}"
    ]


def _q(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def test_st023_valid_completed_indexes_accepted():
    old = with_status(indexed(4), startTime=START, active=4)
    assert causes(status_update(with_status(old, completedIndexes="0-1,3"), old)) == []


def test_st023_unchanged_out_of_range_indexes_accepted_after_scale_down():
    # Elastic Indexed Job scaled down to 2 completions; index 3 is left from before.
    old = with_status(indexed(2), startTime=START, active=2, completedIndexes="0,3", succeeded=2)
    assert causes(status_update(with_status(old, active=1), old)) == []


def test_st024_failed_indexes_grammar():
    old = with_status(per_index(4), startTime=START, active=4)
    verdict = status_update(with_status(old, failedIndexes="2,1"), old)
    assert causes(verdict) == [("ST-024", "status.failedIndexes", INVALID)]
    assert messages(verdict) == [
        'status.failedIndexes: Invalid value: "2,1": error parsing failedIndexes: '
        "non-increasing order, previous: 2, current: 1"
    ]


def test_st024_valid_failed_indexes_accepted():
    old = with_status(per_index(4), startTime=START, active=4)
    assert causes(status_update(with_status(old, failedIndexes="1,3"), old)) == []


def test_st024_unchanged_invalid_failed_indexes_accepted():
    old = with_status(per_index(4), startTime=START, active=4, failedIndexes="7")
    assert causes(status_update(with_status(old, active=3), old)) == []


def test_st025_completed_indexes_on_non_indexed_job():
    verdict = status_update(with_status(RUNNING, completedIndexes="0"), RUNNING)
    assert causes(verdict) == [("ST-025", "status.completedIndexes", INVALID)]
    assert messages(verdict) == [
        'status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes '
        "when non-indexed completion mode"
    ]


def test_st025_empty_completed_indexes_on_non_indexed_job_accepted():
    assert causes(status_update(with_status(RUNNING, completedIndexes=""), RUNNING)) == []


@pytest.mark.parametrize("failed_indexes", ["", "0"])
def test_st026_failed_indexes_need_backoff_limit_per_index(failed_indexes):
    old = with_status(indexed(4), startTime=START, active=4)
    verdict = status_update(with_status(old, failedIndexes=failed_indexes), old)
    assert causes(verdict) == [("ST-026", "status.failedIndexes", INVALID)]
    assert messages(verdict) == [
        f'status.failedIndexes: Invalid value: "{failed_indexes}": cannot set non-null '
        "failedIndexes when backoffLimitPerIndex is null"
    ]


def test_st026_failed_indexes_with_backoff_limit_per_index_accepted():
    old = with_status(per_index(4), startTime=START, active=4)
    assert causes(status_update(with_status(old, failedIndexes=""), old)) == []


def test_st026_absent_failed_indexes_accepted():
    old = with_status(indexed(4), startTime=START, active=4, failedIndexes="")
    # failedIndexes set -> absent is a change, but absent failedIndexes is always fine.
    assert causes(status_update(without(old, "failedIndexes"), old)) == []


@pytest.mark.parametrize(
    ("completed", "failed", "index"),
    [
        ("0-3,7", "5-8", 7),
        ("1,3-5", "4", 4),
        ("2", "0-9", 2),
        ("0-4", "4-6", 4),
        ("x,6", "6", 6),  # unparsable fragments are skipped by the overlap walk
    ],
)
def test_st027_overlap_reports_first_index(completed, failed, index):
    old = with_status(per_index(10), startTime=START, active=10)
    verdict = status_update(with_status(old, completedIndexes=completed, failedIndexes=failed), old)
    found = [c for c in causes(verdict) if c[0] == "ST-027"]
    assert found == [("ST-027", "status.failedIndexes", INVALID)]
    assert (
        f'status.failedIndexes: Invalid value: "{failed}": failedIndexes and completedIndexes overlap at index: {index}'
        in messages(verdict)
    )


def test_st027_skipped_fragment_also_reported_by_st023():
    old = with_status(per_index(10), startTime=START, active=10)
    new = with_status(old, completedIndexes="x,6", failedIndexes="6")
    assert causes(status_update(new, old)) == [
        ("ST-023", "status.completedIndexes", INVALID),
        ("ST-027", "status.failedIndexes", INVALID),
    ]


def test_st027_disjoint_indexes_accepted():
    old = with_status(per_index(10), startTime=START, active=10)
    new = with_status(old, completedIndexes="0-3,7", failedIndexes="4-6,8")
    assert causes(status_update(new, old)) == []


def test_st027_runs_when_only_completed_indexes_change():
    old = with_status(per_index(10), startTime=START, active=10, failedIndexes="5")
    verdict = status_update(with_status(old, completedIndexes="4-5"), old)
    assert causes(verdict) == [("ST-027", "status.failedIndexes", INVALID)]


def test_st027_stored_overlap_ignored_when_neither_list_changes():
    old = with_status(
        per_index(10), startTime=START, active=10, completedIndexes="5", failedIndexes="5"
    )
    assert causes(status_update(with_status(old, active=9), old)) == []


# --- ST-028 / ST-029 terminal conditions need their precursor ---------------------------------


def test_st028_failed_without_failure_target():
    old = with_status(RUNNING, active=0)
    verdict = status_update(with_status(old, conditions=[FAILED]), old)
    assert causes(verdict) == [("ST-028", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set Failed=True condition without the "
        "FailureTarget=true condition"
    ]


def test_st028_rechecked_when_failed_indexes_change():
    old = with_status(
        per_index(4), startTime=START, active=0, failedIndexes="1", conditions=[FAILED]
    )
    verdict = status_update(with_status(old, failedIndexes="1-2"), old)
    assert causes(verdict) == [("ST-028", CONDITIONS, INVALID)]


def test_st028_stored_failed_without_failure_target_ignored_on_unrelated_update():
    old = with_status(RUNNING, active=0, conditions=[FAILED])
    assert causes(status_update(with_status(old, failed=1), old)) == []


def test_st029_complete_without_success_criteria_met():
    verdict = status_update(finish(RUNNING, conditions=[COMPLETE]), RUNNING)
    assert causes(verdict) == [("ST-029", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set Complete=True condition without the "
        "SuccessCriteriaMet=true condition"
    ]


def test_st029_stored_legacy_complete_ignored_on_unrelated_update():
    assert causes(status_update(with_status(LEGACY_DONE, succeeded=2), LEGACY_DONE)) == []


# --- ST-030..ST-032, ST-041 finished Jobs ------------------------------------------------------


def test_st030_finished_job_with_active_pods():
    verdict = status_update(finish(RUNNING, active=1), RUNNING)
    assert causes(verdict) == [("ST-030", "status.active", INVALID)]
    assert messages(verdict) == [
        "status.active: Invalid value: 1: active>0 is invalid for finished job"
    ]


def test_st030_not_rechecked_when_neither_finished_nor_active_changed():
    old = with_status(DONE, active=1)
    assert causes(status_update(with_status(old, succeeded=2), old)) == []


def test_st030_rechecked_when_active_changes():
    old = with_status(DONE, active=1)
    assert causes(status_update(with_status(old, active=2), old)) == [
        ("ST-030", "status.active", INVALID)
    ]


def test_st030_failed_job_with_active_pods():
    verdict = status_update(with_status(FAILED_JOB, active=2), FAILING)
    assert causes(verdict) == [("ST-030", "status.active", INVALID)]


def test_st031_finished_job_without_start_time():
    old = without(RUNNING, "startTime")
    verdict = status_update(finish(old), old)
    assert causes(verdict) == [("ST-031", "status.startTime", REQUIRED)]
    assert messages(verdict) == [
        "status.startTime: Required value: startTime is required for finished job"
    ]


def test_st031_stored_finished_without_start_time_ignored_on_unrelated_update():
    old = without(DONE, "startTime")
    assert causes(status_update(with_status(old, succeeded=2), old)) == []


def test_st031_rechecked_when_start_time_removed():
    # Removing startTime also changes an unsuspended Job's startTime (ST-033, 1.35 wording).
    verdict = status_update(without(DONE, "startTime"), DONE)
    assert causes(verdict) == [
        ("ST-031", "status.startTime", REQUIRED),
        ("ST-033", "status.startTime", REQUIRED),
    ]


SUSPENDED_ZERO = job(suspend=True, completions=0, parallelism=0)
SUPPORTED = ["1.33", "1.34", "1.35", "1.36"]


@pytest.mark.parametrize("version", SUPPORTED)
def test_st031_suspended_with_zero_completions_exception_in_every_supported_version(version):
    # kubernetes#132614 (before 1.34), back-ported to 1.32 and 1.33 (#132727, #132728): the
    # job controller finishes a suspended zero-completion Job without ever setting startTime.
    new = finish(SUSPENDED_ZERO, succeeded=0)
    assert "startTime" not in new["status"]
    verdict = status_update(new, SUSPENDED_ZERO, settings(version=version))
    assert causes(verdict) == []
    assert verdict.allowed


@pytest.mark.parametrize("version", SUPPORTED)
def test_st031_zero_completions_but_not_suspended_still_rejected(version):
    old = job(completions=0, parallelism=0)
    verdict = status_update(finish(old, succeeded=0), old, settings(version=version))
    assert causes(verdict) == [("ST-031", "status.startTime", REQUIRED)]
    assert messages(verdict) == [
        "status.startTime: Required value: startTime is required for finished job"
    ]
    assert not verdict.allowed


def test_st032_finished_job_with_uncounted_pods():
    new = finish(RUNNING, uncountedTerminatedPods={"succeeded": ["a"]})
    verdict = status_update(new, RUNNING)
    assert causes(verdict) == [("ST-032", "status.uncountedTerminatedPods", INVALID)]
    assert messages(verdict)[0].startswith("status.uncountedTerminatedPods: Invalid value: ")
    assert messages(verdict)[0].endswith(": must be empty for finished job")


@pytest.mark.parametrize(
    "uncounted", [{}, {"succeeded": [], "failed": []}], ids=["empty", "empty-lists"]
)
def test_st032_finished_job_with_empty_uncounted_accepted(uncounted):
    assert causes(status_update(finish(RUNNING, uncountedTerminatedPods=uncounted), RUNNING)) == []


def test_st032_stored_violation_ignored_when_neither_finished_nor_uncounted_changed():
    old = with_status(DONE, uncountedTerminatedPods={"failed": ["x"]})
    assert causes(status_update(with_status(old, succeeded=2), old)) == []


def test_st032_rechecked_when_uncounted_changes():
    old = with_status(DONE, uncountedTerminatedPods={"failed": ["x"]})
    new = with_status(old, uncountedTerminatedPods={"failed": ["x", "y"]})
    assert causes(status_update(new, old)) == [
        ("ST-032", "status.uncountedTerminatedPods", INVALID)
    ]


@pytest.mark.parametrize(
    ("stored", "sent", "changed"),
    [
        ({"failed": ["x"]}, {"failed": ["x"], "succeeded": []}, False),
        ({"failed": ["x"]}, {"failed": ["x"], "succeeded": None}, False),
        ({"failed": ["x"], "succeeded": []}, {"failed": ["x"]}, False),
        ({"failed": ["x"]}, {"failed": ["x"], "later": {"field": None}}, False),
        ({"failed": ["x"]}, {"failed": ["x"], "later": {"field": 1}}, True),
        (None, {"failed": ["x"]}, True),
        ({"failed": ["x"]}, {"failed": ["y"]}, True),
        ({"failed": ["x"]}, {"failed": ["x", "x"]}, True),
        ({"succeeded": ["x"]}, {"failed": ["x"]}, True),
    ],
)
def test_st032_uncounted_compared_semantically(stored, sent, changed):
    """Upstream compares the UID lists semantically: absent, null and [] are the same."""
    old = with_status(DONE, uncountedTerminatedPods=stored) if stored is not None else DONE
    new = with_status(DONE, uncountedTerminatedPods=sent)
    expected = [("ST-032", "status.uncountedTerminatedPods", INVALID)] if changed else []
    assert [c for c in causes(status_update(new, old)) if c[0] == "ST-032"] == expected


def test_st041_finished_job_with_terminating_pods():
    verdict = status_update(finish(RUNNING, terminating=1), RUNNING)
    assert causes(verdict) == [("ST-041", "status.terminating", INVALID)]
    assert messages(verdict) == [
        "status.terminating: Invalid value: 1: terminating>0 is invalid for finished job"
    ]


def test_st041_finished_job_with_zero_terminating_accepted():
    assert causes(status_update(finish(RUNNING, terminating=0), RUNNING)) == []


@pytest.mark.parametrize(("rule", "name"), [("ST-001", "active"), ("ST-005", "terminating")])
def test_st030_st041_negative_counts_on_finished_job_are_only_non_negative_errors(rule, name):
    # Upstream: `status.Active > 0 && finished`, `*status.Terminating > 0 && finished`
    # ("active>0 is invalid"); a negative count is reported by ST-001/ST-005 alone.
    verdict = status_update(finish(RUNNING, **{name: -1}), RUNNING)
    assert causes(verdict) == [(rule, f"status.{name}", INVALID)]


def test_st041_stored_violation_ignored_until_terminating_changes():
    old = with_status(DONE, terminating=2)
    assert causes(status_update(with_status(old, succeeded=2), old)) == []
    assert causes(status_update(with_status(old, terminating=1), old)) == [
        ("ST-041", "status.terminating", INVALID)
    ]


# --- ST-033 startTime fixed unless suspended ---------------------------------------------------


def test_st033_changed_start_time_on_135_is_required_error():
    verdict = status_update(
        with_status(RUNNING, startTime=LATER), RUNNING, settings(version="1.35")
    )
    assert causes(verdict) == [("ST-033", "status.startTime", REQUIRED)]
    assert messages(verdict) == [
        "status.startTime: Required value: startTime cannot be removed for unsuspended job"
    ]


def test_st033_changed_start_time_on_136_is_invalid_error():
    verdict = status_update(
        with_status(RUNNING, startTime=LATER), RUNNING, settings(version="1.36")
    )
    assert causes(verdict) == [("ST-033", "status.startTime", INVALID)]
    (message,) = messages(verdict)
    assert message.startswith("status.startTime: Invalid value: ")
    assert message.endswith(": field is immutable for unsuspended job once set")


@pytest.mark.parametrize(("version", "reason"), [("1.35", REQUIRED), ("1.36", INVALID)])
def test_st033_removed_start_time(version, reason):
    verdict = status_update(without(RUNNING, "startTime"), RUNNING, settings(version=version))
    assert causes(verdict) == [("ST-033", "status.startTime", reason)]


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_st033_first_start_time_accepted(version):
    assert causes(status_update(RUNNING, job(), settings(version=version))) == []


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_st033_suspended_job_may_change_and_clear_start_time(version):
    old = with_status(job(suspend=True), startTime=START, conditions=[cond("Suspended")])
    s = settings(version=version)
    assert causes(status_update(with_status(old, startTime=LATER), old, s)) == []
    assert causes(status_update(without(old, "startTime"), old, s)) == []


RESUMED_SPEC = with_status(job(), startTime=START, conditions=[cond("Suspended")])


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_st033_resuming_exception_in_every_supported_version(version):
    # kubernetes#134521 was fixed before 1.35 and back-ported to 1.32-1.34: the job
    # controller's resume (Suspended True -> False with a new startTime) is never refused.
    new = with_status(RESUMED_SPEC, startTime=LATER, conditions=[cond("Suspended", "False")])
    assert causes(status_update(new, RESUMED_SPEC, settings(version=version))) == []
    not_resuming = with_status(RESUMED_SPEC, startTime=LATER, conditions=[cond("Suspended")])
    expected_type = INVALID if version == "1.36" else REQUIRED
    assert causes(status_update(not_resuming, RESUMED_SPEC, settings(version=version))) == [
        ("ST-033", "status.startTime", expected_type)
    ]


@pytest.mark.parametrize(
    "new_conditions",
    [
        pytest.param([cond("Suspended", "False"), cond("Suspended")], id="false-then-true"),
        pytest.param([cond("Suspended"), cond("Suspended", "False")], id="true-then-false"),
    ],
)
def test_st033_resuming_seen_in_any_suspended_entry_on_136(new_conditions):
    # Upstream IsConditionFalse: *some* Suspended entry is False (duplicates are not rejected).
    new = with_status(RESUMED_SPEC, startTime=LATER, conditions=new_conditions)
    # NE-002 (on by default) objects to a duplicated Suspended entry; only ST is judged here.
    only_upstream = settings(version="1.36", NE_002=RuleOverride(enabled=False))
    assert causes(status_update(new, RESUMED_SPEC, only_upstream)) == []


@pytest.mark.parametrize(
    "new_conditions",
    [pytest.param([], id="suspended-removed"), pytest.param([cond("Suspended")], id="still-true")],
)
def test_st033_not_resuming_without_suspended_false_on_136(new_conditions):
    new = with_status(RESUMED_SPEC, startTime=LATER, conditions=new_conditions)
    only_upstream = settings(version="1.36", NE_002=RuleOverride(enabled=False))
    verdict = status_update(new, RESUMED_SPEC, only_upstream)
    assert causes(verdict) == [("ST-033", "status.startTime", INVALID)]


# --- ST-034..ST-037 completionTime --------------------------------------------------------------


def test_st034_completion_time_before_start_time():
    verdict = status_update(finish(RUNNING, completionTime=EARLIER), RUNNING)
    assert causes(verdict) == [("ST-034", "status.completionTime", INVALID)]
    assert messages(verdict)[0].endswith(": must be equal to or after `startTime`")


def test_st034_completion_time_equal_to_start_time_accepted():
    assert causes(status_update(finish(RUNNING, completionTime=START), RUNNING)) == []


def test_st034_compares_instants_not_strings():
    # 10:30+01:00 is 09:30Z, before the 10:00Z start, though it sorts after it as a string.
    verdict = status_update(finish(RUNNING, completionTime="2026-01-01T10:30:00+01:00"), RUNNING)
    assert causes(verdict) == [("ST-034", "status.completionTime", INVALID)]


def test_st035_completion_time_immutable():
    verdict = status_update(with_status(DONE, completionTime=EVEN_LATER), DONE)
    assert causes(verdict) == [("ST-035", "status.completionTime", INVALID)]
    assert messages(verdict)[0].endswith(": field is immutable")


def test_st035_same_instant_in_other_offset_accepted():
    new = with_status(DONE, completionTime="2026-01-01T12:00:00+01:00")
    assert causes(status_update(new, DONE)) == []


def test_st035_clearing_is_reported_by_st037_not_st035():
    verdict = status_update(without(DONE, "completionTime"), DONE)
    assert causes(verdict) == [("ST-037", "status.completionTime", REQUIRED)]


def test_st036_completion_time_without_complete():
    verdict = status_update(with_status(RUNNING, completionTime=LATER), RUNNING)
    assert causes(verdict) == [("ST-036", "status.completionTime", INVALID)]
    assert messages(verdict)[0].endswith(
        ": cannot set completionTime when there is no Complete=True condition"
    )


def test_st036_completion_time_on_failed_job():
    verdict = status_update(with_status(FAILED_JOB, completionTime=LATER), FAILING)
    assert causes(verdict) == [("ST-036", "status.completionTime", INVALID)]


def test_st037_complete_without_completion_time():
    old = read_object("cases/st/running.yaml")
    verdict = status_update(read_object("cases/st/complete-without-completion-time.yaml"), old)
    assert causes(verdict) == [("ST-037", "status.completionTime", REQUIRED)]
    assert messages(verdict) == [
        "status.completionTime: Required value: completionTime is required for Complete jobs"
    ]


def test_st036_st037_stored_violation_ignored_on_unrelated_update():
    old = with_status(RUNNING, completionTime=LATER)
    assert causes(status_update(with_status(old, active=2), old)) == []


# --- ST-038 / ST-039 incompatible terminal conditions -----------------------------------------


def test_st038_complete_and_failed():
    # Stored legacy Job with Complete and FailureTarget; only Failed is added.
    old = with_status(LEGACY_DONE, conditions=[COMPLETE, FAILURE_TARGET])
    verdict = status_update(with_status(old, conditions=[COMPLETE, FAILURE_TARGET, FAILED]), old)
    assert causes(verdict) == [("ST-038", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions"
    ]


def test_st038_complete_with_failed_false_accepted():
    new = finish(RUNNING, conditions=[SCM, COMPLETE, cond("Failed", "False")])
    assert causes(status_update(new, RUNNING)) == []


def test_st039_complete_and_failure_target():
    new = with_status(LEGACY_DONE, conditions=[COMPLETE, FAILURE_TARGET])
    verdict = status_update(new, LEGACY_DONE)
    assert causes(verdict) == [("ST-039", CONDITIONS, INVALID)]
    assert messages(verdict) == [
        "status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true "
        "conditions"
    ]


def test_st039_stored_violation_ignored_on_unrelated_update():
    old = with_status(LEGACY_DONE, conditions=[COMPLETE, FAILURE_TARGET])
    assert causes(status_update(with_status(old, succeeded=2), old)) == []


# --- ST-040 ready <= active ---------------------------------------------------------------------


def test_st040_more_ready_than_active():
    new, old = read_update("cases/st/ready-above-active.json")
    assert old == RUNNING
    verdict = status_update(new, old)
    assert causes(verdict) == [("ST-040", "status.ready", INVALID)]
    assert messages(verdict) == [
        "status.ready: Invalid value: 2: cannot set more ready pods than active"
    ]


def test_st040_ready_equal_active_accepted():
    assert causes(status_update(with_status(RUNNING, ready=1), RUNNING)) == []


def test_st040_rechecked_when_active_drops_below_ready():
    old = with_status(RUNNING, active=2, ready=2)
    assert causes(status_update(with_status(old, active=1), old)) == [
        ("ST-040", "status.ready", INVALID)
    ]


def test_st040_stored_violation_ignored_when_neither_ready_nor_active_changed():
    old = with_status(RUNNING, ready=3)
    assert causes(status_update(with_status(old, succeeded=1), old)) == []


# --- spec edits sent to /status are ignored ---------------------------------------------------


def test_spec_edits_in_status_update_are_dropped():
    new = with_status(RUNNING, ready=1)
    new["spec"]["completions"] = 5
    new["spec"]["completionMode"] = "Bogus"
    new["spec"]["selector"] = {"matchLabels": {"other": "x"}}
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "evil"
    verdict = status_update(new, RUNNING)
    assert causes(verdict) == []
    ctx = verdict.context
    assert isinstance(ctx, JobStatusContext)
    assert ctx.new.spec == ctx.old.spec
    assert ctx.new.spec.completions == 1
    assert ctx.new.status.ready == 1


def test_spec_edit_cannot_unlock_start_time_change():
    # Claiming spec.suspend=true in the /status body does not make the Job suspended.
    new = with_status(RUNNING, startTime=LATER)
    new["spec"]["suspend"] = True
    verdict = status_update(new, RUNNING, settings(version="1.36"))
    assert causes(verdict) == [("ST-033", "status.startTime", INVALID)]


def test_spec_edit_cannot_unlock_succeeded_decrease():
    old = with_status(RUNNING, succeeded=2)
    new = with_status(old, succeeded=1)
    new["spec"].update(completionMode="Indexed", completions=1, parallelism=1)
    assert causes(status_update(new, old)) == [("ST-020", "status.succeeded", INVALID)]


def test_spec_edit_cannot_switch_off_success_policy_check():
    old = with_status(
        SUCCESS_POLICY_JOB, startTime=START, completionTime=LATER, conditions=[COMPLETE]
    )
    new = copy.deepcopy(old)
    del new["spec"]["successPolicy"]
    assert causes(status_update(new, old)) == [("ST-009", CONDITIONS, INVALID)]
