"""What holds for a stored Job or CronJob on its own (`validators.judge_at_rest`, what `jobguard
audit` reports): no false positives on objects the API server prepared or older controllers
wrote, and exactly the single-object rules on objects that break them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators import (
    AT_REST,
    NOT_AT_REST,
    RULES,
    Enforcement,
    Settings,
    Verdict,
    judge_at_rest,
)
from tests.builders import LATER, START, cond, cronjob, enable, job, with_status
from tests.test_policy import BASE, config_text, queued_job, settings_from

SCM, COMPLETE = cond("SuccessCriteriaMet"), cond("Complete")
SUSPENDED, NOT_SUSPENDED = cond("Suspended"), cond("Suspended", "False")


def found(verdict: Verdict) -> list[tuple[str, str, str]]:
    assert verdict.judged
    return [(v.error.rule, v.error.path, v.enforcement.value) for v in verdict.violations]


def listed(obj: dict[str, Any]) -> dict[str, Any]:
    """As a list item: the API server leaves out apiVersion and kind."""
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def stored_job() -> dict[str, Any]:
    """A finished Job as `kubectl get job -o json` shows it after the API server prepared it."""
    obj = with_status(
        job("pi", namespace="batch"),
        startTime=START,
        completionTime=LATER,
        succeeded=1,
        ready=0,
        terminating=0,
        uncountedTerminatedPods={},
        conditions=[
            {**SCM, "reason": "CompletionsReached", "lastTransitionTime": LATER},
            {**COMPLETE, "reason": "CompletionsReached", "lastTransitionTime": LATER},
        ],
    )
    obj["metadata"].update(
        resourceVersion="4242",
        generation=1,
        labels=dict(obj["spec"]["template"]["metadata"]["labels"]),
        managedFields=[
            {"manager": "kubectl-create", "operation": "Update", "apiVersion": "batch/v1"}
        ],
    )
    obj["spec"]["manualSelector"] = False
    pod = obj["spec"]["template"]["spec"]
    pod.update(
        dnsPolicy="ClusterFirst",
        schedulerName="default-scheduler",
        securityContext={},
        terminationGracePeriodSeconds=30,
    )
    pod["containers"][0].update(
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
        imagePullPolicy="Always",
    )
    return listed(obj)


def test_every_rule_is_classified_once() -> None:
    ids = {rule.id for rule in RULES}
    assert set(AT_REST) | set(NOT_AT_REST) == ids
    assert not set(AT_REST) & set(NOT_AT_REST)
    assert all(AT_REST.values()) and all(NOT_AT_REST.values())


@pytest.mark.parametrize("version", ["1.33", "1.35", "1.36"])
def test_a_job_the_api_server_prepared_is_clean(version: str) -> None:
    verdict = judge_at_rest("Job", stored_job(), enable("NE-00*", version=version))
    assert found(verdict) == []
    assert verdict.name == "pi"


def test_a_legacy_job_without_prefixed_labels_is_clean() -> None:
    obj = stored_job()
    uid = obj["metadata"]["uid"]
    obj["spec"]["template"]["metadata"]["labels"] = {"controller-uid": uid, "job-name": "pi"}
    obj["spec"]["selector"] = {"matchLabels": {"controller-uid": uid}}
    assert found(judge_at_rest("Job", obj, Settings())) == []


@pytest.mark.parametrize(
    "status",
    [
        # Finished by Job controllers before 1.31: no SuccessCriteriaMet / FailureTarget, and
        # pods still terminating when the terminal condition was added.
        {"startTime": START, "completionTime": LATER, "succeeded": 1, "conditions": [COMPLETE]},
        {"startTime": START, "failed": 7, "terminating": 2, "conditions": [cond("Failed")]},
        # Suspended after it ran: startTime stays until the Job is resumed.
        {"startTime": START, "active": 0, "conditions": [SUSPENDED]},
        # Resumed: the Suspended condition flipped to False.
        {"startTime": LATER, "active": 1, "conditions": [NOT_SUSPENDED]},
    ],
    ids=["complete-before-1.31", "failed-before-1.31", "suspended-after-run", "resumed"],
)
def test_lawful_states_are_clean_with_every_rule_on(status: dict[str, Any]) -> None:
    suspended = status.get("conditions") == [SUSPENDED]
    obj = listed(with_status(job(suspend=suspended), **status))
    assert found(judge_at_rest("Job", obj, enable("NE-00*"))) == []


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"active": -1}, [("ST-001", "status.active", "deny")]),
        ({"active": 1, "ready": 2}, [("ST-040", "status.ready", "deny")]),
        (
            {
                "startTime": START,
                "completionTime": LATER,
                "conditions": [SCM, COMPLETE, cond("Failed")],
            },
            [("ST-038", "status.conditions", "deny"), ("ST-007", "status.conditions", "deny")],
        ),
        (
            {"startTime": START, "completionTime": LATER, "conditions": [SCM]},
            [("ST-036", "status.completionTime", "deny")],
        ),
        (
            {"completionTime": LATER, "conditions": [SCM, COMPLETE]},
            [("ST-031", "status.startTime", "deny")],
        ),
        (
            {"startTime": LATER, "completionTime": START, "conditions": [SCM, COMPLETE]},
            [("ST-034", "status.completionTime", "deny")],
        ),
        (
            {"startTime": START, "conditions": [SUSPENDED, NOT_SUSPENDED]},
            [("NE-002", "status.conditions", "deny")],
        ),
    ],
    ids=[
        "negative-active",
        "ready-above-active",
        "complete-and-failed",
        "completion-time-alone",
        "finished-without-start",
        "completed-before-start",
        "suspended-twice",
    ],
)
def test_status_invariants_of_one_object(
    status: dict[str, Any], expected: list[tuple[str, str, str]]
) -> None:
    assert found(judge_at_rest("Job", listed(with_status(job(), **status)), Settings())) == expected


def test_transition_rules_are_not_judged_at_rest() -> None:
    # A finished Job with spec.suspend true breaks NE-001 only as an act of suspending.
    obj = listed(
        with_status(
            job(suspend=True), startTime=START, completionTime=LATER, conditions=[SCM, COMPLETE]
        )
    )
    assert found(judge_at_rest("Job", obj, enable("NE-00*"))) == []


def test_ne008_terminal_while_suspended_when_enabled() -> None:
    obj = listed(
        with_status(
            job(suspend=True),
            startTime=START,
            completionTime=LATER,
            conditions=[SUSPENDED, SCM, COMPLETE],
        )
    )
    assert found(judge_at_rest("Job", obj, Settings())) == []
    assert found(judge_at_rest("Job", obj, enable("NE-008"))) == [
        ("NE-008", "status.conditions", "deny")
    ]


def test_spec_checks_as_the_next_update_would_run_them() -> None:
    obj = stored_job()
    obj["spec"]["parallelism"] = -1  # stored by a server that did not check it
    assert found(judge_at_rest("Job", obj, Settings())) == [("JS-001", "spec.parallelism", "deny")]
    broken = stored_job()
    broken["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "other"
    assert found(judge_at_rest("Job", broken, Settings())) == [
        ("TM-005", "spec.template.metadata.labels[batch.kubernetes.io/job-name]", "deny")
    ]


# --- suspend policies at rest ------------------------------------------------------------------


def test_a_matched_job_running_without_ever_being_suspended_bypassed_the_queue() -> None:
    obj = listed(with_status(queued_job(), startTime=START, active=1))
    verdict = judge_at_rest("Job", obj, BASE)
    assert found(verdict) == [("SUS-001", "spec.suspend", "deny")]
    assert verdict.violations[0].error.detail == (
        "a job matched by policy 'queued' is not suspended and never was (no Suspended "
        "condition): it started without the queue; only kueue-system:kueue-controller-manager "
        "may create matched jobs running"
    )


@pytest.mark.parametrize(
    ("obj", "settings"),
    [
        (with_status(queued_job(), startTime=START, active=1, conditions=[NOT_SUSPENDED]), BASE),
        (queued_job(suspend=True), BASE),
        (
            with_status(
                queued_job(), startTime=START, completionTime=LATER, conditions=[SCM, COMPLETE]
            ),
            BASE,
        ),
        (with_status(queued_job(namespace="default"), startTime=START, active=1), BASE),
        (with_status(queued_job(queue=None), startTime=START, active=1), BASE),
        (
            with_status(queued_job(namespace="kube-system"), startTime=START, active=1),
            settings_from(config_text(all_namespaces=True)),
        ),
        (with_status(queued_job(), startTime=START, active=1), Settings()),
    ],
    ids=[
        "resumed-by-the-queue",
        "suspended",
        "finished",
        "other-namespace",
        "no-queue-label",
        "exempt-namespace",
        "no-policies",
    ],
)
def test_sus001_at_rest_only_for_matched_jobs_that_never_were_suspended(
    obj: dict[str, Any], settings: Settings
) -> None:
    assert found(judge_at_rest("Job", listed(obj), settings)) == []


def test_configured_enforcement_applies_at_rest() -> None:
    obj = listed(with_status(queued_job(), startTime=START, active=1))
    warn = settings_from(config_text(rules={"SUS-001": {"enforcement": "warn"}}))
    assert found(judge_at_rest("Job", obj, warn)) == [("SUS-001", "spec.suspend", "warn")]
    off = settings_from(config_text(rules={"SUS-001": {"enabled": False}}))
    assert found(judge_at_rest("Job", obj, off)) == []
    assert judge_at_rest("Job", obj, warn).allowed


# --- CronJobs and unreadable objects ------------------------------------------------------------


def test_cronjobs_at_rest() -> None:
    assert found(judge_at_rest("CronJob", listed(cronjob()), Settings())) == []
    selector = cronjob(selector={"matchLabels": {"a": "b"}})
    assert found(judge_at_rest("CronJob", listed(selector), Settings())) == [
        ("CJ-003", "spec.jobTemplate.spec.selector", "deny")
    ]


def test_an_unreadable_object_is_dec001() -> None:
    obj = listed(job())
    obj["spec"]["completions"] = "ten"
    verdict = judge_at_rest("Job", obj, Settings())
    assert found(verdict) == [("DEC-001", "spec.completions", "deny")]
    assert verdict.decode_error is not None
    assert found(judge_at_rest("Job", "not an object", Settings())) == [
        ("DEC-001", "object", "deny")
    ]


def test_the_judgement_leaves_the_object_alone() -> None:
    obj = stored_job()
    before = copy.deepcopy(obj)
    judge_at_rest("Job", obj, BASE)
    assert obj == before


def test_every_enforcement_is_resolved_by_the_configuration() -> None:
    obj = listed(with_status(job(), active=-1))
    dryrun = Settings(enforcement=Enforcement.DRYRUN)
    assert found(judge_at_rest("Job", obj, dryrun)) == [("ST-001", "status.active", "dryrun")]
