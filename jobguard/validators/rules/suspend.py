"""Suspend semantics the API server does not enforce (NE-001..NE-009).

NE-001 and NE-002 are on by default; configuration turns the others on. Informational ones
default to `warn`. docs/RULES.md, "Suspend semantics (NE)".
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from jobguard.validators.context import JobContext, Operation
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.lifecycle import COMPLETE, FAILED, Transition
from jobguard.validators.rules.jobs import scheduling_directives_changed


def check_suspend_update(
    ctx: JobContext, params: Mapping[str, Mapping[str, Any]]
) -> list[FieldError]:
    """NE rules on CREATE/UPDATE of `jobs`. `params` holds each rule's configured parameters."""
    errors: list[FieldError] = []
    new, old, t = ctx.new_state, ctx.old_state, ctx.transition
    if old is not None and Transition.SUSPENDED in t and old.finished:
        errors.append(forbidden("NE-001", "spec.suspend", "a finished Job cannot be suspended"))
    if (
        old is not None
        and Transition.RESUMED in t
        and ctx.new.spec.active_deadline_seconds is not None
    ):
        errors.append(
            forbidden(
                "NE-005",
                "spec.activeDeadlineSeconds",
                "activeDeadlineSeconds measures time since the last resume and restarts now",
            )
        )
    if old is not None and Transition.SUSPENDED in t and old.active > 0:
        errors.append(
            forbidden(
                "NE-006",
                "spec.suspend",
                f"suspending deletes the Job's {old.active} active pods; they do not count "
                "towards completions",
            )
        )
    suspend_changed = (
        Transition.RESUMED in t
        or Transition.SUSPENDED in t
        or (ctx.operation is Operation.CREATE and not new.suspend)
    )
    if suspend_changed and not _requester_listed(ctx, params.get("NE-007", {})):
        errors.append(
            forbidden(
                "NE-007",
                "spec.suspend",
                f"user {ctx.requester.username!r} may not change spec.suspend",
            )
        )
    if (
        old is not None
        and old.suspend
        and old.started
        and not ctx.semantics.mutable_scheduling_directives_for_suspended_jobs
        and _scheduling_changed(ctx)
    ):
        errors.append(
            forbidden(
                "NE-009",
                "spec.template",
                "scheduling directives of a Job that has already run become mutable only "
                "from Kubernetes 1.36 (KEP-5440)",
            )
        )
    return errors


def _scheduling_changed(ctx: JobContext) -> bool:
    assert ctx.old_raw is not None
    return scheduling_directives_changed(ctx.old_raw, ctx.new_raw)


def _requester_listed(ctx: JobContext, params: Mapping[str, Any]) -> bool:
    user = ctx.requester
    users = params.get("users") or []
    groups = params.get("groups") or []
    if any(fnmatch.fnmatchcase(user.username, u) for u in users):
        return True
    return any(g in groups for g in user.groups)


def check_suspend_status(ctx: JobContext) -> list[FieldError]:
    """NE rules on UPDATE of `jobs/status`."""
    assert ctx.old_state is not None
    errors: list[FieldError] = []
    new, old, t = ctx.new_state, ctx.old_state, ctx.transition
    if old.has_suspended_condition and new.suspended_condition_count != 1:
        errors.append(
            forbidden(
                "NE-002",
                "status.conditions",
                "the Suspended condition must be kept (set to False on resume), exactly once",
            )
        )
    if Transition.SUSPENDED_CONDITION_SET in t and new.active > 0:
        errors.append(
            forbidden(
                "NE-003",
                "status.conditions",
                "Suspended=True may be set only after all active pods have terminated",
            )
        )
    resuming = Transition.SUSPENDED_CONDITION_CLEARED in t
    start_set_or_changed = Transition.STARTED in t or Transition.START_TIME_RESET in t
    if start_set_or_changed and new.suspend and not resuming:
        errors.append(
            forbidden(
                "NE-004",
                "status.startTime",
                "startTime is set when the Job is resumed, not while it is suspended",
            )
        )
    newly_terminal = [
        name
        for name, was, now in (
            (COMPLETE, old.complete, new.complete),
            (FAILED, old.failed, new.failed),
        )
        if now and not was
    ]
    if newly_terminal and new.suspended_true:
        errors.append(
            forbidden(
                "NE-008",
                "status.conditions",
                f"cannot add the {newly_terminal[0]}=True condition while Suspended=True",
            )
        )
    return errors
