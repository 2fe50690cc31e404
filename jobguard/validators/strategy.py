"""Validation options, built once per request from the old and new Job, the way upstream's
`pkg/registry/batch/job/strategy.go` builds them (`validationOptionsForJob`,
`getStatusValidationOptions`). Rules read these flags and never work them out themselves.

Upstream: `pkg/registry/batch/job/strategy.go` and `pkg/api/pod/util.go`, kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobguard.validators.lifecycle import JobState
from jobguard.validators.model import INDEXED, Job, JobJson
from jobguard.validators.prepare import CONTROLLER_UID_LABEL, JOB_NAME_LABEL
from jobguard.validators.rules.pod_common import PodOptions
from jobguard.validators.rules.pod_util import get_validation_options_from_pod_template
from jobguard.validators.selectors import label_selector_has_invalid_label_value
from jobguard.validators.semantic import normalize
from jobguard.validators.versions import Semantics


# Options are not frozen: built for every request, and a frozen dataclass's __init__ costs five
# times a plain one's (an object.__setattr__ per field). Rules only read them.
@dataclass(slots=True)
class JobOptions:
    """Upstream `JobValidationOptions`, the parts jobguard checks (CREATE and UPDATE of `jobs`)."""

    pod: PodOptions
    """The embedded PodValidationOptions, from the old and the new template
    (`GetValidationOptionsFromPodTemplate`)."""
    require_prefixed_labels: bool
    """TM-005 also wants the batch.kubernetes.io/ job-name and controller-uid labels."""
    allow_mutable_scheduling_directives: bool
    """TM-002: the template's scheduling directives may change."""
    allow_mutable_pod_resources: bool
    """TM-003: the containers' resources may change (KEP-5440)."""
    allow_invalid_label_value_in_selector: bool
    """The Job's selector keeps an invalid value the stored selector (or the stored template's
    affinity selectors) already held."""


@dataclass(frozen=True, slots=True)
class SpecOptions:
    """How the create-style Job spec checks (`validate_job_spec`) read a spec."""

    defaulted: bool
    """The Job defaulter ran (a Job's spec); False for a CronJob's template, which it never
    touches."""
    version: str
    """The release whose words the checks use (names.label_wording)."""


def job_options(
    new: JobJson,
    old: Job | None,
    old_json: JobJson | None,
    old_state: JobState | None,
    semantics: Semantics,
) -> JobOptions:
    """Upstream `validationOptionsForJob`; `old` (its JSON and its lifecycle state) is None on
    CREATE.

    The relaxations of TM-001 are decided here, from the stored Job (TM-004): scheduling
    directives (TM-002) and container resources (TM-003) while it is safely suspended; the
    pod rules' relaxations from the stored template (`pod_util`).
    """
    pod = get_validation_options_from_pod_template(
        new.template, None if old_json is None else old_json.template, semantics.version
    )
    if old is None or old_state is None or old_json is None:
        # A new Job gets the prefixed labels generated; nothing in its template is "changed".
        return JobOptions(
            pod=pod,
            require_prefixed_labels=True,
            allow_mutable_scheduling_directives=False,
            allow_mutable_pod_resources=False,
            allow_invalid_label_value_in_selector=pod.allow_invalid_label_value_in_selector,
        )
    state = old_state
    # MutableSchedulingDirectivesForSuspendedJobs widens KEP-2926's "suspended and never
    # started" to KEP-5440's shouldAllowMutablePodTemplate (predicate P).
    if semantics.mutable_scheduling_directives_for_suspended_jobs:
        scheduling = state.safely_suspended
    else:
        scheduling = state.suspended_never_started
    template = old.spec.template
    labels = (template.metadata.labels if template and template.metadata else None) or {}
    return JobOptions(
        pod=pod,
        # Jobs stored before both prefixed labels existed are not failed for lacking them.
        require_prefixed_labels=JOB_NAME_LABEL in labels and CONTROLLER_UID_LABEL in labels,
        allow_mutable_scheduling_directives=scheduling,
        # MutablePodResourcesForSuspendedJobs: resources follow the same predicate P.
        allow_mutable_pod_resources=(
            semantics.mutable_pod_resources_for_suspended_jobs and state.safely_suspended
        ),
        allow_invalid_label_value_in_selector=(
            pod.allow_invalid_label_value_in_selector
            or label_selector_has_invalid_label_value(old_json.selector)
        ),
    )


@dataclass(slots=True)
class StatusOptions:
    """Upstream `JobStatusValidationOptions`: which status checks an UPDATE of `jobs/status`
    triggers. Most run only when a field they read changes, so a Job that already breaks a
    rule can still get unrelated status updates (and the controller time to catch up)."""

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
    start_time_update_is_invalid: bool
    """Not an upstream option: the version's wording of ST-033 (1.36: Invalid "field is
    immutable ..."; before: Required "startTime cannot be removed ...")."""
    state: JobState
    """Not an upstream option: the new Job's lifecycle state, which the status rules read."""
    old_state: JobState
    """Likewise, the stored Job's."""


_UNCOUNTED_LISTS = ("succeeded", "failed")


def _uncounted_changed(new: Any, old: Any) -> bool:
    """Whether uncountedTerminatedPods changed, from the parts as sent: absent differs from {}
    (upstream compares the pointers, then semantically: nil and empty UID lists are equal).
    Members jobguard does not type (a later Kubernetes version's) are compared too."""
    if new is None or old is None:
        return new is not old
    if not isinstance(new, dict) or not isinstance(old, dict):  # refused when decoded
        return bool(new != old)
    # The UID lists compared as they are (in C, at once when the lengths differ: a list of
    # 250,000 UIDs is never copied).
    for key in _UNCOUNTED_LISTS:
        if (new.get(key) or []) != (old.get(key) or []):
            return True
    rest_new = {k: v for k, v in new.items() if k not in _UNCOUNTED_LISTS}
    rest_old = {k: v for k, v in old.items() if k not in _UNCOUNTED_LISTS}
    return rest_new != rest_old and normalize(rest_new) != normalize(rest_old)


def status_options(
    new: Job,
    old: Job,
    new_state: JobState,
    old_state: JobState,
    semantics: Semantics,
    uncounted: tuple[Any, Any],
) -> StatusOptions:
    """Upstream `getStatusValidationOptions` (the JobManagedBy branch, on in every supported
    version); the states are the Jobs' lifecycle states, `uncounted` the new and the stored
    uncountedTerminatedPods as sent."""
    ns, os_ = new_state, old_state
    spec, status, old_status = new.spec, new.status, old.status
    is_indexed = spec.completion_mode == INDEXED
    finished_changed = ns.finished != os_.finished
    complete_changed = ns.complete != os_.complete
    failed_changed = ns.failed != os_.failed
    failure_target_changed = ns.failure_target != os_.failure_target
    success_criteria_met_changed = ns.success_criteria_met != os_.success_criteria_met
    # completedIndexes is a plain string upstream: absent and "" are the same.
    completed_indexes_changed = (status.completed_indexes or "") != (
        old_status.completed_indexes or ""
    )
    failed_indexes_changed = status.failed_indexes != old_status.failed_indexes
    active_changed = ns.active != os_.active
    start_time_changed = status.start_time != old_status.start_time
    completion_time_changed = status.completion_time != old_status.completion_time
    ready_changed = status.ready != old_status.ready
    terminating_changed = status.terminating != old_status.terminating
    uncounted_changed = _uncounted_changed(*uncounted)
    suspended_with_zero_completions = spec.suspend is True and spec.completions == 0
    resuming = os_.suspended_true and ns.suspended_false
    return StatusOptions(
        # Elastic Indexed Jobs (completions == parallelism) may be scaled down.
        reject_decreasing_succeeded=not is_indexed or spec.completions != spec.parallelism,
        # Counters only grow.
        reject_decreasing_failed=True,
        # Terminal conditions are never taken back.
        reject_disabling_terminal_condition=True,
        # Parsed against spec.completions, which a scale-down may have just lowered.
        reject_invalid_completed_indexes=completed_indexes_changed,
        # Likewise for failedIndexes.
        reject_invalid_failed_indexes=failed_indexes_changed,
        # Only when the Job controller writes completedIndexes.
        reject_completed_indexes_for_non_indexed=completed_indexes_changed,
        # Only when the Job controller writes failedIndexes.
        reject_failed_indexes_without_backoff_limit_per_index=failed_indexes_changed,
        # Either list moving may create the overlap.
        reject_failed_indexes_overlapping_completed=(
            failed_indexes_changed or completed_indexes_changed
        ),
        # Jobs failed before FailureTarget existed keep their status.
        reject_failed_without_failure_target=failed_changed or failed_indexes_changed,
        # Jobs completed before SuccessCriteriaMet existed keep their status.
        reject_complete_without_success_criteria_met=(
            complete_changed or success_criteria_met_changed
        ),
        # Pods may still be counted down in the update that finishes the Job.
        reject_finished_with_active_pods=finished_changed or active_changed,
        # A suspended Job with completions 0 finishes without ever starting (kubernetes#132614).
        reject_finished_without_start_time=(
            (finished_changed or start_time_changed) and not suspended_with_zero_completions
        ),
        # Uncounted pods are flushed before (or as) the Job finishes.
        reject_finished_with_uncounted_pods=finished_changed or uncounted_changed,
        # The controller resets startTime when it resumes a Job (kubernetes#134521).
        reject_start_time_update_for_unsuspended=start_time_changed and not resuming,
        # Only when either time moves.
        reject_completion_time_before_start_time=start_time_changed or completion_time_changed,
        # completionTime, once set, is final.
        reject_mutating_completion_time=True,
        # Only when the Complete condition or completionTime moves.
        reject_not_complete_with_completion_time=complete_changed or completion_time_changed,
        # Likewise, the other way round.
        reject_complete_without_completion_time=complete_changed or completion_time_changed,
        # Only when either terminal condition moves.
        reject_complete_with_failed=complete_changed or failed_changed,
        # Only when Complete or FailureTarget moves.
        reject_complete_with_failure_target=complete_changed or failure_target_changed,
        # ready and active are written together by the controller.
        reject_more_ready_than_active=ready_changed or active_changed,
        # Terminating pods may still be counted down in the update that finishes the Job.
        reject_finished_with_terminating=finished_changed or terminating_changed,
        # The version's wording of ST-033.
        start_time_update_is_invalid=semantics.newest_status_strategy,
        state=new_state,
        old_state=old_state,
    )
