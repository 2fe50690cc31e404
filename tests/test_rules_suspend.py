"""Section D: suspend semantics the API server does not enforce (NE-001..NE-009).

Each rule is off by default (upstream accepts the request), fires as Forbidden at its path once
enabled, and NE-004/5/6/9 default to `warn` enforcement.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators import (
    RULES_BY_ID,
    Enforcement,
    Operation,
    Request,
    Requester,
    RuleOverride,
    Settings,
    Verdict,
    evaluate,
)
from tests.builders import (
    LATER,
    START,
    causes,
    cond,
    create,
    enable,
    job,
    messages,
    settings,
    status_update,
    update,
    with_status,
)
from tests.cases import read_update

FORBIDDEN = "FieldValueForbidden"
KUEUE = "system:serviceaccount:kueue-system:kueue"

SCM = cond("SuccessCriteriaMet")
COMPLETE = cond("Complete")
SUSPENDED = cond("Suspended")
NOT_SUSPENDED = cond("Suspended", "False")

RUNNING = with_status(job(), startTime=START, active=2)
IDLE_RUNNING = with_status(job(), startTime=START, active=0)
DONE = with_status(
    job(), startTime=START, completionTime=LATER, conditions=[SCM, COMPLETE], succeeded=1
)
FAILED_JOB = with_status(
    job(), startTime=START, failed=7, conditions=[cond("FailureTarget"), cond("Failed")]
)
NEVER_STARTED_SUSPENDED = job(suspend=True)
# Ran, was suspended, all pods gone: the controller set Suspended=True.
SUSPENDED_AFTER_RUN = with_status(
    job(suspend=True), startTime=START, active=0, conditions=[SUSPENDED]
)


def with_spec(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"].update(spec)
    return out


def with_pod_spec(obj: dict[str, Any], **pod_spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"]["template"]["spec"].update(pod_spec)
    return out


def found(verdict: Verdict) -> list[tuple[str, str, str, Enforcement]]:
    """(rule, path, reason, enforcement) of every unique violation."""
    assert verdict.decode_error is None
    return [
        (v.error.rule, v.error.path, v.error.type.reason, v.enforcement) for v in verdict.unique()
    ]


@pytest.mark.parametrize("rule", [f"NE-00{i}" for i in range(3, 10)])
def test_ne_rules_are_policy_only_and_off_by_default(rule):
    assert RULES_BY_ID[rule].upstream is False
    assert Settings().enabled(rule) is False
    assert enable(rule).enabled(rule) is True


@pytest.mark.parametrize("rule", ["NE-001", "NE-002"])
def test_ne001_ne002_are_policy_rules_on_by_default(rule):
    assert RULES_BY_ID[rule].upstream is False
    assert Settings().enabled(rule) is True
    disabled = Settings(overrides=((rule, RuleOverride(enabled=False)),))
    assert disabled.enabled(rule) is False


@pytest.mark.parametrize(
    ("rule", "enforcement"),
    [
        ("NE-001", Enforcement.DENY),
        ("NE-002", Enforcement.DENY),
        ("NE-003", Enforcement.DENY),
        ("NE-004", Enforcement.WARN),
        ("NE-005", Enforcement.WARN),
        ("NE-006", Enforcement.WARN),
        ("NE-007", Enforcement.DENY),
        ("NE-008", Enforcement.DENY),
        ("NE-009", Enforcement.WARN),
    ],
)
def test_ne_default_enforcement_when_enabled(rule, enforcement):
    assert enable(rule).rule(rule).enforcement is enforcement
    assert enable(rule, enforcement=Enforcement.DENY).rule(rule).enforcement is Enforcement.DENY


# --- NE-001 a finished Job cannot be suspended -------------------------------------------------


@pytest.mark.parametrize("old", [DONE, FAILED_JOB], ids=["complete", "failed"])
def test_ne001_suspending_finished_job_allowed_when_disabled(old):
    disabled = settings(NE_001=RuleOverride(enabled=False))
    verdict = update(with_spec(old, suspend=True), old, disabled)
    assert causes(verdict) == []
    assert verdict.allowed


@pytest.mark.parametrize("old", [DONE, FAILED_JOB], ids=["complete", "failed"])
def test_ne001_suspending_finished_job_denied_when_enabled(old):
    verdict = update(with_spec(old, suspend=True), old, enable("NE-001"))
    assert causes(verdict) == [("NE-001", "spec.suspend", FORBIDDEN)]
    assert messages(verdict) == ["spec.suspend: Forbidden: a finished Job cannot be suspended"]
    assert not verdict.allowed


def test_ne001_suspending_running_job_accepted():
    verdict = update(with_spec(IDLE_RUNNING, suspend=True), IDLE_RUNNING, enable("NE-001"))
    assert causes(verdict) == []


def test_ne001_other_updates_of_finished_job_accepted():
    new = copy.deepcopy(DONE)
    new["metadata"]["labels"] = {"team": "a"}
    assert causes(update(new, DONE, enable("NE-001"))) == []


# --- NE-002 Suspended condition flipped to False, never removed or duplicated -------------------


def test_ne002_removing_suspended_condition_allowed_when_disabled():
    new = with_status(SUSPENDED_AFTER_RUN, conditions=[])
    verdict = status_update(new, SUSPENDED_AFTER_RUN, settings(NE_002=RuleOverride(enabled=False)))
    assert causes(verdict) == []
    assert verdict.allowed


@pytest.mark.parametrize(
    "new_conditions",
    [
        pytest.param([], id="removed"),
        pytest.param([SUSPENDED, SUSPENDED], id="duplicated"),
        pytest.param([NOT_SUSPENDED, SUSPENDED], id="false-added-beside-true"),
    ],
)
def test_ne002_suspended_condition_must_stay_exactly_once(new_conditions):
    new = with_status(SUSPENDED_AFTER_RUN, conditions=new_conditions)
    verdict = status_update(new, SUSPENDED_AFTER_RUN, enable("NE-002"))
    assert causes(verdict) == [("NE-002", "status.conditions", FORBIDDEN)]
    assert not verdict.allowed


def test_ne002_flipping_to_false_on_resume_accepted():
    # The spec is already resumed, the Job never started; the controller flips the condition.
    new, old = read_update("cases/ne/flip-suspended-condition.json")
    assert old == with_status(job(), conditions=[SUSPENDED])
    assert new == with_status(old, conditions=[NOT_SUSPENDED], startTime=START, active=1)
    assert causes(status_update(new, old, enable("NE-002"))) == []


def test_ne002_job_without_suspended_condition_unaffected():
    new = with_status(RUNNING, ready=1)
    assert causes(status_update(new, RUNNING, enable("NE-002"))) == []


# --- NE-003 Suspended=True only once no pods are active ----------------------------------------

SUSPENDING = with_status(job(suspend=True), startTime=START, active=2)


def test_ne003_suspended_true_with_active_pods_allowed_by_default():
    new = with_status(SUSPENDING, conditions=[SUSPENDED])
    assert causes(status_update(new, SUSPENDING)) == []


def test_ne003_suspended_true_with_active_pods_denied_when_enabled():
    new = with_status(SUSPENDING, conditions=[SUSPENDED])
    verdict = status_update(new, SUSPENDING, enable("NE-003"))
    assert causes(verdict) == [("NE-003", "status.conditions", FORBIDDEN)]
    assert messages(verdict) == [
        "status.conditions: Forbidden: Suspended=True may be set only after all active pods "
        "have terminated"
    ]
    assert not verdict.allowed


def test_ne003_suspended_true_after_pods_gone_accepted():
    new = with_status(SUSPENDING, conditions=[SUSPENDED], active=0)
    assert causes(status_update(new, SUSPENDING, enable("NE-003"))) == []


def test_ne003_unrelated_update_while_already_suspended_with_active_pods_accepted():
    # Only setting the condition is judged; it was True before this update.
    old = with_status(SUSPENDING, conditions=[SUSPENDED])
    assert causes(status_update(with_status(old, active=1), old, enable("NE-003"))) == []


# --- NE-004 startTime not set while suspended (warn) --------------------------------------------


def test_ne004_start_time_while_suspended_allowed_by_default():
    new = with_status(NEVER_STARTED_SUSPENDED, startTime=START)
    verdict = status_update(new, NEVER_STARTED_SUSPENDED)
    assert causes(verdict) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(
            NEVER_STARTED_SUSPENDED,
            with_status(NEVER_STARTED_SUSPENDED, startTime=START),
            id="set",
        ),
        pytest.param(
            SUSPENDED_AFTER_RUN, with_status(SUSPENDED_AFTER_RUN, startTime=LATER), id="changed"
        ),
    ],
)
def test_ne004_start_time_while_suspended_warns(old, new):
    verdict = status_update(new, old, enable("NE-004"))
    assert found(verdict) == [("NE-004", "status.startTime", FORBIDDEN, Enforcement.WARN)]
    assert verdict.allowed
    assert verdict.denials == []
    assert [v.error.rule for v in verdict.unique(Enforcement.WARN)] == ["NE-004"]


def test_ne004_denies_with_deny_enforcement():
    new = with_status(NEVER_STARTED_SUSPENDED, startTime=START)
    verdict = status_update(
        new, NEVER_STARTED_SUSPENDED, enable("NE-004", enforcement=Enforcement.DENY)
    )
    assert found(verdict) == [("NE-004", "status.startTime", FORBIDDEN, Enforcement.DENY)]
    assert not verdict.allowed
    assert messages(verdict) == [
        "status.startTime: Forbidden: startTime is set when the Job is resumed, not while it is "
        "suspended"
    ]


def test_ne004_start_time_on_unsuspended_job_accepted():
    assert causes(status_update(RUNNING, job(), enable("NE-004"))) == []


def test_ne004_start_time_in_the_resuming_update_accepted():
    # Suspended flips True -> False in the same update that resets startTime.
    new = with_status(SUSPENDED_AFTER_RUN, startTime=LATER, conditions=[NOT_SUSPENDED])
    verdict = status_update(new, SUSPENDED_AFTER_RUN, enable("NE-004"))
    assert causes(verdict) == []


# --- NE-005 activeDeadlineSeconds restarts on resume (warn) -----------------------------------

SUSPENDED_WITH_DEADLINE = with_status(
    job(suspend=True, activeDeadlineSeconds=600), startTime=START, conditions=[SUSPENDED]
)


def test_ne005_resume_with_deadline_allowed_by_default():
    new = with_spec(SUSPENDED_WITH_DEADLINE, suspend=False)
    assert causes(update(new, SUSPENDED_WITH_DEADLINE)) == []


def test_ne005_resume_with_deadline_warns():
    new = with_spec(SUSPENDED_WITH_DEADLINE, suspend=False)
    verdict = update(new, SUSPENDED_WITH_DEADLINE, enable("NE-005"))
    assert found(verdict) == [("NE-005", "spec.activeDeadlineSeconds", FORBIDDEN, Enforcement.WARN)]
    assert verdict.allowed


def test_ne005_denies_with_deny_enforcement():
    new = with_spec(SUSPENDED_WITH_DEADLINE, suspend=False)
    verdict = update(new, SUSPENDED_WITH_DEADLINE, enable("NE-005", enforcement=Enforcement.DENY))
    assert causes(verdict) == [("NE-005", "spec.activeDeadlineSeconds", FORBIDDEN)]
    assert not verdict.allowed


def test_ne005_resume_without_deadline_accepted():
    new = with_spec(SUSPENDED_AFTER_RUN, suspend=False)
    assert causes(update(new, SUSPENDED_AFTER_RUN, enable("NE-005"))) == []


def test_ne005_suspending_with_deadline_accepted():
    old = with_status(job(activeDeadlineSeconds=600), startTime=START, active=0)
    assert causes(update(with_spec(old, suspend=True), old, enable("NE-005"))) == []


# --- NE-006 suspending deletes active pods (warn) -----------------------------------------------


def test_ne006_suspending_with_active_pods_allowed_by_default():
    assert causes(update(with_spec(RUNNING, suspend=True), RUNNING)) == []


def test_ne006_suspending_with_active_pods_warns():
    new, old = read_update("cases/ne/suspend-running-job.json")
    assert (old, new) == (RUNNING, with_spec(RUNNING, suspend=True))
    verdict = update(new, old, enable("NE-006"))
    assert found(verdict) == [("NE-006", "spec.suspend", FORBIDDEN, Enforcement.WARN)]
    assert verdict.allowed
    assert messages(verdict) == [
        "spec.suspend: Forbidden: suspending deletes the Job's 2 active pods; they do not count "
        "towards completions"
    ]


def test_ne006_denies_with_deny_enforcement():
    verdict = update(
        with_spec(RUNNING, suspend=True), RUNNING, enable("NE-006", enforcement=Enforcement.DENY)
    )
    assert causes(verdict) == [("NE-006", "spec.suspend", FORBIDDEN)]
    assert not verdict.allowed


def test_ne006_suspending_without_active_pods_accepted():
    verdict = update(with_spec(IDLE_RUNNING, suspend=True), IDLE_RUNNING, enable("NE-006"))
    assert causes(verdict) == []


# --- NE-007 only configured requesters may change spec.suspend ---------------------------------


def kueue_only(**params: Any) -> Settings:
    return enable("NE-007", **(params or {"users": [KUEUE]}))


def test_ne007_anyone_may_resume_by_default():
    new = with_spec(NEVER_STARTED_SUSPENDED, suspend=False)
    assert causes(update(new, NEVER_STARTED_SUSPENDED, user="alice")) == []


@pytest.mark.parametrize(
    ("old", "suspend"),
    [(NEVER_STARTED_SUSPENDED, False), (IDLE_RUNNING, True)],
    ids=["resume", "suspend"],
)
def test_ne007_unlisted_user_cannot_change_suspend(old, suspend):
    verdict = update(with_spec(old, suspend=suspend), old, kueue_only(), user="alice")
    assert causes(verdict) == [("NE-007", "spec.suspend", FORBIDDEN)]
    assert messages(verdict) == [
        "spec.suspend: Forbidden: user 'alice' may not change spec.suspend"
    ]
    assert not verdict.allowed


@pytest.mark.parametrize(
    ("old", "suspend"),
    [(NEVER_STARTED_SUSPENDED, False), (IDLE_RUNNING, True)],
    ids=["resume", "suspend"],
)
def test_ne007_listed_user_may_change_suspend(old, suspend):
    verdict = update(with_spec(old, suspend=suspend), old, kueue_only(), user=KUEUE)
    assert causes(verdict) == []


def test_ne007_user_patterns():
    s = kueue_only(users=["system:serviceaccount:kueue-system:*"])
    new = with_spec(NEVER_STARTED_SUSPENDED, suspend=False)
    assert causes(update(new, NEVER_STARTED_SUSPENDED, s, user=KUEUE)) == []
    assert causes(
        update(new, NEVER_STARTED_SUSPENDED, s, user="system:serviceaccount:other:kueue")
    ) == [("NE-007", "spec.suspend", FORBIDDEN)]


@pytest.mark.parametrize(("groups", "allowed"), [(("kueue-admins",), True), (("devs",), False)])
def test_ne007_groups(groups, allowed):
    new = with_spec(NEVER_STARTED_SUSPENDED, suspend=False)
    request = Request(
        "Job",
        Operation.UPDATE,
        new,
        NEVER_STARTED_SUSPENDED,
        requester=Requester("bob", groups),
    )
    verdict = evaluate(request, enable("NE-007", groups=["kueue-admins"]))
    assert verdict.allowed is allowed
    assert causes(verdict) == ([] if allowed else [("NE-007", "spec.suspend", FORBIDDEN)])


def test_ne007_other_spec_changes_by_unlisted_user_accepted():
    new = with_spec(IDLE_RUNNING, parallelism=3)
    assert causes(update(new, IDLE_RUNNING, kueue_only(), user="alice")) == []


def test_ne007_create_suspended_by_anyone_accepted():
    assert causes(create(job(suspend=True), kueue_only(), user="alice")) == []


def test_ne007_create_is_not_a_change():
    # NE-007 judges changes of spec.suspend; whether a new Job starts suspended is SUS-001's
    # business (a plain `kubectl create job` by anyone is not refused).
    assert causes(create(job(), kueue_only(), user="alice")) == []
    assert causes(create(job(suspend=False), kueue_only(), user="alice")) == []
    assert causes(create(job(), kueue_only(), user=KUEUE)) == []


def test_ne007_not_applied_to_status_updates():
    new = with_status(SUSPENDED_AFTER_RUN, active=0, succeeded=0)
    assert causes(status_update(new, SUSPENDED_AFTER_RUN, kueue_only())) == []


# --- NE-008 no terminal condition while Suspended=True -----------------------------------------


def completed_while(old: dict[str, Any], suspended: dict[str, str]) -> dict[str, Any]:
    return with_status(
        old, conditions=[suspended, SCM, COMPLETE], completionTime=LATER, succeeded=1
    )


def test_ne008_complete_while_suspended_allowed_by_default():
    new = completed_while(SUSPENDED_AFTER_RUN, SUSPENDED)
    assert causes(status_update(new, SUSPENDED_AFTER_RUN)) == []


def test_ne008_complete_while_suspended_denied_when_enabled():
    new = completed_while(SUSPENDED_AFTER_RUN, SUSPENDED)
    verdict = status_update(new, SUSPENDED_AFTER_RUN, enable("NE-008"))
    assert causes(verdict) == [("NE-008", "status.conditions", FORBIDDEN)]
    assert messages(verdict) == [
        "status.conditions: Forbidden: cannot add the Complete=True condition while Suspended=True"
    ]
    assert not verdict.allowed


def test_ne008_failed_while_suspended_denied_when_enabled():
    old = with_status(SUSPENDED_AFTER_RUN, conditions=[SUSPENDED, cond("FailureTarget")])
    new = with_status(old, conditions=[SUSPENDED, cond("FailureTarget"), cond("Failed")])
    verdict = status_update(new, old, enable("NE-008"))
    assert causes(verdict) == [("NE-008", "status.conditions", FORBIDDEN)]
    assert messages(verdict) == [
        "status.conditions: Forbidden: cannot add the Failed=True condition while Suspended=True"
    ]


def test_ne008_complete_after_resume_accepted():
    new = completed_while(SUSPENDED_AFTER_RUN, NOT_SUSPENDED)
    assert causes(status_update(new, SUSPENDED_AFTER_RUN, enable("NE-008"))) == []


def test_ne008_already_complete_job_unaffected():
    old = with_status(DONE, conditions=[SUSPENDED, SCM, COMPLETE])
    assert causes(status_update(with_status(old, succeeded=2), old, enable("NE-008"))) == []


# --- NE-009 scheduling directives of a Job that already ran (warn) ------------------------------

NODE_SELECTOR = {"nodeSelector": {"zone": "a"}}


def test_ne009_off_by_default_only_upstream_tm001_reported():
    new = with_pod_spec(SUSPENDED_AFTER_RUN, **NODE_SELECTOR)
    verdict = update(new, SUSPENDED_AFTER_RUN)
    assert causes(verdict) == [("TM-001", "spec.template", "FieldValueInvalid")]


def test_ne009_warns_beside_upstream_denial_on_135():
    new = with_pod_spec(SUSPENDED_AFTER_RUN, **NODE_SELECTOR)
    verdict = update(new, SUSPENDED_AFTER_RUN, enable("NE-009"))
    assert found(verdict) == [
        ("TM-001", "spec.template", "FieldValueInvalid", Enforcement.DENY),
        ("NE-009", "spec.template", FORBIDDEN, Enforcement.WARN),
    ]


def test_ne009_warn_only_when_tm001_switched_off():
    s = settings(NE_009=RuleOverride(True), TM_001=RuleOverride(False))
    new = with_pod_spec(SUSPENDED_AFTER_RUN, **NODE_SELECTOR)
    verdict = update(new, SUSPENDED_AFTER_RUN, s)
    assert found(verdict) == [("NE-009", "spec.template", FORBIDDEN, Enforcement.WARN)]
    assert verdict.allowed


def test_ne009_denies_with_deny_enforcement():
    s = settings(NE_009=RuleOverride(True, Enforcement.DENY), TM_001=RuleOverride(False))
    new = with_pod_spec(SUSPENDED_AFTER_RUN, **NODE_SELECTOR)
    verdict = update(new, SUSPENDED_AFTER_RUN, s)
    assert causes(verdict) == [("NE-009", "spec.template", FORBIDDEN)]
    assert not verdict.allowed


def test_ne009_silent_on_136_where_the_change_is_allowed():
    new = with_pod_spec(SUSPENDED_AFTER_RUN, **NODE_SELECTOR)
    verdict = update(new, SUSPENDED_AFTER_RUN, enable("NE-009", version="1.36"))
    assert causes(verdict) == []


def test_ne009_never_started_suspended_job_accepted_on_135():
    new = with_pod_spec(NEVER_STARTED_SUSPENDED, **NODE_SELECTOR)
    assert causes(update(new, NEVER_STARTED_SUSPENDED, enable("NE-009"))) == []


def test_ne009_non_scheduling_change_not_reported():
    s = settings(NE_009=RuleOverride(True), TM_001=RuleOverride(False))
    new = copy.deepcopy(SUSPENDED_AFTER_RUN)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    assert causes(update(new, SUSPENDED_AFTER_RUN, s)) == []
