"""Section E: CronJob `spec.jobTemplate` (CJ-001..CJ-005), on CREATE and UPDATE of cronjobs.

Upstream runs only `ValidateJobTemplateSpec` (lower-case validateJobSpec plus the selector
checks) on the template; the Job defaulter never runs on it (upstream.md §6).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators import Operation, Request, RuleOverride, Settings, Verdict, evaluate
from tests.builders import causes, clean, create, cronjob, messages, settings, update
from tests.cases import read_object

INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
NOT_SUPPORTED = "FieldValueNotSupported"
TOO_LONG = "FieldValueTooLong"

JT = "spec.jobTemplate.spec"
SP = f"{JT}.successPolicy"
RULES = f"{SP}.rules"
RESTART = f"{JT}.template.spec.restartPolicy"


def indexed_cronjob(completions: int | None = 3, **template_spec: Any) -> dict[str, Any]:
    return cronjob(completionMode="Indexed", completions=completions, **template_spec)


def with_pod(obj: dict[str, Any], **pod_spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    pod = out["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    for key, value in pod_spec.items():
        if value is None:
            pod.pop(key, None)
        else:
            pod[key] = value
    return out


def cj_create(obj: dict[str, Any], s: Settings | None = None) -> Verdict:
    return create(obj, s, kind="CronJob")


def cj_update(new: dict[str, Any], old: dict[str, Any], s: Settings | None = None) -> Verdict:
    return update(new, old, s, kind="CronJob")


def policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"rules": list(rules)}


BOTH = pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])


def judge(operation: str, obj: dict[str, Any], s: Settings | None = None) -> Verdict:
    """CREATE of obj, or UPDATE of a valid stored CronJob to obj."""
    if operation == "CREATE":
        return cj_create(obj, s)
    return cj_update(obj, cronjob(), s)


# --- a valid CronJob ------------------------------------------------------------------------


@BOTH
def test_valid_cronjob_is_accepted(operation: str) -> None:
    assert clean(judge(operation, cronjob()))
    assert clean(judge(operation, read_object("cases/cj/nightly.yaml")))


# --- CJ-001 successPolicy on the jobTemplate ------------------------------------------------


@BOTH
def test_cj001_success_policy_errors_are_prefixed_with_job_template(operation: str) -> None:
    bad = policy({"succeededCount": 5}, {"succeededCount": 1}, {"succeededIndexes": "3"})
    v = judge(operation, indexed_cronjob(successPolicy=bad))
    assert causes(v) == [
        ("CJ-001", f"{RULES}[0].succeededCount", INVALID),
        ("CJ-001", f"{RULES}[2].succeededIndexes", INVALID),
    ]
    assert messages(v) == [
        f"{RULES}[0].succeededCount: Invalid value: 5: "
        "must be less than or equal to 3 (the number of specified completions)",
        f'{RULES}[2].succeededIndexes: Invalid value: "3": '
        'error parsing succeededIndexes: too large index: "3"',
    ]
    assert not v.allowed


@BOTH
@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ({"rules": []}, [("CJ-001", RULES, REQUIRED)]),
        (policy(*[{"succeededCount": 1}] * 21), [("CJ-001", RULES, "FieldValueTooMany")]),
        (policy({}), [("CJ-001", f"{RULES}[0]", REQUIRED)]),
        (policy({"succeededCount": -1}), [("CJ-001", f"{RULES}[0].succeededCount", INVALID)]),
        (
            policy({"succeededIndexes": "2,0", "succeededCount": 1}),
            [
                ("CJ-001", f"{RULES}[0].succeededIndexes", INVALID),
                ("CJ-001", f"{RULES}[0].succeededCount", INVALID),
            ],
        ),
        (
            policy({"succeededIndexes": "é" * 40000}),
            [
                ("CJ-001", f"{RULES}[0].succeededIndexes", TOO_LONG),
                ("CJ-001", f"{RULES}[0].succeededIndexes", INVALID),
            ],
        ),
    ],
    ids=["SP-002", "SP-003", "SP-004", "SP-007", "SP-006+SP-009", "SP-005+SP-006"],
)
def test_cj001_every_sp_check_applies(
    operation: str, bad: dict[str, Any], expected: list[tuple[str, str, str]]
) -> None:
    assert causes(judge(operation, indexed_cronjob(successPolicy=bad))) == expected


@BOTH
def test_cj001_sp009_message_on_job_template(operation: str) -> None:
    rule = {"succeededIndexes": "0-1", "succeededCount": 3}
    v = judge(operation, indexed_cronjob(5, successPolicy=policy(rule)))
    assert messages(v) == [
        f"{RULES}[0].succeededCount: Invalid value: 3: must be less than or equal to 2 "
        "(the number of indexes in the specified succeededIndexes field)"
    ]


@BOTH
def test_cj001_success_policy_without_completion_mode_is_not_indexed(operation: str) -> None:
    # The jobTemplate is not defaulted, but a nil completionMode counts as NonIndexed.
    v = judge(operation, read_object("cases/cj/success-policy-not-indexed.yaml"))
    assert causes(v) == [("CJ-001", SP, INVALID)]
    [message] = messages(v)
    assert message.startswith(f"{SP}: Invalid value: ")
    assert message.endswith(": requires indexed completion mode")


def test_cj001_success_policy_may_change_on_update() -> None:
    # SP-010 does not apply to CronJobs.
    old = indexed_cronjob(successPolicy=policy({"succeededCount": 1}))
    for new_policy in (None, policy({"succeededIndexes": "0-2"}), policy({"succeededCount": 3})):
        assert clean(cj_update(indexed_cronjob(successPolicy=new_policy), old)), new_policy
    assert clean(cj_update(old, indexed_cronjob()))


def test_cj001_only_the_new_template_is_checked_on_update() -> None:
    bad = indexed_cronjob(successPolicy=policy({"succeededCount": 9}))
    assert clean(cj_update(indexed_cronjob(successPolicy=policy({"succeededCount": 1})), bad))
    assert causes(cj_update(bad, cronjob())) == [("CJ-001", f"{RULES}[0].succeededCount", INVALID)]


def test_cj001_errors_are_reported_once_on_update() -> None:
    bad = indexed_cronjob(successPolicy=policy({"succeededCount": 9}), parallelism=-1)
    v = cj_update(bad, copy.deepcopy(bad))
    assert [x.error.rule for x in v.violations] == ["CJ-005", "CJ-001"]
    assert len(v.unique()) == 2


def test_cj001_can_be_switched_off() -> None:
    bad = indexed_cronjob(successPolicy=policy({"succeededCount": 9}), parallelism=-1)
    v = cj_create(bad, settings(CJ_001=RuleOverride(enabled=False)))
    assert causes(v) == [("CJ-005", f"{JT}.parallelism", INVALID)]


# --- CJ-002 the jobTemplate is freely mutable -----------------------------------------------

TEMPLATE_EDITS: list[dict[str, Any]] = [
    {"parallelism": 5},
    {"completions": 7},
    {"completionMode": "Indexed", "completions": 4},
    {"backoffLimitPerIndex": 2, "completionMode": "Indexed", "completions": 4},
    {"managedBy": "acme.io/controller"},
    {"activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 30, "backoffLimit": 2},
    {
        "podFailurePolicy": {
            "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]
        }
    },
    {"completionMode": "Indexed", "completions": 4, "successPolicy": policy({"succeededCount": 2})},
    {"suspend": True},
]


@pytest.mark.parametrize("edit", TEMPLATE_EDITS)
def test_cj002_job_spec_fields_may_change_on_update(edit: dict[str, Any]) -> None:
    v = cj_update(cronjob(**edit), cronjob())
    assert clean(v)
    assert clean(cj_update(cronjob(), cronjob(**edit)))


def test_cj002_pod_template_may_change_on_update() -> None:
    old = cronjob()
    new = with_pod(
        old,
        containers=[{"name": "other", "image": "alpine:3", "resources": {"limits": {"cpu": "2"}}}],
        nodeSelector={"zone": "b"},
        restartPolicy="OnFailure",
        serviceAccountName="runner",
    )
    new["spec"]["jobTemplate"]["spec"]["template"]["metadata"] = {"labels": {"app": "changed"}}
    v = cj_update(new, old)
    assert clean(v)


def test_cj002_no_template_or_immutability_rule_ever_fires() -> None:
    old = indexed_cronjob(successPolicy=policy({"succeededCount": 1}), backoffLimitPerIndex=1)
    new = with_pod(
        cronjob(completions=2, managedBy="acme.io/x"),
        containers=[{"name": "n", "image": "busybox"}],
    )
    v = cj_update(new, old)
    assert clean(v)
    assert not any(x.error.rule.startswith(("TM-", "IM-")) for x in v.violations)


# --- CJ-003 selector is generated, manualSelector unsupported -------------------------------


@BOTH
@pytest.mark.parametrize("selector", [{"matchLabels": {"app": "nightly"}}, {}])
def test_cj003_selector_must_be_unset(operation: str, selector: dict[str, Any]) -> None:
    v = judge(operation, cronjob(selector=selector))
    assert causes(v) == [("CJ-003", f"{JT}.selector", INVALID)]
    [message] = messages(v)
    assert message.startswith(f"{JT}.selector: Invalid value: ")
    assert message.endswith(": `selector` will be auto-generated")


@BOTH
def test_cj003_manual_selector_true_is_not_supported(operation: str) -> None:
    v = judge(operation, read_object("cases/cj/manual-selector.yaml"))
    assert causes(v) == [("CJ-003", f"{JT}.manualSelector", NOT_SUPPORTED)]
    assert messages(v) == [
        f'{JT}.manualSelector: Unsupported value: true: supported values: "nil", "false"'
    ]


def test_cj003_selector_and_manual_selector_are_both_reported() -> None:
    v = cj_create(cronjob(selector={"matchLabels": {"a": "b"}}, manualSelector=True))
    assert sorted(causes(v)) == [
        ("CJ-003", f"{JT}.manualSelector", NOT_SUPPORTED),
        ("CJ-003", f"{JT}.selector", INVALID),
    ]


@BOTH
def test_job_template_spec_order_spec_then_pod_template_then_restart_policy_then_selector(
    operation: str,
) -> None:
    """ValidateJobTemplateSpec: validateJobSpec (its own checks, ValidatePodTemplateSpec, the
    restart policy), then the selector checks."""
    obj = with_pod(
        cronjob(selector={"matchLabels": {"a": "b"}}, parallelism=-1), restartPolicy=None
    )
    obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0].pop("image")
    assert [(rule, path) for rule, path, _ in causes(judge(operation, obj))] == [
        ("CJ-005", f"{JT}.parallelism"),
        ("POD-003", f"{JT}.template.spec.containers[0].image"),
        ("CJ-005", RESTART),
        ("CJ-003", f"{JT}.selector"),
    ]


def test_cj003_reported_alongside_job_spec_errors() -> None:
    v = cj_create(cronjob(selector={"matchLabels": {"a": "b"}}, parallelism=-1))
    assert sorted(causes(v)) == [
        ("CJ-003", f"{JT}.selector", INVALID),
        ("CJ-005", f"{JT}.parallelism", INVALID),
    ]


@BOTH
@pytest.mark.parametrize("spec", [{"manualSelector": False}, {"manualSelector": None}, {}])
def test_cj003_no_selector_is_accepted(operation: str, spec: dict[str, Any]) -> None:
    assert clean(judge(operation, cronjob(**spec)))


def test_cj003_no_generated_label_or_selector_checks() -> None:
    # TM-005..TM-007 do not apply: no uid labels, no selector, labels that select nothing.
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"] = {
        "labels": {"job-name": "someone-else", "controller-uid": "not-mine"}
    }
    assert clean(cj_create(obj))
    del obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"]
    assert clean(cj_create(obj))


# --- CJ-004 no status rules -----------------------------------------------------------------


def test_cj004_cronjob_status_is_not_judged() -> None:
    old = cronjob()
    old["status"] = {"lastScheduleTime": "2026-01-01T10:00:00Z"}
    new = copy.deepcopy(old)
    # Fields that would break Job status rules (ST-002, ST-020, ST-029, ST-037) mean nothing here.
    new["status"] = {
        "active": [{"kind": "Job", "name": "nightly-1", "namespace": "default"}],
        "succeeded": -1,
        "conditions": [{"type": "Complete", "status": "True"}],
        "lastScheduleTime": "2026-01-01T09:00:00Z",
    }
    v = cj_update(new, old)
    assert clean(v)
    assert not any(x.error.rule.startswith("ST-") for x in v.violations)


def test_cj004_status_subresource_of_cronjobs_is_not_judged() -> None:
    old = cronjob()
    new = indexed_cronjob(successPolicy=policy({"succeededCount": 9}))
    request = Request("CronJob", Operation.UPDATE, new, old, subresource="status")
    v = evaluate(request, Settings())
    assert not v.judged
    assert v.violations == []
    # The same object on the main resource is judged.
    assert causes(cj_update(new, old)) == [("CJ-001", f"{RULES}[0].succeededCount", INVALID)]


# --- CJ-005 suspend allowed, no Job defaulting, Job spec checks -----------------------------


@BOTH
def test_cj005_suspended_job_template_is_allowed(operation: str) -> None:
    assert clean(judge(operation, cronjob(suspend=True)))
    suspended_cronjob = cronjob(suspend=True)
    suspended_cronjob["spec"]["suspend"] = True
    assert clean(judge(operation, suspended_cronjob))


@BOTH
def test_cj005_indexed_without_completions_is_required(operation: str) -> None:
    # No Job defaulting: completions stays null even though parallelism is unset too.
    v = judge(operation, read_object("cases/cj/indexed-without-completions.yaml"))
    assert causes(v) == [("CJ-005", f"{JT}.completions", REQUIRED)]
    assert messages(v) == [f"{JT}.completions: Required value: when completion mode is Indexed"]


@BOTH
def test_cj005_indexed_without_completions_skips_completion_based_sp_checks(
    operation: str,
) -> None:
    # Upstream dereferences the null completions here (apiserver panic, upstream.md §5);
    # RULES.md recommends reporting the Required error and skipping SP-006..SP-009.
    rule = {"succeededIndexes": "5,1", "succeededCount": 9}
    v = judge(operation, cronjob(completionMode="Indexed", successPolicy=policy(rule)))
    assert causes(v) == [("CJ-005", f"{JT}.completions", REQUIRED)]


@BOTH
def test_cj005_non_indexed_template_needs_no_counts(operation: str) -> None:
    assert clean(judge(operation, cronjob(completions=None, parallelism=None)))


@BOTH
@pytest.mark.parametrize("restart_policy", [None, "Always", ""])
def test_cj005_restart_policy_required(operation: str, restart_policy: str | None) -> None:
    # None: omitted (the pod defaulter would store "Always"); "": explicitly empty.
    v = judge(operation, with_pod(cronjob(), restartPolicy=restart_policy))
    assert causes(v) == [("CJ-005", RESTART, REQUIRED)]
    assert messages(v) == [f'{RESTART}: Required value: valid values: "OnFailure", "Never"']


@BOTH
def test_cj005_restart_policy_unsupported(operation: str) -> None:
    v = judge(operation, with_pod(cronjob(), restartPolicy="Sometimes"))
    # Upstream reports it twice: the pod spec's validateRestartPolicy (POD-024), then
    # validateJobSpec's once ValidatePodTemplateSpec has run.
    assert causes(v) == [("POD-024", RESTART, NOT_SUPPORTED), ("CJ-005", RESTART, NOT_SUPPORTED)]


@BOTH
@pytest.mark.parametrize("restart_policy", ["OnFailure", "Never"])
def test_cj005_restart_policy_accepted(operation: str, restart_policy: str) -> None:
    assert clean(judge(operation, with_pod(cronjob(), restartPolicy=restart_policy)))


@BOTH
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"parallelism": -1}, [(f"{JT}.parallelism", INVALID)]),
        ({"activeDeadlineSeconds": -5}, [(f"{JT}.activeDeadlineSeconds", INVALID)]),
        ({"completionMode": "Foo"}, [(f"{JT}.completionMode", NOT_SUPPORTED)]),
        ({"backoffLimitPerIndex": 1}, [(f"{JT}.backoffLimitPerIndex", INVALID)]),
        (
            {"completionMode": "Indexed", "completions": 3, "maxFailedIndexes": 1},
            [(f"{JT}.backoffLimitPerIndex", REQUIRED)],
        ),
        (
            {"completionMode": "Indexed", "completions": 3, "parallelism": 100_001},
            [(f"{JT}.parallelism", INVALID)],
        ),
        ({"managedBy": ""}, [(f"{JT}.managedBy", REQUIRED)]),
        ({"managedBy": "nodomain"}, [(f"{JT}.managedBy", INVALID)]),
        ({"podReplacementPolicy": "Foo"}, [(f"{JT}.podReplacementPolicy", NOT_SUPPORTED)]),
        (
            {"podFailurePolicy": {"rules": [{"action": "FailJob"}]}},
            [(f"{JT}.podFailurePolicy.rules[0]", INVALID)],
        ),
    ],
    ids=[
        "JS-001",
        "JS-001-deadline",
        "JS-002",
        "JS-004-non-indexed",
        "JS-004-required",
        "JS-003",
        "JS-006-empty",
        "JS-006-invalid",
        "JS-002-replacement",
        "JS-008",
    ],
)
def test_cj005_job_spec_checks_apply_to_the_template(
    operation: str, spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    v = judge(operation, cronjob(**spec))
    assert causes(v) == [("CJ-005", path, reason) for path, reason in expected]


def test_cj005_job_spec_messages_carry_the_template_path() -> None:
    v = cj_create(cronjob(parallelism=-1, managedBy="nodomain"))
    assert messages(v) == [
        f"{JT}.parallelism: Invalid value: -1: must be greater than or equal to 0",
        f'{JT}.managedBy: Invalid value: "nodomain": '
        'must be a domain-prefixed path (such as "acme.io/foo")',
    ]


def test_cj005_pod_failure_policy_without_replacement_policy_is_accepted() -> None:
    # podReplacementPolicy is not defaulted in a jobTemplate; nil is fine.
    rules = [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]
    assert clean(cj_create(cronjob(podFailurePolicy={"rules": rules})))
    v = cj_create(
        cronjob(podFailurePolicy={"rules": rules}, podReplacementPolicy="TerminatingOrFailed")
    )
    assert causes(v) == [("CJ-005", f"{JT}.podReplacementPolicy", NOT_SUPPORTED)]
    assert messages(v) == [
        f'{JT}.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": '
        'supported values: "Failed"'
    ]


def test_cj005_pod_failure_policy_needs_never() -> None:
    rules = [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]
    v = cj_create(with_pod(cronjob(podFailurePolicy={"rules": rules}), restartPolicy="OnFailure"))
    assert causes(v) == [("CJ-005", RESTART, INVALID)]


def test_cj005_pod_condition_status_is_not_defaulted() -> None:
    # SetDefaults_Job (which turns an empty onPodConditions status into "True") never runs on
    # a CronJob's jobTemplate, so an omitted status reaches the Required check.
    rules = [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
    v = cj_create(cronjob(podFailurePolicy={"rules": rules}))
    path = f"{JT}.podFailurePolicy.rules[0].onPodConditions[0].status"
    assert causes(v) == [("CJ-005", path, REQUIRED)]
    assert messages(v) == [f'{path}: Required value: valid values: ["False" "True" "Unknown"]']


def test_cj005_no_indexed_hostname_check_on_cronjobs() -> None:
    # The metadata.name hostname check (JS-007) is part of ValidateJob only. Such a name is
    # longer than a CronJob may have (OM-002), which is not in question here.
    v = cj_create(indexed_cronjob(10, name="a" * 62), settings(OM_002=RuleOverride(enabled=False)))
    assert clean(v)


@BOTH
def test_cj005_rule_ids_on_cronjobs_are_only_cj(operation: str) -> None:
    obj = with_pod(
        indexed_cronjob(
            None,
            parallelism=-1,
            selector={},
            manualSelector=True,
            successPolicy=policy({"succeededIndexes": "x" * 70000}),
        ),
        restartPolicy=None,
    )
    v = judge(operation, obj)
    assert {x.error.rule for x in v.violations} == {"CJ-001", "CJ-003", "CJ-005"}
    assert sorted(causes(v)) == sorted(
        [
            ("CJ-003", f"{JT}.selector", INVALID),
            ("CJ-003", f"{JT}.manualSelector", NOT_SUPPORTED),
            ("CJ-005", f"{JT}.parallelism", INVALID),
            ("CJ-005", f"{JT}.completions", REQUIRED),
            ("CJ-001", f"{RULES}[0].succeededIndexes", TOO_LONG),
            ("CJ-005", RESTART, REQUIRED),
        ]
    )
