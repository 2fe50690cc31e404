"""The lifecycle model: JobState and Transition classification."""

from __future__ import annotations

import copy

from jobguard.validators.lifecycle import JobState, Transition, classify
from jobguard.validators.model import Job, decode_job
from jobguard.validators.prepare import apply_job_defaults
from tests.builders import LATER, START, cond, job, with_status


def decoded(obj) -> Job:
    return apply_job_defaults(decode_job(obj))


def state(obj):
    return JobState.of(decoded(obj))


def change(old, new) -> Transition:
    old_job, new_job = decoded(old), decoded(new)
    return classify(JobState.of(old_job), JobState.of(new_job), old_job, new_job)


def test_finished():
    assert not state(job()).finished
    done = with_status(
        job(),
        startTime=START,
        completionTime=LATER,
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    assert state(done).finished
    failed = with_status(job(), conditions=[cond("FailureTarget"), cond("Failed")])
    assert state(failed).finished


def test_suspended_never_started_and_predicate_p():
    fresh = state(job(suspend=True))
    assert fresh.suspended_never_started and fresh.safely_suspended
    ran = state(
        with_status(job(suspend=True), startTime=START, active=0, conditions=[cond("Suspended")])
    )
    assert not ran.suspended_never_started and ran.safely_suspended
    stopping = state(with_status(job(suspend=True), startTime=START, active=2))
    assert not stopping.safely_suspended


def test_active_deadline():
    assert state(job(activeDeadlineSeconds=60)).has_active_deadline
    assert not state(job()).has_active_deadline


def test_resume_and_suspend():
    suspended = job(suspend=True)
    running = with_status(job(), startTime=START, active=1)
    assert Transition.RESUMED in change(suspended, job())
    t = change(running, with_status(job(suspend=True), startTime=START, active=1))
    assert Transition.SUSPENDED in t and Transition.RESUMED not in t
    assert change(job(), job()) == Transition.NONE


def test_status_transitions():
    old = with_status(job(suspend=True), startTime=START, conditions=[cond("Suspended")])
    new = with_status(job(), startTime=LATER, conditions=[cond("Suspended", "False")])
    t = change(old, new)
    assert Transition.SUSPENDED_CONDITION_CLEARED in t
    assert Transition.START_TIME_RESET in t
    assert Transition.RESUMED in t
    finished = with_status(
        job(),
        startTime=START,
        completionTime=LATER,
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    t = change(job(), finished)
    assert {Transition.STARTED, Transition.COMPLETED} <= {
        f for f in Transition if f in t and f.value
    }
    assert Transition.FAILED not in t
    failed = with_status(job(), conditions=[cond("FailureTarget"), cond("Failed")])
    assert change(job(), failed) == Transition.FAILED


def test_scheduling_directives_changed():
    old = job(suspend=True)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    assert change(old, new) == Transition.SCHEDULING_DIRECTIVES_CHANGED
    # Pod affinity is not a scheduling directive of KEP-2926; the image is not either.
    other = copy.deepcopy(old)
    other["spec"]["template"]["spec"]["affinity"] = {"podAffinity": {"x": 1}}
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
    assert change(old, other) == Transition.NONE
    # Semantically equal directives (an empty map against none) are no change.
    empty = copy.deepcopy(old)
    empty["spec"]["template"]["spec"]["nodeSelector"] = {}
    assert change(old, empty) == Transition.NONE


def _at(template: dict, path: tuple[str, ...], value: object) -> dict:
    out = copy.deepcopy(template)
    target = out
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return out


def _get(template: dict, path: tuple[str, ...]) -> object:
    value: object = template
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def test_every_user_reads_the_one_definition_of_scheduling_directives():
    """SCHEDULING_DIRECTIVES drives the overlay (TM-002), the lifecycle's change detection
    (NE-009, SUS-004), the exported policies' CEL and the rule reference."""
    from pathlib import Path

    from jobguard.validators.podtemplate import (
        SCHEDULING_DIRECTIVES,
        SCHEDULING_DIRECTIVES_TEXT,
        overlay_scheduling_directives,
    )
    from jobguard.validators.vap import _scheduling_changed

    assert [d.path for d in SCHEDULING_DIRECTIVES] == [
        ("metadata", "labels"),
        ("metadata", "annotations"),
        ("spec", "nodeSelector"),
        ("spec", "tolerations"),
        ("spec", "schedulingGates"),
        ("spec", "affinity", "nodeAffinity"),
    ]
    old = job(suspend=True)
    old["spec"]["template"]["spec"]["affinity"] = {"podAffinity": {"x": 1}}
    cel = _scheduling_changed()
    for directive in SCHEDULING_DIRECTIVES:
        value: object = (
            [{"name": "example.com/gate"}] if directive.is_list else {"example.com/k": "v"}
        )
        if directive.path[-1] == "tolerations":
            value = [{"key": "k", "operator": "Exists"}]
        if directive.path[-1] == "nodeAffinity":
            term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            value = {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        new = copy.deepcopy(old)
        new["spec"]["template"] = _at(new["spec"]["template"], directive.path, value)
        assert change(old, new) == Transition.SCHEDULING_DIRECTIVES_CHANGED, directive
        overlay = overlay_scheduling_directives(old["spec"]["template"], new["spec"]["template"])
        assert _get(overlay, directive.path) == value
        assert overlay["spec"]["affinity"]["podAffinity"] == {"x": 1}
        assert ".".join(f"?{key}" for key in directive.path) in cel
    root = Path(__file__).resolve().parent.parent
    assert f"({SCHEDULING_DIRECTIVES_TEXT})" in (root / "README.md").read_text(encoding="utf-8")
    assert f"({SCHEDULING_DIRECTIVES_TEXT})" in (root / "docs" / "RULES.md").read_text(
        encoding="utf-8"
    )
