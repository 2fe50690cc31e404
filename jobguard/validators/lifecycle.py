"""The Job lifecycle model shared by rules, policy and CI checks.

A `JobState` is derived from one Job's spec and status the way the Job controller reads them;
a `Transition` classifies what an old -> new change does to that state. Rules read these rather
than raw dicts, so "suspended", "started" and "finished" mean the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, Flag, auto

from jobguard.validators.model import INDEXED, JOB_CONTROLLER, Job

SUSPENDED = "Suspended"
COMPLETE = "Complete"
FAILED = "Failed"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"


class Phase(Enum):
    """A one-word summary of a Job's state, the way `kubectl get` users think of it."""

    PENDING = "Pending"  # not suspended, never started yet
    SUSPENDED = "Suspended"  # spec.suspend true, not finished
    RUNNING = "Running"  # started, not suspended, not finished
    COMPLETE = "Complete"
    FAILED = "Failed"


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
    indexed: bool
    managed_by: str | None

    @classmethod
    def of(cls, job: Job) -> JobState:
        true_types: set[str] = set()
        suspended_false = False
        suspended_count = 0
        for condition in job.status.conditions or ():
            if condition.status == "True":
                true_types.add(condition.type)
            if condition.type == SUSPENDED:
                suspended_count += 1
                suspended_false = suspended_false or condition.status == "False"
        status = job.status
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
            indexed=job.spec.completion_mode == INDEXED,
            managed_by=job.spec.managed_by,
        )

    @property
    def never_started(self) -> bool:
        return not self.started

    @property
    def finished(self) -> bool:
        return self.complete or self.failed

    @property
    def running(self) -> bool:
        return self.started and not self.suspend and not self.finished

    @property
    def managed_externally(self) -> bool:
        """Reconciled by another controller (`spec.managedBy`), not the built-in one."""
        return self.managed_by is not None and self.managed_by != JOB_CONTROLLER

    @property
    def phase(self) -> Phase:
        if self.complete:
            return Phase.COMPLETE
        if self.failed:
            return Phase.FAILED
        if self.suspend:
            return Phase.SUSPENDED
        return Phase.RUNNING if self.started else Phase.PENDING

    @property
    def suspended_never_started(self) -> bool:
        """KEP-2926: scheduling directives mutable (gate off, up to v1.35)."""
        return self.suspend and not self.started

    @property
    def safely_suspended(self) -> bool:
        """KEP-5440 predicate P: suspended, never started or fully stopped, no active pods."""
        return self.suspend and (not self.started or self.suspended_true) and self.active == 0


class Transition(Flag):
    """What an old -> new change does to a Job (several may hold at once)."""

    NONE = 0
    CREATED_SUSPENDED = auto()
    CREATED_UNSUSPENDED = auto()
    RESUMED = auto()  # spec.suspend true -> false
    SUSPENDED = auto()  # spec.suspend false -> true
    RESUSPENDED_AFTER_START = auto()  # suspended again after it had started
    STARTED = auto()  # status.startTime unset -> set
    START_TIME_RESET = auto()  # status.startTime changed or cleared once set
    SUSPENDED_CONDITION_SET = auto()  # Suspended condition became True
    SUSPENDED_CONDITION_CLEARED = auto()  # Suspended condition True -> False
    SUSPENDED_CONDITION_REMOVED = auto()  # a Suspended condition entry disappeared
    SUCCESS_CRITERIA_MET = auto()
    FAILURE_TARGET = auto()
    COMPLETED = auto()
    FAILED = auto()
    FINISHED = auto()
    MANAGED_BY_CHANGED = auto()


def classify(
    old: JobState | None, new: JobState, old_job: Job | None = None, new_job: Job | None = None
) -> Transition:
    """Classify an old -> new change; `old` None means CREATE."""
    if old is None:
        return Transition.CREATED_SUSPENDED if new.suspend else Transition.CREATED_UNSUSPENDED
    result = Transition.NONE
    if old.suspend and not new.suspend:
        result |= Transition.RESUMED
    if not old.suspend and new.suspend:
        result |= Transition.SUSPENDED
        if old.started:
            result |= Transition.RESUSPENDED_AFTER_START
    if not old.started and new.started:
        result |= Transition.STARTED
    if old_job is not None and new_job is not None:
        old_start, new_start = old_job.status.start_time, new_job.status.start_time
        if old_start is not None and new_start != old_start:
            result |= Transition.START_TIME_RESET
    if new.suspended_true and not old.suspended_true:
        result |= Transition.SUSPENDED_CONDITION_SET
    if old.suspended_true and new.suspended_false:
        # Upstream's "resuming": old has Suspended=True, new has a Suspended=False entry.
        result |= Transition.SUSPENDED_CONDITION_CLEARED
    if new.suspended_condition_count < old.suspended_condition_count:
        result |= Transition.SUSPENDED_CONDITION_REMOVED
    if new.success_criteria_met and not old.success_criteria_met:
        result |= Transition.SUCCESS_CRITERIA_MET
    if new.failure_target and not old.failure_target:
        result |= Transition.FAILURE_TARGET
    if new.complete and not old.complete:
        result |= Transition.COMPLETED
    if new.failed and not old.failed:
        result |= Transition.FAILED
    if new.finished and not old.finished:
        result |= Transition.FINISHED
    if new.managed_by != old.managed_by:
        result |= Transition.MANAGED_BY_CHANGED
    return result
