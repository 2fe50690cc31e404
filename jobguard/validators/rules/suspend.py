"""Suspend semantics the API server does not enforce (NE-001..NE-009).

They read the lifecycle model: the old and new `JobState` and the update's `Transition`.
NE-001 and NE-002 are on by default, the others off; informational ones default to `warn`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobguard.validators.context import Requester
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.globs import glob_match
from jobguard.validators.lifecycle import COMPLETE, FAILED, JobState, Transition
from jobguard.validators.versions import NE009_MESSAGE, Semantics


@dataclass(frozen=True, slots=True)
class SuspendOptions:
    """What the NE rules need besides the Job, resolved once per request."""

    username: str
    """Named in NE-007's message."""
    may_change_suspend: bool
    """NE-007: the requester is among the rule's configured users or groups. NE-007 judges
    changes (UPDATE of `jobs`); whether a new Job starts suspended is SUS-001's business."""
    scheduling_directives_mutable_after_start: bool
    """NE-009: the version lets a suspended Job that has run change its directives (KEP-5440)."""
    ne007_enabled: bool = True
    """NE-007 is on: when the configuration turns it off (its default), its error, which the
    answer would drop, is not made."""


def suspend_options(
    requester: Requester,
    params: Mapping[str, Mapping[str, Any]],
    semantics: Semantics,
    ne007_enabled: bool = True,
) -> SuspendOptions:
    """`params` holds each rule's configured parameters."""
    return SuspendOptions(
        username=requester.username,
        may_change_suspend=_requester_listed(requester, params.get("NE-007", {})),
        scheduling_directives_mutable_after_start=(
            semantics.mutable_scheduling_directives_for_suspended_jobs
        ),
        ne007_enabled=ne007_enabled,
    )


def _requester_listed(requester: Requester, params: Mapping[str, Any]) -> bool:
    users = params.get("users") or []
    groups = params.get("groups") or []
    if any(glob_match(requester.username, u) for u in users):
        return True
    return any(g in groups for g in requester.groups)


# Transition's flags as ints: a Flag's `in` runs in Python, a test of the value's bits in C.
_RESUMED = Transition.RESUMED.value
_SUSPENDED = Transition.SUSPENDED.value
_STARTED_OR_RESET = Transition.STARTED.value | Transition.START_TIME_RESET.value
_SUSPENDED_CONDITION_SET = Transition.SUSPENDED_CONDITION_SET.value
_SUSPENDED_CONDITION_CLEARED = Transition.SUSPENDED_CONDITION_CLEARED.value
_COMPLETED = Transition.COMPLETED.value
_FAILED = Transition.FAILED.value
_SCHEDULING_DIRECTIVES_CHANGED = Transition.SCHEDULING_DIRECTIVES_CHANGED.value


NE002_DETAIL = "the Suspended condition must be kept (set to False on resume), exactly once"
"""NE-002's message, also given for a stored Job (`at_rest`)."""


# Not frozen: built for every UPDATE (see strategy.JobOptions). Rules only read it.
@dataclass(slots=True)
class SuspendUpdateOptions:
    """What check_suspend_update reads besides the two states: what the update changes, and
    the requester's options."""

    change: Transition
    requester: SuspendOptions


def _ne007(path: str, opts: SuspendOptions) -> FieldError:
    return forbidden(
        "NE-007", f"{path}.suspend", f"user {opts.username!r} may not change spec.suspend"
    )


def check_suspend_update(
    new: JobState, old: JobState, path: str, options: SuspendUpdateOptions
) -> list[FieldError]:
    """NE rules on UPDATE of `jobs`, on the Jobs' lifecycle states."""
    errors: list[FieldError] = []
    bits = options.change.value
    opts = options.requester
    if bits & _SUSPENDED and old.finished:
        errors.append(forbidden("NE-001", f"{path}.suspend", "a finished Job cannot be suspended"))
    if bits & _RESUMED and new.has_active_deadline:
        errors.append(
            forbidden(
                "NE-005",
                f"{path}.activeDeadlineSeconds",
                "activeDeadlineSeconds measures time since the last resume and restarts now",
            )
        )
    if bits & _SUSPENDED and old.active > 0:
        errors.append(
            forbidden(
                "NE-006",
                f"{path}.suspend",
                f"suspending deletes the Job's {old.active} active pods; they do not count "
                "towards completions",
            )
        )
    if bits & (_RESUMED | _SUSPENDED) and opts.ne007_enabled and not opts.may_change_suspend:
        errors.append(_ne007(path, opts))
    if (
        old.suspend
        and old.started
        and not opts.scheduling_directives_mutable_after_start
        and bits & _SCHEDULING_DIRECTIVES_CHANGED
    ):
        errors.append(
            forbidden(
                "NE-009",
                f"{path}.template",
                NE009_MESSAGE,
            )
        )
    return errors


def check_suspend_status(
    new: JobState, old: JobState, path: str, change: Transition
) -> list[FieldError]:
    """NE rules on UPDATE of `jobs/status`, on the Jobs' lifecycle states; the options are
    what the update changes."""
    errors: list[FieldError] = []
    bits = change.value
    if old.has_suspended_condition and new.suspended_condition_count != 1:
        errors.append(forbidden("NE-002", f"{path}.conditions", NE002_DETAIL))
    if bits & _SUSPENDED_CONDITION_SET and new.active > 0:
        errors.append(
            forbidden(
                "NE-003",
                f"{path}.conditions",
                "Suspended=True may be set only after all active pods have terminated",
            )
        )
    resuming = bits & _SUSPENDED_CONDITION_CLEARED
    if bits & _STARTED_OR_RESET and new.suspend and not resuming:
        errors.append(
            forbidden(
                "NE-004",
                f"{path}.startTime",
                "startTime is set when the Job is resumed, not while it is suspended",
            )
        )
    # The first condition that became terminal (Complete before Failed) is named.
    newly_terminal = [
        name for name, flag in ((COMPLETE, _COMPLETED), (FAILED, _FAILED)) if bits & flag
    ]
    if newly_terminal and new.suspended_true:
        errors.append(
            forbidden(
                "NE-008",
                f"{path}.conditions",
                f"cannot add the {newly_terminal[0]}=True condition while Suspended=True",
            )
        )
    return errors
