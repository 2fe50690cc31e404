"""Create-style Job spec rules: `spec.successPolicy` (SP-001..SP-010, RULES.md §B) and the
upstream `validateJobSpec` checks JS-001..JS-008 (upstream.md §2), on Jobs as the API server
stores them (builders.job) and on Jobs as people write them (bare manifests)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from jobguard.validators import Enforcement, RuleOverride, Verdict
from tests.builders import causes, clean, create, job, manifest, messages, settings, update
from tests.cases import read_object
from tests.grammar import GRAMMAR_ERRORS, GRAMMAR_VALID

INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
TOO_MANY = "FieldValueTooMany"
TOO_LONG = "FieldValueTooLong"
DUPLICATE = "FieldValueDuplicate"
NOT_SUPPORTED = "FieldValueNotSupported"

SP = "spec.successPolicy"
RULES = f"{SP}.rules"
IDX0 = f"{RULES}[0].succeededIndexes"
CNT0 = f"{RULES}[0].succeededCount"
PFP = "spec.podFailurePolicy.rules"
RESTART = "spec.template.spec.restartPolicy"


def indexed(completions: int | None = 3, **spec: Any) -> dict[str, Any]:
    """A stored Indexed Job (parallelism 1, so completions may be null)."""
    return job(completionMode="Indexed", completions=completions, **spec)


def policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"rules": list(rules)}


def without_restart_policy(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    del out["spec"]["template"]["spec"]["restartPolicy"]
    return out


def q(text: str) -> str:
    """A string value as the API server prints it (double-quoted)."""
    return json.dumps(text, ensure_ascii=False)


def count_of(verdict: Verdict, rule: str) -> int:
    return sum(1 for v in verdict.violations if v.error.rule == rule)


def indexes_of_length(size: int) -> str:
    """A valid succeededIndexes of exactly `size` bytes (for completions 100000)."""
    parts: list[str] = []
    length = -1
    value = 0
    while length + 1 + len(str(value)) <= size:
        parts.append(str(value))
        length += 1 + len(str(value))
        value += 2
    parts[0] = "0" * (size - length) + parts[0]  # a few leading zeros, still index 0
    out = ",".join(parts)
    assert len(out.encode()) == size
    return out


BIG = 100_000  # completions large enough for long valid index lists


# --- SP-001 ---------------------------------------------------------------------------------


def test_sp001_success_policy_on_non_indexed_job_is_rejected() -> None:
    v = create(job(successPolicy=policy({"succeededCount": 1})))
    assert causes(v) == [("SP-001", SP, INVALID)]
    [message] = messages(v)
    assert message.startswith("spec.successPolicy: Invalid value: ")
    assert message.endswith(": requires indexed completion mode")
    assert not v.allowed


def test_sp001_accepted_on_indexed_job() -> None:
    assert clean(
        create(indexed(successPolicy=policy({"succeededIndexes": "0-1", "succeededCount": 2})))
    )


def test_sp001_no_success_policy_is_accepted_on_non_indexed_job() -> None:
    assert clean(create(job(successPolicy=None)))


def test_sp001_stops_every_further_sp_check() -> None:
    bad_rules: list[dict[str, Any]] = [{}] * 21 + [
        {"succeededIndexes": "9,1", "succeededCount": -1}
    ]
    cases: list[dict[str, Any]] = [{"rules": []}, {}, {"rules": bad_rules}]
    for bad in cases:
        assert causes(create(job(successPolicy=bad))) == [("SP-001", SP, INVALID)], bad


def test_sp001_unknown_completion_mode_counts_as_not_indexed() -> None:
    v = create(job(completionMode="Foo", successPolicy=policy({"succeededCount": 9})))
    assert causes(v) == [
        ("JS-002", "spec.completionMode", NOT_SUPPORTED),
        ("SP-001", SP, INVALID),
    ]


# --- SP-002 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("success_policy", [{"rules": []}, {}, {"rules": None}])
def test_sp002_policy_without_rules_is_rejected(success_policy: dict[str, Any]) -> None:
    v = create(indexed(successPolicy=success_policy))
    assert causes(v) == [("SP-002", RULES, REQUIRED)]
    assert messages(v) == [
        "spec.successPolicy.rules: Required value: "
        "at least one rules must be specified when the successPolicy is specified"
    ]


def test_sp002_one_rule_is_enough() -> None:
    assert clean(create(indexed(successPolicy=policy({"succeededCount": 1}))))


# --- SP-003 ---------------------------------------------------------------------------------


def test_sp003_more_than_20_rules_still_runs_per_rule_checks() -> None:
    v = create(indexed(successPolicy=policy(*[{"succeededCount": 5}] * 21)))
    assert causes(v) == [("SP-003", RULES, TOO_MANY)] + [
        ("SP-008", f"{RULES}[{i}].succeededCount", INVALID) for i in range(21)
    ]
    assert messages(v)[0] == "spec.successPolicy.rules: Too many: 21: must have at most 20 items"
    assert messages(v)[-1] == (
        "spec.successPolicy.rules[20].succeededCount: Invalid value: 5: "
        "must be less than or equal to 3 (the number of specified completions)"
    )


def test_sp003_twenty_rules_are_accepted() -> None:
    assert clean(create(indexed(successPolicy=policy(*[{"succeededCount": 1}] * 20))))


def test_sp003_21_valid_rules_give_only_too_many() -> None:
    v = create(indexed(successPolicy=policy(*[{"succeededCount": 1}] * 21)))
    assert causes(v) == [("SP-003", RULES, TOO_MANY)]


# --- SP-004 ---------------------------------------------------------------------------------


def test_sp004_rule_without_criterion_is_rejected() -> None:
    v = create(indexed(successPolicy=policy({"succeededCount": 1}, {})))
    assert causes(v) == [("SP-004", f"{RULES}[1]", REQUIRED)]
    assert messages(v) == [
        "spec.successPolicy.rules[1]: Required value: "
        "at least one of succeededCount or succeededIndexes must be specified"
    ]


def test_sp004_null_criteria_count_as_missing() -> None:
    rule = {"succeededIndexes": None, "succeededCount": None}
    assert causes(create(indexed(successPolicy=policy(rule)))) == [
        ("SP-004", f"{RULES}[0]", REQUIRED)
    ]


@pytest.mark.parametrize(
    "rule", [{"succeededIndexes": ""}, {"succeededCount": 0}, {"succeededIndexes": "2"}]
)
def test_sp004_either_criterion_is_enough_even_empty_indexes(rule: dict[str, Any]) -> None:
    assert clean(create(indexed(successPolicy=policy(rule))))


# --- SP-005 ---------------------------------------------------------------------------------


def test_sp005_indexes_longer_than_64kib_are_too_long() -> None:
    v = create(indexed(BIG, successPolicy=policy({"succeededIndexes": indexes_of_length(65537)})))
    assert causes(v) == [("SP-005", IDX0, TOO_LONG)]
    assert messages(v) == [
        "spec.successPolicy.rules[0].succeededIndexes: Too long: may not be more than 65536 bytes"
    ]


def test_sp005_exactly_64kib_is_accepted() -> None:
    indexes = indexes_of_length(65536)
    assert clean(create(indexed(BIG, successPolicy=policy({"succeededIndexes": indexes}))))


def test_sp005_sp006_still_runs_after_too_long() -> None:
    indexes = indexes_of_length(65540) + ",4"
    last = int(indexes.split(",")[-2])
    v = create(indexed(BIG, successPolicy=policy({"succeededIndexes": indexes})))
    assert causes(v) == [("SP-005", IDX0, TOO_LONG), ("SP-006", IDX0, INVALID)]
    assert messages(v)[1].endswith(
        f": error parsing succeededIndexes: non-increasing order, previous: {last}, current: 4"
    )


def test_sp005_counts_bytes_not_characters() -> None:
    # 40000 characters, 80000 bytes: too long, and not a number either.
    text = "é" * 40000
    v = create(indexed(BIG, successPolicy=policy({"succeededIndexes": text})))
    assert causes(v) == [("SP-005", IDX0, TOO_LONG), ("SP-006", IDX0, INVALID)]
    assert messages(v)[1].endswith(
        f": error parsing succeededIndexes: cannot convert string to integer for index: {q(text)}"
    )
    # 32768 two-byte characters are exactly 65536 bytes: not too long.
    v = create(indexed(BIG, successPolicy=policy({"succeededIndexes": "é" * 32768})))
    assert causes(v) == [("SP-006", IDX0, INVALID)]


def test_sp005_too_long_run_of_leading_zeros_is_too_long_but_a_valid_index() -> None:
    # Go's Atoi reads any number of leading zeros ("000...0" is index 0), so only SP-005 fires.
    v = create(indexed(10, successPolicy=policy({"succeededIndexes": "0" * 65537})))
    assert causes(v) == [("SP-005", IDX0, TOO_LONG)]


def test_sp006_many_leading_zeros_are_a_valid_index() -> None:
    v = create(indexed(10, successPolicy=policy({"succeededIndexes": "0" * 5000 + "7"})))
    assert clean(v)


def test_sp006_number_with_thousands_of_digits_is_a_conversion_error() -> None:
    digits = "1" * 5000
    v = create(indexed(10, successPolicy=policy({"succeededIndexes": digits})))
    assert causes(v) == [("SP-006", IDX0, INVALID)]
    assert messages(v) == [
        f"{IDX0}: Invalid value: {q(digits)}: error parsing succeededIndexes: "
        f"cannot convert string to integer for index: {q(digits)}"
    ]


# --- SP-006: the grammar table of RULES.md (C = 10) -----------------------------------------


@pytest.mark.parametrize(("indexes", "error"), GRAMMAR_ERRORS)
def test_sp006_grammar_errors(indexes: str, error: str) -> None:
    v = create(indexed(10, successPolicy=policy({"succeededIndexes": indexes})))
    assert causes(v) == [("SP-006", IDX0, INVALID)]
    assert messages(v) == [
        f"{IDX0}: Invalid value: {q(indexes)}: error parsing succeededIndexes: {error}"
    ]


@pytest.mark.parametrize(("indexes", "size"), GRAMMAR_VALID)
def test_sp006_valid_intervals_and_their_size(indexes: str, size: int) -> None:
    assert clean(create(indexed(10, successPolicy=policy({"succeededIndexes": indexes}))))
    # N is the set size: succeededCount N is fine, N + 1 trips SP-009.
    rule = {"succeededIndexes": indexes, "succeededCount": size}
    assert clean(create(indexed(10, successPolicy=policy(rule))))
    rule = {"succeededIndexes": indexes, "succeededCount": size + 1}
    v = create(indexed(10, successPolicy=policy(rule)))
    assert ("SP-009", CNT0, INVALID) in causes(v)
    assert (
        f"{CNT0}: Invalid value: {size + 1}: must be less than or equal to {size} "
        "(the number of indexes in the specified succeededIndexes field)"
    ) in messages(v)
    assert {c[0] for c in causes(v)} <= {"SP-008", "SP-009"}


def test_sp006_zero_completions_reject_every_non_empty_index_list() -> None:
    v = create(indexed(0, successPolicy=policy({"succeededIndexes": "0"})))
    assert causes(v) == [("SP-006", IDX0, INVALID)]
    assert messages(v) == [
        f'{IDX0}: Invalid value: "0": error parsing succeededIndexes: too large index: "0"'
    ]
    assert clean(create(indexed(0, successPolicy=policy({"succeededIndexes": ""}))))


def test_sp006_only_the_first_parse_error_is_reported() -> None:
    v = create(indexed(10, successPolicy=policy({"succeededIndexes": "3,1,a,99"})))
    assert messages(v) == [
        f'{IDX0}: Invalid value: "3,1,a,99": error parsing succeededIndexes: '
        "non-increasing order, previous: 3, current: 1"
    ]


def test_sp006_each_rule_is_parsed_on_its_own() -> None:
    rules = [{"succeededIndexes": "0-2"}, {"succeededIndexes": "x"}, {"succeededIndexes": "1"}]
    v = create(indexed(10, successPolicy=policy(*rules)))
    assert causes(v) == [("SP-006", f"{RULES}[1].succeededIndexes", INVALID)]


# --- SP-007 ---------------------------------------------------------------------------------


def test_sp007_negative_count_is_rejected() -> None:
    v = create(indexed(successPolicy=policy({"succeededCount": -1})))
    assert causes(v) == [("SP-007", CNT0, INVALID)]
    assert messages(v) == [f"{CNT0}: Invalid value: -1: must be greater than or equal to 0"]


@pytest.mark.parametrize(
    "rule", [{"succeededCount": 0}, {"succeededCount": 0, "succeededIndexes": ""}]
)
def test_sp007_zero_count_is_accepted(rule: dict[str, Any]) -> None:
    assert clean(create(indexed(successPolicy=policy(rule))))


# --- SP-008 ---------------------------------------------------------------------------------


def test_sp008_count_above_completions_is_rejected() -> None:
    v = create(indexed(successPolicy=policy({"succeededCount": 5})))
    assert causes(v) == [("SP-008", CNT0, INVALID)]
    assert messages(v) == [
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: "
        "must be less than or equal to 3 (the number of specified completions)"
    ]


def test_sp008_count_equal_to_completions_is_accepted() -> None:
    assert clean(create(indexed(successPolicy=policy({"succeededCount": 3}))))


def test_sp008_and_sp009_fire_together() -> None:
    v = create(indexed(successPolicy=policy({"succeededIndexes": "0", "succeededCount": 5})))
    assert causes(v) == [("SP-008", CNT0, INVALID), ("SP-009", CNT0, INVALID)]
    assert messages(v) == [
        f"{CNT0}: Invalid value: 5: must be less than or equal to 3 "
        "(the number of specified completions)",
        f"{CNT0}: Invalid value: 5: must be less than or equal to 1 "
        "(the number of indexes in the specified succeededIndexes field)",
    ]


# --- SP-009 ---------------------------------------------------------------------------------


def test_sp009_count_above_index_set_size_is_rejected() -> None:
    v = create(indexed(10, successPolicy=policy({"succeededIndexes": "0-1", "succeededCount": 3})))
    assert causes(v) == [("SP-009", CNT0, INVALID)]
    assert messages(v) == [
        f"{CNT0}: Invalid value: 3: must be less than or equal to 2 "
        "(the number of indexes in the specified succeededIndexes field)"
    ]


def test_sp009_count_equal_to_index_set_size_is_accepted() -> None:
    rule = {"succeededIndexes": "0-1,5", "succeededCount": 3}
    assert clean(create(indexed(10, successPolicy=policy(rule))))


def test_sp009_empty_indexes_have_size_zero() -> None:
    v = create(indexed(successPolicy=policy({"succeededIndexes": "", "succeededCount": 1})))
    assert causes(v) == [("SP-009", CNT0, INVALID)]
    assert "must be less than or equal to 0 (the number of indexes" in messages(v)[0]


def test_sp009_size_is_zero_after_a_parse_error() -> None:
    rule = {"succeededIndexes": "3,1", "succeededCount": 1}
    v = create(indexed(10, successPolicy=policy(rule)))
    assert causes(v) == [("SP-006", IDX0, INVALID), ("SP-009", CNT0, INVALID)]
    assert messages(v) == [
        f'{IDX0}: Invalid value: "3,1": error parsing succeededIndexes: '
        "non-increasing order, previous: 3, current: 1",
        f"{CNT0}: Invalid value: 1: must be less than or equal to 0 "
        "(the number of indexes in the specified succeededIndexes field)",
    ]


def test_sp009_not_checked_without_indexes() -> None:
    assert clean(create(indexed(successPolicy=policy({"succeededCount": 2}))))


def test_sp_checks_need_completions_indexed_without_completions() -> None:
    # Unverified edge (RULES.md under SP-010): report Required completions, skip SP-006..SP-009.
    rule = {"succeededIndexes": "7,1", "succeededCount": 9}
    v = create(indexed(None, parallelism=2, successPolicy=policy(rule)))
    assert causes(v) == [("JS-003", "spec.completions", REQUIRED)]
    # SP-005 needs no completions and still runs.
    rule = {"succeededIndexes": "0" * 65537}
    v = create(indexed(None, parallelism=2, successPolicy=policy(rule)))
    assert causes(v) == [("JS-003", "spec.completions", REQUIRED), ("SP-005", IDX0, TOO_LONG)]


# --- SP-010 (reported as IM-007) ------------------------------------------------------------

OLD_POLICY = policy({"succeededIndexes": "0", "succeededCount": 1})


@pytest.mark.parametrize(
    "new_policy",
    [
        None,
        policy({"succeededIndexes": "0", "succeededCount": 1}, {"succeededCount": 2}),
        policy({"succeededIndexes": "1", "succeededCount": 1}),
        policy({"succeededIndexes": "0"}),
    ],
    ids=["removed", "rule-added", "indexes-edited", "count-removed"],
)
def test_sp010_success_policy_is_immutable(new_policy: dict[str, Any] | None) -> None:
    old = indexed(successPolicy=OLD_POLICY)
    v = update(indexed(successPolicy=new_policy), old)
    assert causes(v) == [("IM-007", SP, INVALID)]
    [message] = messages(v)
    assert message.startswith("spec.successPolicy: Invalid value: ")
    assert message.endswith(": field is immutable")
    assert not v.allowed


def test_sp010_adding_a_policy_is_immutable_too() -> None:
    v = update(indexed(successPolicy=OLD_POLICY), indexed())
    assert causes(v) == [("IM-007", SP, INVALID)]


def test_sp010_unchanged_policy_is_accepted() -> None:
    old = indexed(successPolicy=OLD_POLICY)
    assert clean(update(copy.deepcopy(old), old))


def test_sp010_not_checked_on_create() -> None:
    assert clean(create(indexed(successPolicy=OLD_POLICY)))


def test_sp010_config_override_disables_it() -> None:
    s = settings(SP_010=RuleOverride(enabled=False))
    assert not s.enabled("IM-007")
    v = update(indexed(successPolicy=OLD_POLICY), indexed(), s)
    assert clean(v)
    # Only the immutability check is off: create-style successPolicy checks still run ...
    v = update(indexed(successPolicy=policy({"succeededCount": 5})), indexed(), s)
    assert causes(v) == [("SP-008", CNT0, INVALID)]
    # ... and so do the other immutability checks.
    v = update(
        job(completionMode="NonIndexed", completions=3, successPolicy=OLD_POLICY), indexed(), s
    )
    assert ("IM-003", "spec.completionMode", INVALID) in causes(v)
    assert ("IM-007", SP, INVALID) not in causes(v)


def test_sp010_config_override_sets_its_enforcement() -> None:
    s = settings(SP_010=RuleOverride(enforcement=Enforcement.WARN))
    v = update(indexed(successPolicy=OLD_POLICY), indexed(), s)
    assert v.allowed
    assert [(x.error.rule, x.enforcement) for x in v.violations] == [("IM-007", Enforcement.WARN)]


def test_sp010_with_a_bad_new_policy_reports_both() -> None:
    v = update(indexed(successPolicy=policy({"succeededCount": 5})), indexed())
    assert causes(v) == [("SP-008", CNT0, INVALID), ("IM-007", SP, INVALID)]
    assert count_of(v, "SP-008") == 2
    assert count_of(v, "IM-007") == 1


# --- UPDATE repeats create-style errors (upstream runs ValidateJobSpec twice) ---------------


def test_update_reports_create_style_errors_twice_but_unique_once() -> None:
    bad = indexed(successPolicy=policy({"succeededCount": 5}), parallelism=-1)
    v = update(bad, copy.deepcopy(bad))
    assert [x.error.rule for x in v.violations] == ["JS-001", "SP-008", "JS-001", "SP-008"]
    assert [(x.error.rule, x.error.path) for x in v.unique()] == [
        ("JS-001", "spec.parallelism"),
        ("SP-008", CNT0),
    ]
    assert causes(v) == [("JS-001", "spec.parallelism", INVALID), ("SP-008", CNT0, INVALID)]


def test_create_reports_each_error_once() -> None:
    v = create(indexed(successPolicy=policy({"succeededCount": 5}), parallelism=-1))
    assert len(v.violations) == len(v.unique()) == 2


def test_update_reports_indexed_hostname_error_once() -> None:
    # JS-007 is part of ValidateJob only, not of ValidateJobSpec.
    bad = job("a" * 62, completionMode="Indexed", completions=10, successPolicy=policy({}))
    v = update(bad, copy.deepcopy(bad))
    assert count_of(v, "JS-007") == 1
    assert count_of(v, "SP-004") == 2


# --- manifests are judged like server-prepared objects ---------------------------------------


def test_bare_manifest_is_accepted_on_create() -> None:
    assert clean(create(manifest()))


BAD_POLICIES = [
    policy({"succeededIndexes": "3"}),
    policy({"succeededIndexes": "2,0", "succeededCount": 4}),
    policy({}, {"succeededCount": -1}),
    policy(*[{"succeededCount": 9}] * 21),
    {"rules": []},
]


@pytest.mark.parametrize("bad", BAD_POLICIES)
def test_manifest_and_prepared_job_give_the_same_causes(bad: dict[str, Any]) -> None:
    from_manifest = create(manifest(completionMode="Indexed", completions=3, successPolicy=bad))
    prepared = create(job("x", completionMode="Indexed", completions=3, successPolicy=bad))
    assert causes(from_manifest) == causes(prepared) != []
    assert messages(from_manifest) == messages(prepared)


def test_manifest_example_bad_success_policy() -> None:
    v = create(read_object("cases/sp/succeeded-indexes-out-of-range.yaml"))
    assert messages(v) == [
        f'{IDX0}: Invalid value: "3": error parsing succeededIndexes: too large index: "3"'
    ]


@pytest.mark.parametrize("bad", BAD_POLICIES)
def test_manifest_update_is_judged_like_prepared_update(bad: dict[str, Any]) -> None:
    m = manifest(completionMode="Indexed", completions=3, successPolicy=bad)
    p = job("x", completionMode="Indexed", completions=3, successPolicy=bad)
    from_manifest = update(m, copy.deepcopy(m))
    prepared = update(p, copy.deepcopy(p))
    assert causes(from_manifest) == causes(prepared)
    assert len(from_manifest.violations) == len(prepared.violations) == 2 * len(causes(prepared))


def test_manifest_success_policy_without_completion_mode_is_non_indexed() -> None:
    v = create(read_object("cases/sp/success-policy-not-indexed.yaml"))
    assert causes(v) == [("SP-001", SP, INVALID)]


def test_manifest_indexed_without_counts_gets_one_completion() -> None:
    # SetDefaults_Job: completions and parallelism both unset -> both 1.
    v = create(manifest(completionMode="Indexed", successPolicy=policy({"succeededCount": 2})))
    assert messages(v) == [
        f"{CNT0}: Invalid value: 2: must be less than or equal to 1 "
        "(the number of specified completions)"
    ]
    assert clean(create(manifest(completionMode="Indexed")))


def test_manifest_indexed_with_only_parallelism_needs_completions() -> None:
    v = create(read_object("cases/js/indexed-without-completions.yaml"))
    assert causes(v) == [("JS-003", "spec.completions", REQUIRED)]


def test_manifest_pod_failure_policy_gets_failed_replacement_policy() -> None:
    rules = [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]
    assert clean(create(manifest(podFailurePolicy={"rules": rules})))
    # The stored (defaulted) form of the same Job carries podReplacementPolicy Failed.
    assert clean(create(job(podFailurePolicy={"rules": rules}, podReplacementPolicy="Failed")))


def test_manifest_pod_condition_status_defaults_to_true() -> None:
    rules = [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
    assert clean(create(manifest(podFailurePolicy={"rules": rules})))


def test_manifest_without_restart_policy_is_rejected_like_prepared_job() -> None:
    v = create(read_object("cases/js/no-restart-policy.yaml"))
    assert causes(v) == [("JS-005", RESTART, REQUIRED)]
    assert causes(v) == causes(create(without_restart_policy(job("x"))))


# --- JS-001 non-negative counts -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "extra"),
    [
        ("parallelism", {}),
        ("completions", {}),
        ("activeDeadlineSeconds", {}),
        ("backoffLimit", {}),
        ("ttlSecondsAfterFinished", {}),
        ("backoffLimitPerIndex", {"completionMode": "Indexed"}),
        ("maxFailedIndexes", {"completionMode": "Indexed", "backoffLimitPerIndex": 1}),
    ],
)
def test_js001_negative_counts_are_rejected(field: str, extra: dict[str, Any]) -> None:
    v = create(job(**{**extra, field: -1}))
    assert causes(v) == [("JS-001", f"spec.{field}", INVALID)]
    assert messages(v) == [f"spec.{field}: Invalid value: -1: must be greater than or equal to 0"]


def test_js001_zero_counts_are_accepted() -> None:
    zeros: dict[str, Any] = {
        "parallelism": 0,
        "completions": 0,
        "activeDeadlineSeconds": 0,
        "backoffLimit": 0,
        "ttlSecondsAfterFinished": 0,
    }
    assert clean(create(job(**zeros)))
    assert clean(create(indexed(backoffLimitPerIndex=0, maxFailedIndexes=0)))


# --- JS-002 completionMode and podReplacementPolicy values ----------------------------------


def test_js002_unknown_completion_mode() -> None:
    v = create(job(completionMode="Foo"))
    assert causes(v) == [("JS-002", "spec.completionMode", NOT_SUPPORTED)]
    assert messages(v) == [
        'spec.completionMode: Unsupported value: "Foo": supported values: "NonIndexed", "Indexed"'
    ]


def test_js002_unknown_completion_mode_skips_indexed_and_non_indexed_checks() -> None:
    v = create(job(completionMode="Foo", completions=None, backoffLimitPerIndex=1))
    assert causes(v) == [("JS-002", "spec.completionMode", NOT_SUPPORTED)]


def test_js002_unknown_pod_replacement_policy() -> None:
    v = create(job(podReplacementPolicy="Foo"))
    assert causes(v) == [("JS-002", "spec.podReplacementPolicy", NOT_SUPPORTED)]
    assert messages(v) == [
        'spec.podReplacementPolicy: Unsupported value: "Foo": '
        'supported values: "Failed", "TerminatingOrFailed"'
    ]


def test_js002_pod_failure_policy_allows_only_failed_replacement() -> None:
    rules = [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]
    v = create(job(podFailurePolicy={"rules": rules}, podReplacementPolicy="TerminatingOrFailed"))
    assert causes(v) == [("JS-002", "spec.podReplacementPolicy", NOT_SUPPORTED)]
    assert messages(v) == [
        'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": '
        'supported values: "Failed"'
    ]


@pytest.mark.parametrize(
    "spec",
    [
        {"completionMode": "NonIndexed"},
        {"completionMode": "Indexed"},
        {"podReplacementPolicy": "Failed"},
        {"podReplacementPolicy": "TerminatingOrFailed"},
        {"podReplacementPolicy": None},
    ],
)
def test_js002_known_values_are_accepted(spec: dict[str, Any]) -> None:
    assert clean(create(job(**spec)))


# --- JS-003 Indexed needs completions, bounded parallelism ----------------------------------


def test_js003_indexed_without_completions() -> None:
    v = create(indexed(None))
    assert causes(v) == [("JS-003", "spec.completions", REQUIRED)]
    assert messages(v) == ["spec.completions: Required value: when completion mode is Indexed"]


def test_js003_indexed_parallelism_limit() -> None:
    v = create(indexed(3, parallelism=100_001))
    assert causes(v) == [("JS-003", "spec.parallelism", INVALID)]
    assert messages(v) == [
        "spec.parallelism: Invalid value: 100001: "
        "must be less than or equal to 100000 when completion mode is Indexed"
    ]


def test_js003_accepted() -> None:
    assert clean(create(indexed(3, parallelism=100_000)))
    assert clean(create(job(parallelism=100_001)))  # the limit is for Indexed Jobs only
    assert clean(create(job(completions=None, parallelism=2)))  # NonIndexed needs no completions


# --- JS-004 backoffLimitPerIndex / maxFailedIndexes -----------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"completionMode": "Indexed", "maxFailedIndexes": 1},
            [
                (
                    "spec.backoffLimitPerIndex",
                    REQUIRED,
                    "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                )
            ],
        ),
        (
            {"completionMode": "Indexed", "backoffLimitPerIndex": 1, "maxFailedIndexes": 4},
            [
                (
                    "spec.maxFailedIndexes",
                    INVALID,
                    "spec.maxFailedIndexes: Invalid value: 4: "
                    "must be less than or equal to completions",
                )
            ],
        ),
        (
            {
                "completionMode": "Indexed",
                "completions": 200_000,
                "backoffLimitPerIndex": 1,
                "maxFailedIndexes": 100_001,
            },
            [
                (
                    "spec.maxFailedIndexes",
                    INVALID,
                    "spec.maxFailedIndexes: Invalid value: 100001: "
                    "must be less than or equal to 100000",
                ),
                (
                    "spec.maxFailedIndexes",
                    INVALID,
                    "spec.maxFailedIndexes: Invalid value: 100001: must be less than or equal "
                    "to 10000 when completions are above 100000 and used with backoff limit "
                    "per index",
                ),
            ],
        ),
        (
            {
                "completionMode": "Indexed",
                "completions": 100_001,
                "parallelism": 10_001,
                "backoffLimitPerIndex": 1,
            },
            [
                (
                    "spec.maxFailedIndexes",
                    REQUIRED,
                    "spec.maxFailedIndexes: Required value: "
                    "must be specified when completions is above 100000",
                ),
                (
                    "spec.parallelism",
                    INVALID,
                    "spec.parallelism: Invalid value: 10001: must be less than or equal to "
                    "10000 when completions are above 100000 and used with backoff limit per "
                    "index",
                ),
            ],
        ),
        (
            {"backoffLimitPerIndex": 1, "maxFailedIndexes": 1},
            [
                (
                    "spec.backoffLimitPerIndex",
                    INVALID,
                    "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                ),
                (
                    "spec.maxFailedIndexes",
                    INVALID,
                    "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
                ),
            ],
        ),
        (
            {"maxFailedIndexes": 1},
            [
                (
                    "spec.backoffLimitPerIndex",
                    REQUIRED,
                    "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                ),
                (
                    "spec.maxFailedIndexes",
                    INVALID,
                    "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
                ),
            ],
        ),
    ],
    ids=[
        "max-failed-without-per-index",
        "max-failed-above-completions",
        "max-failed-above-limits",
        "high-completions",
        "non-indexed-both",
        "non-indexed-max-failed-only",
    ],
)
def test_js004_rejected(spec: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    v = create(job(**{"completions": 3, **spec}))
    assert causes(v) == [("JS-004", path, reason) for path, reason, _ in expected]
    assert messages(v) == [message for _, _, message in expected]


@pytest.mark.parametrize(
    "spec",
    [
        {"backoffLimitPerIndex": 1, "maxFailedIndexes": 3},
        {"backoffLimitPerIndex": 1},
        {
            "completions": 100_001,
            "parallelism": 10_000,
            "backoffLimitPerIndex": 1,
            "maxFailedIndexes": 10_000,
        },
        {"completions": 200_000, "parallelism": 100_000},  # no cap without backoffLimitPerIndex
    ],
)
def test_js004_accepted(spec: dict[str, Any]) -> None:
    assert clean(create(job(**{"completionMode": "Indexed", "completions": 3, **spec})))


# --- JS-005 restartPolicy -------------------------------------------------------------------

RESTART_REQUIRED = f'{RESTART}: Required value: valid values: "OnFailure", "Never"'


def test_js005_missing_restart_policy_is_required() -> None:
    v = create(without_restart_policy(job()))
    assert causes(v) == [("JS-005", RESTART, REQUIRED)]
    assert messages(v) == [RESTART_REQUIRED]


@pytest.mark.parametrize("value", ["Always", ""])
def test_js005_always_or_empty_is_required(value: str) -> None:
    v = create(job(template=_template(restartPolicy=value)))
    assert causes(v) == [("JS-005", RESTART, REQUIRED)]
    assert messages(v) == [RESTART_REQUIRED]


def test_js005_unknown_restart_policy() -> None:
    v = create(job(template=_template(restartPolicy="Sometimes")))
    # Upstream reports it twice: the pod spec's validateRestartPolicy (POD-024), then the Job's.
    assert causes(v) == [("POD-024", RESTART, NOT_SUPPORTED), ("JS-005", RESTART, NOT_SUPPORTED)]
    assert messages(v) == [
        f'{RESTART}: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", '
        '"Never"',
        f'{RESTART}: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"',
    ]


def test_js005_pod_failure_policy_needs_never() -> None:
    rules = [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]
    spec: dict[str, Any] = {"podFailurePolicy": {"rules": rules}, "podReplacementPolicy": "Failed"}
    v = create(job(template=_template(restartPolicy="OnFailure"), **spec))
    assert causes(v) == [("JS-005", RESTART, INVALID)]
    assert messages(v) == [
        f'{RESTART}: Invalid value: "OnFailure": '
        'only "Never" is supported when podFailurePolicy is specified'
    ]
    assert clean(create(job(**spec)))


@pytest.mark.parametrize("value", ["OnFailure", "Never"])
def test_js005_on_failure_and_never_are_accepted(value: str) -> None:
    assert clean(create(job(template=_template(restartPolicy=value))))


def _template(**pod_spec: Any) -> dict[str, Any]:
    template: dict[str, Any] = copy.deepcopy(job()["spec"]["template"])
    template["spec"].update(pod_spec)
    return template


# --- JS-006 managedBy -----------------------------------------------------------------------


def test_js006_empty_managed_by_is_required() -> None:
    v = create(job(managedBy=""))
    assert causes(v) == [("JS-006", "spec.managedBy", REQUIRED)]
    assert messages(v) == ["spec.managedBy: Required value"]


@pytest.mark.parametrize("value", ["foo", "/foo", "acme.io/"])
def test_js006_not_a_domain_prefixed_path(value: str) -> None:
    v = create(job(managedBy=value))
    assert causes(v) == [("JS-006", "spec.managedBy", INVALID)]
    assert messages(v) == [
        f"spec.managedBy: Invalid value: {q(value)}: "
        'must be a domain-prefixed path (such as "acme.io/foo")'
    ]


def test_js006_bad_domain() -> None:
    v = create(job(managedBy="Acme.io/foo"))
    assert causes(v) == [("JS-006", "spec.managedBy", INVALID)]
    assert messages(v)[0].startswith(
        'spec.managedBy: Invalid value: "Acme.io": a lowercase RFC 1123 subdomain must consist of'
    )


def test_js006_bad_path() -> None:
    v = create(job(managedBy="acme.io/a b"))
    assert causes(v) == [("JS-006", "spec.managedBy", INVALID)]
    assert messages(v)[0].startswith('spec.managedBy: Invalid value: "a b": Invalid path')


def test_js006_bad_domain_and_bad_path_are_both_reported() -> None:
    # IsDomainPrefixedPath checks the path even when the host is already invalid.
    v = create(job(managedBy="Acme.io/a b"))
    assert causes(v) == [("JS-006", "spec.managedBy", INVALID)] * 2
    assert [m.split(": ")[2] for m in messages(v)] == ['"Acme.io"', '"a b"']


def test_js006_too_long() -> None:
    value = "acme.io/" + "a" * 56  # 64 bytes
    v = create(job(managedBy=value))
    assert causes(v) == [("JS-006", "spec.managedBy", TOO_LONG)]
    assert messages(v) == ["spec.managedBy: Too long: may not be more than 63 bytes"]


def test_js006_too_long_and_malformed_are_both_reported() -> None:
    v = create(job(managedBy="x" * 64))
    assert causes(v) == [
        ("JS-006", "spec.managedBy", INVALID),
        ("JS-006", "spec.managedBy", TOO_LONG),
    ]


@pytest.mark.parametrize(
    "value", ["acme.io/foo", "kubernetes.io/job-controller", "acme.io/" + "a" * 55, "a/b:c~%"]
)
def test_js006_accepted(value: str) -> None:
    assert clean(create(job(managedBy=value)))


# --- JS-007 Indexed pod hostnames -----------------------------------------------------------


def test_js007_indexed_hostname_must_be_a_dns_label() -> None:
    name = "a" * 62
    obj = read_object("cases/js/indexed-hostname-too-long.yaml")
    assert obj["metadata"]["name"] == name
    v = create(obj)
    assert causes(v) == [("JS-007", "metadata.name", INVALID)]
    assert messages(v) == [
        f'metadata.name: Invalid value: "{name}": '
        f"will not able to create pod with invalid DNS label: {name}-9"
    ]


def test_js007_dotted_name_is_not_a_dns_label() -> None:
    v = create(job("a.b", completionMode="Indexed", completions=2))
    assert causes(v) == [("JS-007", "metadata.name", INVALID)]
    assert messages(v)[0].endswith("will not able to create pod with invalid DNS label: a.b-1")


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("a" * 61, {"completionMode": "Indexed", "completions": 10}),
        ("a" * 60, {"completionMode": "Indexed", "completions": 100}),
        ("a" * 62, {"completions": 10}),  # NonIndexed: no hostnames
        ("a.b", {"completionMode": "Indexed", "completions": 0}),
    ],
)
def test_js007_accepted(name: str, spec: dict[str, Any]) -> None:
    assert clean(create(job(name, **spec)))


# --- JS-008 podFailurePolicy ----------------------------------------------------------------

EXIT_RULE = {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}
COND_RULE = {
    "action": "Ignore",
    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
}


def pfp_job(*rules: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return job(podFailurePolicy={"rules": list(rules)}, podReplacementPolicy="Failed", **spec)


def exit_rule(**on_exit_codes: Any) -> dict[str, Any]:
    return {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1], **on_exit_codes}}


def cond_rule(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {"action": "Ignore", "onPodConditions": list(conditions)}


R0 = f"{PFP}[0]"
ACTIONS = '["Count" "FailIndex" "FailJob" "Ignore"]'
# (id, rules, expected (path, reason), how the message is matched, text)
# "exact": the whole message; "prefix": the message starts with text; "detail": a value printed
# as a struct (Go syntax upstream, JSON here), so only the path and the detail are compared.
JS008_REJECTED: list[tuple[str, list[dict[str, Any]], tuple[str, str], str, str]] = [
    (
        "too-many-rules",
        [EXIT_RULE] * 21,
        (PFP, TOO_MANY),
        "exact",
        f"{PFP}: Too many: 21: must have at most 20 items",
    ),
    (
        "action-empty",
        [{**EXIT_RULE, "action": ""}],
        (f"{R0}.action", REQUIRED),
        "exact",
        f"{R0}.action: Required value: valid values: {ACTIONS}",
    ),
    (
        "action-missing",
        [{"onExitCodes": EXIT_RULE["onExitCodes"]}],
        (f"{R0}.action", REQUIRED),
        "exact",
        f"{R0}.action: Required value: valid values: {ACTIONS}",
    ),
    (
        "fail-index-without-per-index",
        [{**EXIT_RULE, "action": "FailIndex"}],
        (f"{R0}.action", INVALID),
        "exact",
        f'{R0}.action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
    ),
    (
        "action-unknown",
        [{**EXIT_RULE, "action": "Retry"}],
        (f"{R0}.action", NOT_SUPPORTED),
        "exact",
        f'{R0}.action: Unsupported value: "Retry": '
        'supported values: "Count", "FailIndex", "FailJob", "Ignore"',
    ),
    (
        "operator-empty",
        [exit_rule(operator="")],
        (f"{R0}.onExitCodes.operator", REQUIRED),
        "exact",
        f'{R0}.onExitCodes.operator: Required value: valid values: ["In" "NotIn"]',
    ),
    (
        "operator-unknown",
        [exit_rule(operator="Eq")],
        (f"{R0}.onExitCodes.operator", NOT_SUPPORTED),
        "exact",
        f'{R0}.onExitCodes.operator: Unsupported value: "Eq": supported values: "In", "NotIn"',
    ),
    (
        "container-unknown",
        [exit_rule(containerName="other")],
        (f"{R0}.onExitCodes.containerName", INVALID),
        "exact",
        f'{R0}.onExitCodes.containerName: Invalid value: "other": '
        "must be one of the container or initContainer names in the pod template",
    ),
    (
        "values-empty",
        [exit_rule(values=[])],
        (f"{R0}.onExitCodes.values", INVALID),
        "detail",
        "at least one value is required",
    ),
    (
        "values-too-many",
        [exit_rule(operator="NotIn", values=list(range(1, 257)))],
        (f"{R0}.onExitCodes.values", TOO_MANY),
        "exact",
        f"{R0}.onExitCodes.values: Too many: 256: must have at most 255 items",
    ),
    (
        "zero-with-in",
        [exit_rule(values=[0, 1])],
        (f"{R0}.onExitCodes.values[0]", INVALID),
        "exact",
        f"{R0}.onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
    ),
    (
        "duplicate",
        [exit_rule(values=[1, 1])],
        (f"{R0}.onExitCodes.values[1]", DUPLICATE),
        "exact",
        f"{R0}.onExitCodes.values[1]: Duplicate value: 1",
    ),
    (
        "unordered",
        [exit_rule(values=[2, 1])],
        (f"{R0}.onExitCodes.values", INVALID),
        "detail",
        "must be ordered",
    ),
    (
        "too-many-conditions",
        [cond_rule(*[{"type": f"C{i}", "status": "True"} for i in range(21)])],
        (f"{R0}.onPodConditions", TOO_MANY),
        "exact",
        f"{R0}.onPodConditions: Too many: 21: must have at most 20 items",
    ),
    (
        "condition-type-invalid",
        [cond_rule({"type": "bad type!", "status": "True"})],
        (f"{R0}.onPodConditions[0].type", INVALID),
        "prefix",
        f'{R0}.onPodConditions[0].type: Invalid value: "bad type!": name part must consist of',
    ),
    (
        "condition-status-unknown",
        [cond_rule({"type": "DisruptionTarget", "status": "Maybe"})],
        (f"{R0}.onPodConditions[0].status", NOT_SUPPORTED),
        "exact",
        f'{R0}.onPodConditions[0].status: Unsupported value: "Maybe": '
        'supported values: "False", "True", "Unknown"',
    ),
    (
        "both-requirements",
        [{**EXIT_RULE, "onPodConditions": COND_RULE["onPodConditions"]}],
        (R0, INVALID),
        "exact",
        f"{R0}: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
    ),
    (
        "no-requirement",
        [{"action": "FailJob"}],
        (R0, INVALID),
        "exact",
        f"{R0}: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
    ),
    (
        "empty-conditions-count-as-none",
        [{"action": "FailJob", "onPodConditions": []}],
        (R0, INVALID),
        "exact",
        f"{R0}: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
    ),
]


@pytest.mark.parametrize(
    ("rules", "expected", "match", "text"),
    [case[1:] for case in JS008_REJECTED],
    ids=[case[0] for case in JS008_REJECTED],
)
def test_js008_rejected(
    rules: list[dict[str, Any]], expected: tuple[str, str], match: str, text: str
) -> None:
    v = create(pfp_job(*rules))
    path, reason = expected
    assert causes(v) == [("JS-008", path, reason)]
    [message] = messages(v)
    if match == "exact":
        assert message == text
    elif match == "prefix":
        assert message.startswith(text)
    else:
        assert message.startswith(f"{path}: Invalid value: ")
        assert message.endswith(f": {text}")


def test_js008_too_many_values_still_checks_each_value() -> None:
    # validatePodFailurePolicyRuleOnExitCodes loops over the values after the TooMany check.
    v = create(pfp_job(exit_rule(values=list(range(256)))))
    assert causes(v) == [
        ("JS-008", f"{R0}.onExitCodes.values", TOO_MANY),
        ("JS-008", f"{R0}.onExitCodes.values[0]", INVALID),
    ]


def test_js008_explicit_empty_condition_status_is_defaulted_to_true() -> None:
    # SetDefaults_Job sets every empty onPodConditions status to "True" (Go cannot tell an
    # explicit "" from an omitted status), so a Job never reaches the Required check.
    v = create(pfp_job(cond_rule({"type": "DisruptionTarget", "status": ""})))
    assert clean(v)


@pytest.mark.parametrize(
    "rules",
    [
        [
            {
                "action": "FailJob",
                "onExitCodes": {"containerName": "main", "operator": "In", "values": [1, 2, 42]},
            },
            COND_RULE,
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}},
            cond_rule({"type": "example.com/Custom", "status": "Unknown"}),
        ],
        [EXIT_RULE] * 20,
        [exit_rule(operator="NotIn", values=list(range(255)))],
        [cond_rule({"type": "DisruptionTarget"})],
    ],
    ids=["mixed", "twenty-rules", "255-values", "status-omitted"],
)
def test_js008_accepted(rules: list[dict[str, Any]]) -> None:
    assert clean(create(pfp_job(*rules)))


def test_js008_fail_index_with_backoff_limit_per_index_is_accepted() -> None:
    rule = {**EXIT_RULE, "action": "FailIndex"}
    assert clean(create(pfp_job(rule, completionMode="Indexed", backoffLimitPerIndex=1)))


def test_js008_init_container_names_count() -> None:
    template = _template(initContainers=[{"name": "setup", "image": "busybox"}])
    v = create(pfp_job(exit_rule(containerName="setup"), template=template))
    assert clean(v)
