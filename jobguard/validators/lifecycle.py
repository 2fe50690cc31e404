"""The Job lifecycle model shared by rules, options and policy.

A `JobState` is derived from one Job's spec and status the way the Job controller reads them;
a `Transition` says what an UPDATE (old -> new) changes. Rules and options read these rather
than work the facts out again, so "suspended", "started", "finished" and "scheduling directives
changed" mean the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Flag, auto

from jobguard.validators.model import Job
from jobguard.validators.podtemplate import scheduling_directives_changed

SUSPENDED = "Suspended"
COMPLETE = "Complete"
FAILED = "Failed"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"


@dataclass(frozen=True, slots=True)
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
        conditions = status.conditions or ()
        true_types = {c.type for c in conditions if c.status == "True"}
        suspended = [c.status for c in conditions if c.type == SUSPENDED]
        suspended_false = "False" in suspended
        suspended_count = len(suspended)
        return cls(
            suspend=bool(job.spec.suspend),
            suspended_true=SUSPENDED in true_types,
            suspended_false=suspended_false,
            has_suspended_condition=suspended_count > 0,
            suspended_condition_count=suspended_count,
            started=status.start_time is not None,
            active=status.active or 0,
            ready=status.ready,
            terminating=status.terminating,
            success_criteria_met=SUCCESS_CRITERIA_MET in true_types,
            failure_target=FAILURE_TARGET in true_types,
            complete=COMPLETE in true_types,
            failed=FAILED in true_types,
            has_active_deadline=job.spec.active_deadline_seconds is not None,
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


def classify(old: JobState, new: JobState, old_job: Job, new_job: Job) -> Transition:
    """What an UPDATE from `old_job` to `new_job` (lifecycle states `old`, `new`) changes."""
    result = Transition.NONE
    if old.suspend and not new.suspend:
        result |= Transition.RESUMED
    if not old.suspend and new.suspend:
        result |= Transition.SUSPENDED
    if not old.started and new.started:
        result |= Transition.STARTED
    old_start, new_start = old_job.status.start_time, new_job.status.start_time
    if old_start is not None and new_start != old_start:
        result |= Transition.START_TIME_RESET
    if new.suspended_true and not old.suspended_true:
        result |= Transition.SUSPENDED_CONDITION_SET
    if old.suspended_true and new.suspended_false:
        # Upstream's "resuming": old has Suspended=True, new has a Suspended=False entry.
        result |= Transition.SUSPENDED_CONDITION_CLEARED
    if new.complete and not old.complete:
        result |= Transition.COMPLETED
    if new.failed and not old.failed:
        result |= Transition.FAILED
    if scheduling_directives_changed(old_job.spec.template, new_job.spec.template):
        result |= Transition.SCHEDULING_DIRECTIVES_CHANGED
    return result
