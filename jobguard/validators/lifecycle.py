"""The Job lifecycle model shared by rules, options and policy.

A `JobState` is derived from one Job's spec and status the way the Job controller reads them;
a `Transition` says what an UPDATE (old -> new) changes. Rules and options read these rather
than work the facts out again, so "suspended", "started", "finished" and "scheduling directives
changed" mean the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Flag, auto

from jobguard.validators.model import Job, PodTemplateSpec
from jobguard.validators.podtemplate import scheduling_directives_changed
from jobguard.validators.semantic import _QUANTITY_KEYS, _TIMESTAMP_KEYS

SUSPENDED = "Suspended"
COMPLETE = "Complete"
FAILED = "Failed"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"


# Not frozen: two are built for every update, and a frozen dataclass's __init__ costs five times
# a plain one's (an object.__setattr__ per field). Nothing changes a state once built.
@dataclass(slots=True)
class JobState:
    suspend: bool
    """`spec.suspend` (defaulted false)."""
    suspended_true: bool
    """Some `Suspended` condition entry has status True."""
    suspended_false: bool
    """Some `Suspended` condition entry has status False (duplicates are not rejected upstream)."""
    has_suspended_condition: bool
    suspended_condition_count: int
    started: bool
    """`status.startTime` is set."""
    active: int
    ready: int | None
    terminating: int | None
    success_criteria_met: bool
    failure_target: bool
    complete: bool
    failed: bool
    has_active_deadline: bool
    """`spec.activeDeadlineSeconds` is set (the controller measures it from the last resume)."""

    @classmethod
    def of(cls, job: Job) -> JobState:
        status = job.status
        spec = job.spec
        # One pass over the conditions (a handful), no intermediate sets or lists.
        suspended_true = suspended_false = False
        success_criteria_met = failure_target = complete = failed = False
        suspended_count = 0
        for condition in status.conditions or ():
            kind, is_true = condition.type, condition.status == "True"
            if kind == SUSPENDED:
                suspended_count += 1
                if is_true:
                    suspended_true = True
                elif condition.status == "False":
                    suspended_false = True
            elif is_true:
                if kind == COMPLETE:
                    complete = True
                elif kind == FAILED:
                    failed = True
                elif kind == SUCCESS_CRITERIA_MET:
                    success_criteria_met = True
                elif kind == FAILURE_TARGET:
                    failure_target = True
        return cls(
            bool(spec.suspend),
            suspended_true,
            suspended_false,
            suspended_count > 0,
            suspended_count,
            status.start_time is not None,
            status.active or 0,
            status.ready,
            status.terminating,
            success_criteria_met,
            failure_target,
            complete,
            failed,
            spec.active_deadline_seconds is not None,
        )

    @property
    def finished(self) -> bool:
        return self.complete or self.failed

    @property
    def suspended_never_started(self) -> bool:
        """KEP-2926: scheduling directives mutable (gate off, up to v1.35)."""
        return self.suspend and not self.started

    @property
    def safely_suspended(self) -> bool:
        """KEP-5440 predicate P: suspended, never started or fully stopped, no active pods."""
        return self.suspend and (not self.started or self.suspended_true) and self.active == 0


class Transition(Flag):
    """What an UPDATE (old -> new) changes in a Job (several may hold at once)."""

    NONE = 0
    RESUMED = auto()  # spec.suspend true -> false
    SUSPENDED = auto()  # spec.suspend false -> true
    STARTED = auto()  # status.startTime unset -> set
    START_TIME_RESET = auto()  # status.startTime changed or cleared once set
    SUSPENDED_CONDITION_SET = auto()  # Suspended condition became True
    SUSPENDED_CONDITION_CLEARED = auto()  # Suspended condition True -> False
    COMPLETED = auto()  # Complete condition became True
    FAILED = auto()  # Failed condition became True
    SCHEDULING_DIRECTIVES_CHANGED = auto()  # the template's KEP-2926 directives (TM-002)


# The flags as plain ints: classify combines them without Flag's Python-level operators.
_RESUMED = Transition.RESUMED.value
_SUSPENDED = Transition.SUSPENDED.value
_STARTED = Transition.STARTED.value
_START_TIME_RESET = Transition.START_TIME_RESET.value
_SUSPENDED_CONDITION_SET = Transition.SUSPENDED_CONDITION_SET.value
_SUSPENDED_CONDITION_CLEARED = Transition.SUSPENDED_CONDITION_CLEARED.value
_COMPLETED = Transition.COMPLETED.value
_FAILED = Transition.FAILED.value
_SCHEDULING_DIRECTIVES_CHANGED = Transition.SCHEDULING_DIRECTIVES_CHANGED.value


def classify(old: JobState, new: JobState, old_job: Job, new_job: Job) -> Transition:
    """What an UPDATE from `old_job` to `new_job` (lifecycle states `old`, `new`) changes."""
    result = 0
    if old.suspend != new.suspend:
        result |= _RESUMED if old.suspend else _SUSPENDED
    if not old.started and new.started:
        result |= _STARTED
    old_start, new_start = old_job.status.start_time, new_job.status.start_time
    if old_start is not None and new_start != old_start:
        result |= _START_TIME_RESET
    if new.suspended_true and not old.suspended_true:
        result |= _SUSPENDED_CONDITION_SET
    if old.suspended_true and new.suspended_false:
        # Upstream's "resuming": old has Suspended=True, new has a Suspended=False entry.
        result |= _SUSPENDED_CONDITION_CLEARED
    if new.complete and not old.complete:
        result |= _COMPLETED
    if new.failed and not old.failed:
        result |= _FAILED
    if _directives_changed(old_job.spec.template, new_job.spec.template):
        result |= _SCHEDULING_DIRECTIVES_CHANGED
    found = _TRANSITIONS.get(result)
    if found is None:  # Flag's constructor runs in Python: each combination is made once
        found = _TRANSITIONS[result] = Transition(result)
    return found


_TRANSITIONS: dict[int, Transition] = {}
"""Combinations of flags seen (at most 512)."""


# Keys whose string values semantic equality reads as quantities or times.
_READ_AS_VALUES = _QUANTITY_KEYS | _TIMESTAMP_KEYS


def _directives_changed(old: PodTemplateSpec | None, new: PodTemplateSpec | None) -> bool:
    """`scheduling_directives_changed`, answered at once when the nodeSelector differs (what a
    queue controller changes on resume): two string maps without keys semantic equality reads
    as values are semantically equal exactly when they are equal (absent and empty alike)."""
    if old is new:  # a status update: the spec is the stored one
        return False
    old_pod = old.spec if old is not None else None
    new_pod = new.spec if new is not None else None
    old_selector = (old_pod.node_selector if old_pod is not None else None) or {}
    new_selector = (new_pod.node_selector if new_pod is not None else None) or {}
    if (
        old_selector != new_selector
        and _READ_AS_VALUES.isdisjoint(old_selector)
        and _READ_AS_VALUES.isdisjoint(new_selector)
    ):
        return True
    return scheduling_directives_changed(old, new)
