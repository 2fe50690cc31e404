"""Section A: spec fields immutable on UPDATE of `jobs` (IM-001..IM-007), upstream's
`ValidateImmutableField` calls of `ValidateJobSpecUpdate`."""

from __future__ import annotations

from jobguard.validators.defaults import default_pod_failure_policy
from jobguard.validators.errors import FieldError, immutable, invalid
from jobguard.validators.model import INDEXED, JobSpec, as_sent
from jobguard.validators.semantic import semantic_equal


def check_immutable_fields(new: JobSpec, old: JobSpec, path: str) -> list[FieldError]:
    """IM-001..IM-007: whole parts compare semantically as sent, scalars as defaulted."""
    errors: list[FieldError] = []
    new_selector = as_sent(new.selector)
    if not semantic_equal(new_selector, as_sent(old.selector)):
        errors.append(immutable("IM-001", f"{path}.selector", new_selector))
    errors += _check_completions(new, old, path)
    if new.completion_mode != old.completion_mode:
        errors.append(immutable("IM-003", f"{path}.completionMode", new.completion_mode))
    new_pfp = as_sent(new.pod_failure_policy)
    old_pfp = as_sent(old.pod_failure_policy)
    if not semantic_equal(default_pod_failure_policy(new_pfp), default_pod_failure_policy(old_pfp)):
        errors.append(immutable("IM-004", f"{path}.podFailurePolicy", new_pfp))
    if new.backoff_limit_per_index != old.backoff_limit_per_index:
        errors.append(
            immutable("IM-005", f"{path}.backoffLimitPerIndex", new.backoff_limit_per_index)
        )
    if new.managed_by != old.managed_by:
        errors.append(immutable("IM-006", f"{path}.managedBy", new.managed_by))
    new_success_policy = as_sent(new.success_policy)
    if not semantic_equal(new_success_policy, as_sent(old.success_policy)):
        errors.append(immutable("IM-007", f"{path}.successPolicy", new_success_policy))
    return errors


def _check_completions(new: JobSpec, old: JobSpec, path: str) -> list[FieldError]:
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
