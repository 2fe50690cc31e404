"""Spec fields immutable on UPDATE of `jobs` (IM-001..IM-007): upstream's `ValidateImmutableField`
calls of `ValidateJobSpecUpdate`; docs/RULES.md, "Immutable fields (IM)".

Whole parts compare semantically as sent (`JobJson`); scalars compare as defaulted (`JobSpec`),
so a manifest that omits a defaulted field does not change it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from jobguard.validators.defaults import default_pod_failure_policy
from jobguard.validators.errors import FieldChange, FieldError, immutable, invalid
from jobguard.validators.model import INDEXED, Job, JobJson, JobSpec
from jobguard.validators.semantic import field_changes, semantic_equal

JobViews = tuple[Job, JobJson]
"""One Job read both ways: typed and defaulted, and as sent (a tuple: one is built for each
side of every update, and a dataclass's __init__ costs several times a tuple's)."""


def validate_immutable_part(new: Any, old: Any, path: str, rule: str) -> list[FieldError]:
    """A part that must stay semantically equal (IM-001 selector, IM-007 successPolicy); the
    options are the rule's ID."""
    if semantic_equal(new, old):
        return []
    return [immutable(rule, path, new, field_changes(old, new, path))]


def validate_immutable_field(new: Any, old: Any, path: str, rule: str) -> list[FieldError]:
    """A defaulted scalar that must stay equal (IM-003, IM-005, IM-006); the options are the
    rule's ID."""
    if new == old:
        return []
    return [immutable(rule, path, new, (FieldChange(path, old, new),))]


def validate_completions(new: JobSpec, old: JobSpec, path: str, opts: None) -> list[FieldError]:
    """IM-002 (upstream validateCompletions): Indexed Jobs scale with parallelism."""
    if new.completions == old.completions:
        return []
    changes = (FieldChange(f"{path}.completions", old.completions, new.completions),)
    if new.completion_mode != INDEXED:
        return [immutable("IM-002", f"{path}.completions", new.completions, changes)]
    if new.completions is not None and new.completions != new.parallelism:
        error = invalid(
            "IM-002",
            f"{path}.completions",
            new.completions,
            "can only be modified in tandem with spec.parallelism",
        )
        return [dataclasses.replace(error, changes=changes)]
    return []


def validate_pod_failure_policy_update(
    new: JobJson, old: JobJson, path: str, opts: None
) -> list[FieldError]:
    """IM-004: spec.podFailurePolicy, compared with the Job defaulter's defaults applied."""
    new_policy = new.pod_failure_policy
    new_defaulted = default_pod_failure_policy(new_policy)
    old_defaulted = default_pod_failure_policy(old.pod_failure_policy)
    if semantic_equal(new_defaulted, old_defaulted):
        return []
    field = f"{path}.podFailurePolicy"
    changes = field_changes(old_defaulted, new_defaulted, field)
    return [immutable("IM-004", field, new_policy, changes)]


def validate_job_spec_update(
    new: JobViews, old: JobViews, path: str, opts: None
) -> list[FieldError]:
    """IM-001..IM-007, upstream ValidateJobSpecUpdate's ValidateImmutableField calls: parts
    compare as sent, scalars as defaulted (a manifest that omits a defaulted field does not
    change it)."""
    (new_job, new_json), (old_job, old_json) = new, old
    new_spec, old_spec = new_job.spec, old_job.spec
    errors = validate_immutable_part(
        new_json.selector, old_json.selector, f"{path}.selector", "IM-001"
    )
    errors += validate_completions(new_spec, old_spec, path, None)
    errors += validate_immutable_field(
        new_spec.completion_mode, old_spec.completion_mode, f"{path}.completionMode", "IM-003"
    )
    errors += validate_pod_failure_policy_update(new_json, old_json, path, None)
    errors += validate_immutable_field(
        new_spec.backoff_limit_per_index,
        old_spec.backoff_limit_per_index,
        f"{path}.backoffLimitPerIndex",
        "IM-005",
    )
    errors += validate_immutable_field(
        new_spec.managed_by, old_spec.managed_by, f"{path}.managedBy", "IM-006"
    )
    errors += validate_immutable_part(
        new_json.success_policy, old_json.success_policy, f"{path}.successPolicy", "IM-007"
    )
    return errors
