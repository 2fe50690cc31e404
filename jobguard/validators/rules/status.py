"""Invariants of UPDATE of `jobs/status` (ST-001..ST-041): docs/RULES.md, "Status invariants (ST)".

Most checks run only when the fields they read change: `StatusOptions` (strategy.py) says
which, so a Job that already breaks a rule can still get unrelated status updates.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from jobguard.validators.errors import (
    MAX_LISTED,
    ErrorType,
    FieldError,
    MoreErrors,
    immutable,
    invalid,
    invalid_omitted,
    non_negative,
    required,
)
from jobguard.validators.intervals import IndexParseError, count_indexes, first_overlap
from jobguard.validators.lifecycle import COMPLETE, FAILED, FAILURE_TARGET
from jobguard.validators.model import INDEXED, Job, Time, as_sent
from jobguard.validators.strategy import StatusOptions


def _text(time: Time | None) -> str | None:
    """A timestamp as sent, for messages."""
    return None if time is None else time.text


def _always_on_counters(job: Job, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    status = job.status
    for rule, name, value in (
        ("ST-001", "active", status.active),
        ("ST-002", "succeeded", status.succeeded),
        ("ST-003", "failed", status.failed),
        ("ST-004", "ready", status.ready),
        ("ST-005", "terminating", status.terminating),
    ):
        if value is not None and value < 0:
            errors.append(non_negative(rule, f"{path}.{name}", value))
    uncounted = status.uncounted_terminated_pods
    if uncounted is not None:
        seen: set[str] = set()
        for list_name, uids in (("succeeded", uncounted.succeeded), ("failed", uncounted.failed)):
            if uids:
                errors += _uid_errors(uids, f"{path}.uncountedTerminatedPods.{list_name}", seen)
    return errors


def _uid_errors(uids: list[str], path: str, seen: set[str]) -> list[FieldError]:
    """ST-006 for one UID list, in order: empty UIDs, and UIDs already `seen` (which grows).

    At most MAX_LISTED are listed; the rest are counted in one MoreErrors. Only C-level set
    operations run over a list with no error (every valid status) or past the listed ones,
    and no set but `seen` is built unless the list has errors.
    """
    if "" not in uids and seen.isdisjoint(uids):
        size = len(seen)
        seen.update(uids)
        if len(seen) == size + len(uids):
            return []
        seen.difference_update(uids)  # repeated within the list: the loop below finds where
    errors: list[FieldError] = []
    for i, uid in enumerate(uids):
        if len(errors) == MAX_LISTED:
            unlisted = _count_unlisted_errors(islice(uids, i, None), seen)
            if unlisted:
                errors.append(MoreErrors("ST-006", path, ErrorType.TOO_MANY, count=unlisted))
            return errors
        if uid == "":
            errors.append(invalid("ST-006", f"{path}[{i}]", uid, "must not be empty"))
        elif uid in seen:
            errors.append(FieldError("ST-006", f"{path}[{i}]", ErrorType.DUPLICATE, "", uid))
        else:
            seen.add(uid)
    return errors


def _count_unlisted_errors(rest: Iterable[str], seen: set[str]) -> int:
    """The ST-006 errors of `rest` counted, not listed (a loop: a set of the rest would cost
    16 MiB more at the body cap)."""
    count = 0
    for uid in rest:
        if uid == "" or uid in seen:
            count += 1
        else:
            seen.add(uid)
    return count


def _index_errors(job: Job, path: str, opts: StatusOptions, old: Job | None) -> list[FieldError]:
    errors: list[FieldError] = []
    spec, status = job.spec, job.status
    completions = spec.completions
    completed = status.completed_indexes
    failed = status.failed_indexes
    # The stored lists: what the new ones replace (parsing skips what both begin with).
    stored_completed = old.status.completed_indexes if old is not None else None
    stored_failed = old.status.failed_indexes if old is not None else None
    if opts.reject_invalid_completed_indexes and completions is not None and completed is not None:
        try:
            count_indexes(completed, completions, stored_completed)
        except IndexParseError as exc:
            errors.append(
                invalid(
                    "ST-023",
                    f"{path}.completedIndexes",
                    completed,
                    f"error parsing completedIndexes: {exc}",
                )
            )
    if (
        opts.reject_invalid_failed_indexes
        and completions is not None
        and spec.backoff_limit_per_index is not None
        and failed is not None
    ):
        try:
            count_indexes(failed, completions, stored_failed)
        except IndexParseError as exc:
            errors.append(
                invalid(
                    "ST-024", f"{path}.failedIndexes", failed, f"error parsing failedIndexes: {exc}"
                )
            )
    if (
        opts.reject_completed_indexes_for_non_indexed
        and completed
        and spec.completion_mode != INDEXED
    ):
        errors.append(
            invalid(
                "ST-025",
                f"{path}.completedIndexes",
                completed,
                "cannot set non-empty completedIndexes when non-indexed completion mode",
            )
        )
    if (
        opts.reject_failed_indexes_without_backoff_limit_per_index
        and failed is not None
        and spec.backoff_limit_per_index is None
    ):
        errors.append(
            invalid(
                "ST-026",
                f"{path}.failedIndexes",
                failed,
                "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
            )
        )
    if (
        opts.reject_failed_indexes_overlapping_completed
        and completions is not None
        and failed
        and completed
    ):
        overlap = first_overlap(completed, failed, completions, stored_completed)
        if overlap is not None:
            errors.append(
                invalid(
                    "ST-027",
                    f"{path}.failedIndexes",
                    failed,
                    f"failedIndexes and completedIndexes overlap at index: {overlap}",
                )
            )
    return errors


def validate_job_status(
    job: Job, old: Job | None, path: str, opts: StatusOptions
) -> list[FieldError]:
    """The new status on its own (upstream validateJobStatus), in upstream order; `opts.state`
    is the Job's lifecycle state. `old`, the stored Job of an update, only saves work (index
    lists are parsed from where they differ from the stored ones)."""
    state = opts.state
    status = job.status
    errors = _always_on_counters(job, path)

    if opts.reject_complete_with_failed and state.complete and state.failed:
        errors.append(
            invalid_omitted(
                "ST-038",
                f"{path}.conditions",
                "cannot set Complete=True and Failed=true conditions",
            )
        )
    if opts.reject_complete_with_failure_target and state.complete and state.failure_target:
        errors.append(
            invalid_omitted(
                "ST-039",
                f"{path}.conditions",
                "cannot set Complete=True and FailureTarget=true conditions",
            )
        )
    if (
        opts.reject_not_complete_with_completion_time
        and status.completion_time
        and not state.complete
    ):
        errors.append(
            invalid(
                "ST-036",
                f"{path}.completionTime",
                _text(status.completion_time),
                "cannot set completionTime when there is no Complete=True condition",
            )
        )
    if (
        opts.reject_complete_without_completion_time
        and state.complete
        and not status.completion_time
    ):
        errors.append(
            required(
                "ST-037", f"{path}.completionTime", "completionTime is required for Complete jobs"
            )
        )
    if (
        opts.reject_completion_time_before_start_time
        and status.completion_time is not None
        and status.start_time is not None
        and status.completion_time < status.start_time
    ):
        errors.append(
            invalid(
                "ST-034",
                f"{path}.completionTime",
                _text(status.completion_time),
                "must be equal to or after `startTime`",
            )
        )
    if opts.reject_failed_without_failure_target and state.failed and not state.failure_target:
        errors.append(
            invalid_omitted(
                "ST-028",
                f"{path}.conditions",
                "cannot set Failed=True condition without the FailureTarget=true condition",
            )
        )
    if (
        opts.reject_complete_without_success_criteria_met
        and state.complete
        and not state.success_criteria_met
    ):
        errors.append(
            invalid_omitted(
                "ST-029",
                f"{path}.conditions",
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            )
        )
    if opts.reject_finished_with_active_pods and state.finished and state.active > 0:
        errors.append(
            invalid(
                "ST-030", f"{path}.active", state.active, "active>0 is invalid for finished job"
            )
        )
    if opts.reject_finished_without_start_time and state.finished and status.start_time is None:
        errors.append(
            required("ST-031", f"{path}.startTime", "startTime is required for finished job")
        )
    uncounted = status.uncounted_terminated_pods
    if (
        opts.reject_finished_with_uncounted_pods
        and state.finished
        and uncounted is not None
        and (uncounted.succeeded or uncounted.failed)
    ):
        errors.append(
            invalid(
                "ST-032",
                f"{path}.uncountedTerminatedPods",
                as_sent(uncounted),
                "must be empty for finished job",
            )
        )
    errors += _index_errors(job, path, opts, old)
    if opts.reject_finished_with_terminating and state.finished and (state.terminating or 0) > 0:
        errors.append(
            invalid(
                "ST-041",
                f"{path}.terminating",
                state.terminating,
                "terminating>0 is invalid for finished job",
            )
        )
    if (
        opts.reject_more_ready_than_active
        and state.ready is not None
        and state.ready > state.active
    ):
        errors.append(
            invalid(
                "ST-040", f"{path}.ready", state.ready, "cannot set more ready pods than active"
            )
        )
    if state.success_criteria_met and state.failed:
        errors.append(
            invalid_omitted(
                "ST-007",
                f"{path}.conditions",
                "cannot set SuccessCriteriaMet=True and Failed=true conditions",
            )
        )
    if state.success_criteria_met and state.failure_target:
        errors.append(
            invalid_omitted(
                "ST-008",
                f"{path}.conditions",
                "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
            )
        )
    if job.spec.success_policy is not None and state.complete and not state.success_criteria_met:
        errors.append(
            invalid_omitted(
                "ST-009",
                f"{path}.conditions",
                "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
            )
        )
    return errors


def validate_job_status_update(
    new: Job, old: Job, path: str, opts: StatusOptions
) -> list[FieldError]:
    """The status against the old one (upstream validateJobStatusUpdate), in upstream order;
    `opts.state` and `opts.old_state` are the Jobs' lifecycle states."""
    state, old_state = opts.state, opts.old_state
    errors: list[FieldError] = []
    new_status, old_status = new.status, old.status
    if opts.reject_disabling_terminal_condition:
        for condition, was, now in (
            (FAILED, old_state.failed, state.failed),
            (COMPLETE, old_state.complete, state.complete),
            (FAILURE_TARGET, old_state.failure_target, state.failure_target),
        ):
            if was and not now:
                errors.append(
                    invalid_omitted(
                        "ST-022",
                        f"{path}.conditions",
                        f"cannot disable the terminal {condition}=True condition",
                    )
                )
    new_failed, old_failed = new_status.failed or 0, old_status.failed or 0
    if opts.reject_decreasing_failed and new_failed < old_failed:
        errors.append(
            invalid("ST-021", f"{path}.failed", new_failed, "cannot decrease the failed counter")
        )
    new_succeeded, old_succeeded = new_status.succeeded or 0, old_status.succeeded or 0
    if opts.reject_decreasing_succeeded and new_succeeded < old_succeeded:
        errors.append(
            invalid(
                "ST-020",
                f"{path}.succeeded",
                new_succeeded,
                "cannot decrease the succeeded counter",
            )
        )
    if (
        opts.reject_mutating_completion_time
        and new_status.completion_time is not None
        and old_status.completion_time is not None
        and new_status.completion_time != old_status.completion_time
    ):
        errors.append(
            immutable("ST-035", f"{path}.completionTime", _text(new_status.completion_time))
        )
    if (
        opts.reject_start_time_update_for_unsuspended
        and old_status.start_time is not None
        and new_status.start_time != old_status.start_time
        and new.spec.suspend is not True
    ):
        if opts.start_time_update_is_invalid:
            errors.append(
                invalid(
                    "ST-033",
                    f"{path}.startTime",
                    _text(new_status.start_time),
                    "field is immutable for unsuspended job once set",
                )
            )
        else:
            errors.append(
                required(
                    "ST-033", f"{path}.startTime", "startTime cannot be removed for unsuspended job"
                )
            )
    if old_state.success_criteria_met and not state.success_criteria_met:
        errors.append(
            invalid_omitted(
                "ST-010",
                f"{path}.conditions",
                "cannot disable the SuccessCriteriaMet=True condition",
            )
        )
    if old_state.complete and not old_state.success_criteria_met and state.success_criteria_met:
        errors.append(
            invalid_omitted(
                "ST-011",
                f"{path}.conditions",
                "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
            )
        )
    return errors
