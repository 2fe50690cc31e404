"""Section C: invariants of UPDATE of `jobs/status` (ST-001..ST-041).

Most checks run only when the fields they read change (upstream's "options" derived from the
old and new Job), so a Job that already breaks a rule can still get unrelated status updates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobguard.validators.context import JobContext
from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    immutable,
    invalid,
    invalid_omitted,
    non_negative,
    required,
)
from jobguard.validators.intervals import IndexParseError, count_indexes, first_overlap
from jobguard.validators.lifecycle import COMPLETE, FAILED, FAILURE_TARGET, JobState
from jobguard.validators.model import INDEXED, Job
from jobguard.validators.semantic import normalize

CONDITIONS = "status.conditions"


@dataclass(frozen=True, slots=True)
class StatusOptions:
    """Upstream `getStatusValidationOptions`: which checks this update triggers."""

    reject_decreasing_succeeded: bool
    reject_decreasing_failed: bool
    reject_disabling_terminal_condition: bool
    reject_invalid_completed_indexes: bool
    reject_invalid_failed_indexes: bool
    reject_completed_indexes_for_non_indexed: bool
    reject_failed_indexes_without_backoff_limit_per_index: bool
    reject_failed_indexes_overlapping_completed: bool
    reject_failed_without_failure_target: bool
    reject_complete_without_success_criteria_met: bool
    reject_finished_with_active_pods: bool
    reject_finished_without_start_time: bool
    reject_finished_with_uncounted_pods: bool
    reject_start_time_update_for_unsuspended: bool
    reject_completion_time_before_start_time: bool
    reject_mutating_completion_time: bool
    reject_not_complete_with_completion_time: bool
    reject_complete_without_completion_time: bool
    reject_complete_with_failed: bool
    reject_complete_with_failure_target: bool
    reject_more_ready_than_active: bool
    reject_finished_with_terminating: bool


def _uncounted(raw: dict[str, Any]) -> Any:
    status = raw.get("status")
    value = status.get("uncountedTerminatedPods") if isinstance(status, dict) else None
    # Absent differs from {} here (pointer-aware, as upstream compares pointers).
    return None if value is None else ("set", normalize(value))


def status_options(ctx: JobContext) -> StatusOptions:
    assert ctx.old is not None and ctx.old_state is not None and ctx.old_raw is not None
    new, old = ctx.new, ctx.old
    ns, os_ = ctx.new_state, ctx.old_state
    spec = new.spec
    indexed = spec.completion_mode == INDEXED
    finished_changed = ns.finished != os_.finished
    complete_changed = ns.complete != os_.complete
    failed_changed = ns.failed != os_.failed
    failure_target_changed = ns.failure_target != os_.failure_target
    scm_changed = ns.success_criteria_met != os_.success_criteria_met
    completed_changed = (new.status.completed_indexes or "") != (old.status.completed_indexes or "")
    failed_indexes_changed = new.status.failed_indexes != old.status.failed_indexes
    active_changed = ns.active != os_.active
    ready_changed = new.status.ready != old.status.ready
    terminating_changed = new.status.terminating != old.status.terminating
    start_changed = new.status.start_time != old.status.start_time
    completion_changed = new.status.completion_time != old.status.completion_time
    uncounted_changed = _uncounted(ctx.new_raw) != _uncounted(ctx.old_raw)
    suspended_zero = spec.suspend is True and spec.completions == 0
    resuming = os_.suspended_true and ns.suspended_false
    return StatusOptions(
        reject_decreasing_succeeded=not indexed or spec.completions != spec.parallelism,
        reject_decreasing_failed=True,
        reject_disabling_terminal_condition=True,
        reject_invalid_completed_indexes=completed_changed,
        reject_invalid_failed_indexes=failed_indexes_changed,
        reject_completed_indexes_for_non_indexed=completed_changed,
        reject_failed_indexes_without_backoff_limit_per_index=failed_indexes_changed,
        reject_failed_indexes_overlapping_completed=failed_indexes_changed or completed_changed,
        reject_failed_without_failure_target=failed_changed or failed_indexes_changed,
        reject_complete_without_success_criteria_met=complete_changed or scm_changed,
        reject_finished_with_active_pods=finished_changed or active_changed,
        reject_finished_without_start_time=(finished_changed or start_changed)
        and not suspended_zero,
        reject_finished_with_uncounted_pods=finished_changed or uncounted_changed,
        reject_start_time_update_for_unsuspended=start_changed and not resuming,
        reject_completion_time_before_start_time=start_changed or completion_changed,
        reject_mutating_completion_time=True,
        reject_not_complete_with_completion_time=complete_changed or completion_changed,
        reject_complete_without_completion_time=complete_changed or completion_changed,
        reject_complete_with_failed=complete_changed or failed_changed,
        reject_complete_with_failure_target=complete_changed or failure_target_changed,
        reject_more_ready_than_active=ready_changed or active_changed,
        reject_finished_with_terminating=finished_changed or terminating_changed,
    )


def _raw_status(raw: dict[str, Any], key: str) -> Any:
    status = raw.get("status")
    return status.get(key) if isinstance(status, dict) else None


def _always_on_counters(job: Job) -> list[FieldError]:
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
            errors.append(non_negative(rule, f"status.{name}", value))
    uncounted = status.uncounted_terminated_pods
    if uncounted is not None:
        seen: set[str] = set()
        for list_name, uids in (("succeeded", uncounted.succeeded), ("failed", uncounted.failed)):
            for i, uid in enumerate(uids or ()):
                path = f"status.uncountedTerminatedPods.{list_name}[{i}]"
                if uid == "":
                    errors.append(invalid("ST-006", path, uid, "must not be empty"))
                elif uid in seen:
                    errors.append(FieldError("ST-006", path, ErrorType.DUPLICATE, "", uid))
                else:
                    seen.add(uid)
    return errors


def _index_errors(ctx: JobContext, opts: StatusOptions) -> list[FieldError]:
    errors: list[FieldError] = []
    spec, status = ctx.new.spec, ctx.new.status
    completions = spec.completions
    completed = status.completed_indexes
    failed = status.failed_indexes
    if opts.reject_invalid_completed_indexes and completions is not None and completed is not None:
        try:
            count_indexes(completed, completions)
        except IndexParseError as exc:
            errors.append(
                invalid(
                    "ST-023",
                    "status.completedIndexes",
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
            count_indexes(failed, completions)
        except IndexParseError as exc:
            errors.append(
                invalid(
                    "ST-024", "status.failedIndexes", failed, f"error parsing failedIndexes: {exc}"
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
                "status.completedIndexes",
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
                "status.failedIndexes",
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
        overlap = first_overlap(completed, failed, completions)
        if overlap is not None:
            errors.append(
                invalid(
                    "ST-027",
                    "status.failedIndexes",
                    failed,
                    f"failedIndexes and completedIndexes overlap at index: {overlap}",
                )
            )
    return errors


def check_status(ctx: JobContext) -> list[FieldError]:
    """Every §C check of an UPDATE of `jobs/status`, in upstream order."""
    assert ctx.old is not None and ctx.old_state is not None
    opts = status_options(ctx)
    new, state, old_state = ctx.new, ctx.new_state, ctx.old_state
    status = new.status
    raw = ctx.new_raw
    errors = _always_on_counters(new)

    if opts.reject_complete_with_failed and state.complete and state.failed:
        errors.append(
            invalid_omitted(
                "ST-038", CONDITIONS, "cannot set Complete=True and Failed=true conditions"
            )
        )
    if opts.reject_complete_with_failure_target and state.complete and state.failure_target:
        errors.append(
            invalid_omitted(
                "ST-039", CONDITIONS, "cannot set Complete=True and FailureTarget=true conditions"
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
                "status.completionTime",
                _raw_status(raw, "completionTime"),
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
                "ST-037", "status.completionTime", "completionTime is required for Complete jobs"
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
                "status.completionTime",
                _raw_status(raw, "completionTime"),
                "must be equal to or after `startTime`",
            )
        )
    if opts.reject_failed_without_failure_target and state.failed and not state.failure_target:
        errors.append(
            invalid_omitted(
                "ST-028",
                CONDITIONS,
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
                CONDITIONS,
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            )
        )
    if opts.reject_finished_with_active_pods and state.finished and state.active > 0:
        errors.append(
            invalid("ST-030", "status.active", state.active, "active>0 is invalid for finished job")
        )
    if opts.reject_finished_without_start_time and state.finished and status.start_time is None:
        errors.append(
            required("ST-031", "status.startTime", "startTime is required for finished job")
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
                "status.uncountedTerminatedPods",
                _raw_status(raw, "uncountedTerminatedPods"),
                "must be empty for finished job",
            )
        )
    errors += _index_errors(ctx, opts)
    if opts.reject_finished_with_terminating and state.finished and (state.terminating or 0) > 0:
        errors.append(
            invalid(
                "ST-041",
                "status.terminating",
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
            invalid("ST-040", "status.ready", state.ready, "cannot set more ready pods than active")
        )
    if state.success_criteria_met and state.failed:
        errors.append(
            invalid_omitted(
                "ST-007",
                CONDITIONS,
                "cannot set SuccessCriteriaMet=True and Failed=true conditions",
            )
        )
    if state.success_criteria_met and state.failure_target:
        errors.append(
            invalid_omitted(
                "ST-008",
                CONDITIONS,
                "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
            )
        )
    if new.spec.success_policy is not None and state.complete and not state.success_criteria_met:
        errors.append(
            invalid_omitted(
                "ST-009",
                CONDITIONS,
                "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
            )
        )

    errors += _update_checks(ctx, opts, old_state, state)
    return errors


def _update_checks(
    ctx: JobContext, opts: StatusOptions, old_state: JobState, state: JobState
) -> list[FieldError]:
    assert ctx.old is not None
    errors: list[FieldError] = []
    new_status, old_status = ctx.new.status, ctx.old.status
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
                        CONDITIONS,
                        f"cannot disable the terminal {condition}=True condition",
                    )
                )
    new_failed, old_failed = new_status.failed or 0, old_status.failed or 0
    if opts.reject_decreasing_failed and new_failed < old_failed:
        errors.append(
            invalid("ST-021", "status.failed", new_failed, "cannot decrease the failed counter")
        )
    new_succeeded, old_succeeded = new_status.succeeded or 0, old_status.succeeded or 0
    if opts.reject_decreasing_succeeded and new_succeeded < old_succeeded:
        errors.append(
            invalid(
                "ST-020", "status.succeeded", new_succeeded, "cannot decrease the succeeded counter"
            )
        )
    if (
        opts.reject_mutating_completion_time
        and new_status.completion_time is not None
        and old_status.completion_time is not None
        and new_status.completion_time != old_status.completion_time
    ):
        errors.append(
            immutable("ST-035", "status.completionTime", _raw_status(ctx.new_raw, "completionTime"))
        )
    if (
        opts.reject_start_time_update_for_unsuspended
        and old_status.start_time is not None
        and new_status.start_time != old_status.start_time
        and ctx.new.spec.suspend is not True
    ):
        if ctx.semantics.newest_status_strategy:
            errors.append(
                invalid(
                    "ST-033",
                    "status.startTime",
                    _raw_status(ctx.new_raw, "startTime"),
                    "field is immutable for unsuspended job once set",
                )
            )
        else:
            errors.append(
                required(
                    "ST-033", "status.startTime", "startTime cannot be removed for unsuspended job"
                )
            )
    if old_state.success_criteria_met and not state.success_criteria_met:
        errors.append(
            invalid_omitted(
                "ST-010", CONDITIONS, "cannot disable the SuccessCriteriaMet=True condition"
            )
        )
    if old_state.complete and not old_state.success_criteria_met and state.success_criteria_met:
        errors.append(
            invalid_omitted(
                "ST-011",
                CONDITIONS,
                "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
            )
        )
    return errors
