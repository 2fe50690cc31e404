"""Spec fields immutable on UPDATE of `jobs` (IM-001..IM-007): upstream's `ValidateImmutableField`
calls of `ValidateJobSpecUpdate`; docs/RULES.md, "Immutable fields (IM)".

Whole parts compare semantically as sent (`JobJson`); scalars compare as defaulted (`JobSpec`),
so a manifest that omits a defaulted field does not change it.
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.defaults import default_pod_failure_policy
from jobguard.validators.errors import FieldError, immutable, invalid
from jobguard.validators.model import INDEXED, Job, JobJson, JobSpec
from jobguard.validators.semantic import semantic_equal


def check_immutable_part(rule: str, new: Any, old: Any, path: str) -> list[FieldError]:
    """A part that must stay semantically equal (IM-001 selector, IM-007 successPolicy)."""
    return [] if semantic_equal(new, old) else [immutable(rule, path, new)]


def check_immutable_field(rule: str, new: Any, old: Any, path: str) -> list[FieldError]:
    """A defaulted scalar that must stay equal (IM-003, IM-005, IM-006)."""
    return [] if new == old else [immutable(rule, path, new)]


def check_completions_update(new: JobSpec, old: JobSpec, path: str) -> list[FieldError]:
    """IM-002 (upstream validateCompletions): Indexed Jobs scale with parallelism."""
    if new.completions == old.completions:
        return []
    if new.completion_mode != INDEXED:
        return [immutable("IM-002", f"{path}.completions", new.completions)]
    if new.completions is not None and new.completions != new.parallelism:
        return [
            invalid(
                "IM-002",
                f"{path}.completions",
                new.completions,
                "can only be modified in tandem with spec.parallelism",
            )
        ]
    return []


def check_pod_failure_policy_update(new: JobJson, old: JobJson, path: str) -> list[FieldError]:
    """IM-004: spec.podFailurePolicy, compared with the Job defaulter's defaults applied."""
    new_policy = new.pod_failure_policy
    if semantic_equal(
        default_pod_failure_policy(new_policy), default_pod_failure_policy(old.pod_failure_policy)
    ):
        return []
    return [immutable("IM-004", f"{path}.podFailurePolicy", new_policy)]


def check_job_spec_update_fields(
    new_job: Job, old_job: Job, new_json: JobJson, old_json: JobJson, path: str
) -> list[FieldError]:
    """IM-001..IM-007, upstream ValidateJobSpecUpdate's ValidateImmutableField calls: parts
    compare as sent, scalars as defaulted (a manifest that omits a defaulted field does not
    change it)."""
    new, old = new_job.spec, old_job.spec
    errors = check_immutable_part(
        "IM-001", new_json.selector, old_json.selector, f"{path}.selector"
    )
    errors += check_completions_update(new, old, path)
    errors += check_immutable_field(
        "IM-003", new.completion_mode, old.completion_mode, f"{path}.completionMode"
    )
    errors += check_pod_failure_policy_update(new_json, old_json, path)
    errors += check_immutable_field(
        "IM-005",
        new.backoff_limit_per_index,
        old.backoff_limit_per_index,
        f"{path}.backoffLimitPerIndex",
    )
    errors += check_immutable_field("IM-006", new.managed_by, old.managed_by, f"{path}.managedBy")
    errors += check_immutable_part(
        "IM-007", new_json.success_policy, old_json.success_policy, f"{path}.successPolicy"
    )
    return errors
