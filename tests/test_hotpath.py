"""The request path's shortcuts agree with the general code they stand in for.

Lifecycle states read the conditions in one pass and transitions are combined as ints; a
changed nodeSelector is answered without normalising; policy exemptions and options are kept
per settings, namespace and requester; NE-007's error is not made while the rule is off; a
manifest's placeholder uid is made without a UUID object.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from jobguard.validators import Operation, Request, Requester, Settings, evaluate
from jobguard.validators.catalog import Enforcement
from jobguard.validators.lifecycle import (
    COMPLETE,
    FAILED,
    FAILURE_TARGET,
    SUCCESS_CRITERIA_MET,
    SUSPENDED,
    JobState,
    Transition,
    _directives_changed,
    classify,
)
from jobguard.validators.model import Job, PodTemplateSpec, decode_job
from jobguard.validators.podtemplate import scheduling_directives_changed
from jobguard.validators.policy import Exemptions, PolicySet
from jobguard.validators.prepare import apply_job_defaults, placeholder_uid
from jobguard.validators.settings import RuleOverride
from tests.builders import START, job

# Keys semantic equality reads as quantities or times, beside plain ones, and values that are
# equal only semantically ("1Gi" and "1024Mi", two spellings of one instant).
MAP_KEYS = ["zone", "pool", "sizeLimit", "creationTimestamp", "lastTransitionTime"]
MAP_VALUES = ["a", "b", "", "1Gi", "1024Mi", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00"]
string_maps = st.none() | st.dictionaries(
    st.sampled_from(MAP_KEYS), st.sampled_from(MAP_VALUES), max_size=3
)
tolerations = st.none() | st.lists(
    st.fixed_dictionaries({"key": st.sampled_from(["gpu", "spot"]), "operator": st.just("Exists")}),
    max_size=2,
)


def _template(node_selector: Any, labels: Any, toleration_list: Any) -> PodTemplateSpec:
    raw: dict[str, Any] = {"metadata": {}, "spec": {}}
    if labels is not None:
        raw["metadata"]["labels"] = labels
    if node_selector is not None:
        raw["spec"]["nodeSelector"] = node_selector
    if toleration_list is not None:
        raw["spec"]["tolerations"] = toleration_list
    return msgspec.convert(raw, PodTemplateSpec, strict=True)


@settings(max_examples=300, deadline=None)
@given(string_maps, string_maps, string_maps, string_maps, tolerations, tolerations)
def test_directives_shortcut_agrees_with_the_semantic_comparison(
    old_selector: Any,
    new_selector: Any,
    old_labels: Any,
    new_labels: Any,
    old_tolerations: Any,
    new_tolerations: Any,
) -> None:
    old = _template(old_selector, old_labels, old_tolerations)
    new = _template(new_selector, new_labels, new_tolerations)
    assert _directives_changed(old, new) is scheduling_directives_changed(old, new)
    assert _directives_changed(None, new) is scheduling_directives_changed(None, new)


def test_directives_shortcut_examples() -> None:
    plain = _template({"zone": "a"}, None, None)
    assert _directives_changed(plain, _template({"zone": "b"}, None, None)) is True
    assert _directives_changed(plain, _template({"zone": "a"}, None, None)) is False
    # Equal only semantically: the general comparison decides.
    quantity = _template({"sizeLimit": "1Gi"}, None, None)
    assert _directives_changed(quantity, _template({"sizeLimit": "1024Mi"}, None, None)) is False
    assert _directives_changed(_template({}, None, None), _template(None, None, None)) is False


def _reference_state(job_: Job) -> tuple[Any, ...]:
    """JobState.of as it was written before the one-pass reading (sets and lists)."""
    status = job_.status
    conditions = status.conditions or ()
    true_types = {c.type for c in conditions if c.status == "True"}
    suspended = [c.status for c in conditions if c.type == SUSPENDED]
    return (
        bool(job_.spec.suspend),
        SUSPENDED in true_types,
        "False" in suspended,
        len(suspended) > 0,
        len(suspended),
        status.start_time is not None,
        status.active or 0,
        status.ready,
        status.terminating,
        SUCCESS_CRITERIA_MET in true_types,
        FAILURE_TARGET in true_types,
        COMPLETE in true_types,
        FAILED in true_types,
        job_.spec.active_deadline_seconds is not None,
    )


def _reference_transition(old: JobState, new: JobState, old_job: Job, new_job: Job) -> Transition:
    """classify as it was written with Flag operators."""
    result = Transition.NONE
    if old.suspend and not new.suspend:
        result |= Transition.RESUMED
    if not old.suspend and new.suspend:
        result |= Transition.SUSPENDED
    if not old.started and new.started:
        result |= Transition.STARTED
    if old_job.status.start_time is not None and new_job.status.start_time != (
        old_job.status.start_time
    ):
        result |= Transition.START_TIME_RESET
    if new.suspended_true and not old.suspended_true:
        result |= Transition.SUSPENDED_CONDITION_SET
    if old.suspended_true and new.suspended_false:
        result |= Transition.SUSPENDED_CONDITION_CLEARED
    if new.complete and not old.complete:
        result |= Transition.COMPLETED
    if new.failed and not old.failed:
        result |= Transition.FAILED
    if scheduling_directives_changed(old_job.spec.template, new_job.spec.template):
        result |= Transition.SCHEDULING_DIRECTIVES_CHANGED
    return result


conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                [SUSPENDED, COMPLETE, FAILED, SUCCESS_CRITERIA_MET, FAILURE_TARGET, "Other"]
            ),
            "status": st.sampled_from(["True", "False", "Unknown"]),
        }
    ),
    max_size=4,
)


@st.composite
def jobs(draw: st.DrawFn) -> Job:
    obj = job(suspend=draw(st.booleans()))
    status: dict[str, Any] = {"conditions": draw(conditions)}
    for counter in ("active", "ready", "terminating"):
        if draw(st.booleans()):
            status[counter] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        status["startTime"] = draw(
            st.sampled_from([START, "2026-01-01T10:00:00+00:00", "2026-01-02T00:00:00Z"])
        )
    if draw(st.booleans()):
        obj["spec"]["activeDeadlineSeconds"] = 60
    selector = draw(string_maps)
    if selector is not None:
        obj["spec"]["template"]["spec"]["nodeSelector"] = selector
    obj["status"] = status
    return apply_job_defaults(decode_job(obj))


@settings(max_examples=300, deadline=None)
@given(jobs(), jobs())
def test_states_and_transitions_agree_with_the_reference(old_job: Job, new_job: Job) -> None:
    old, new = JobState.of(old_job), JobState.of(new_job)
    assert (
        old.suspend,
        old.suspended_true,
        old.suspended_false,
        old.has_suspended_condition,
        old.suspended_condition_count,
        old.started,
        old.active,
        old.ready,
        old.terminating,
        old.success_criteria_met,
        old.failure_target,
        old.complete,
        old.failed,
        old.has_active_deadline,
    ) == _reference_state(old_job)
    assert classify(old, new, old_job, new_job) == _reference_transition(old, new, old_job, new_job)


def _resume(namespace: str, user: str, s: Settings) -> list[str]:
    old = job(suspend=True)
    old["metadata"]["namespace"] = namespace
    new = job(suspend=False)
    new["metadata"]["namespace"] = namespace
    request = Request("Job", Operation.UPDATE, new, old, requester=Requester(user))
    return [v.error.rule for v in evaluate(request, s).violations]


NE_007_ON = (("NE-007", RuleOverride(enabled=True, params={"users": ["kueue"]})),)


def test_exemptions_follow_the_settings_they_were_kept_for() -> None:
    exempting = Settings(
        overrides=NE_007_ON, policies=PolicySet(exemptions=Exemptions(namespaces=("team-*",)))
    )
    judging = Settings(overrides=NE_007_ON)
    for _ in range(2):  # alternating: each settings' answer, never the other's kept one
        assert _resume("team-a", "alice", exempting) == []
        assert _resume("team-a", "alice", judging) == ["NE-007"]
    assert _resume("other", "alice", exempting) == ["NE-007"]
    assert _resume("team-a", "kueue", judging) == []


def test_ne_007_fires_only_when_on() -> None:
    assert _resume("default", "alice", Settings()) == []
    assert _resume("default", "alice", Settings(overrides=NE_007_ON)) == ["NE-007"]
    warn = (("NE-007", RuleOverride(enabled=True, enforcement=Enforcement.WARN)),)
    assert _resume("default", "alice", Settings(overrides=warn)) == ["NE-007"]


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_placeholder_uid_is_uuid5(namespace: str, name: str) -> None:
    """The placeholder uid, made from the digest directly, is the standard library's uuid5."""
    expected = str(uuid.uuid5(uuid.NAMESPACE_URL, f"jobguard:{namespace}/{name}"))
    assert placeholder_uid(namespace, name) == expected


def test_placeholder_uid_examples() -> None:
    # `jobguard check` prints it in TM-005's messages: the same text from release to release.
    assert placeholder_uid("default", "pi") == "17cf9cc2-a6a9-5438-ad8b-b9d02517fa7d"
    for namespace, name in [("", ""), ("ns", "ü" * 300), ("a/b", "x:y")]:
        made = uuid.UUID(placeholder_uid(namespace, name))
        assert (made.version, made.variant) == (5, uuid.RFC_4122)
