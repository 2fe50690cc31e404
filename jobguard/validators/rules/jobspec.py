"""Create-style Job spec checks (upstream `validateJobSpec`), for Jobs and CronJob templates.

These run on CREATE and, as upstream does, again on every UPDATE of `jobs`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    invalid,
    non_negative,
    not_supported,
    required,
)
from jobguard.validators.model import INDEXED, NON_INDEXED, Job, JobSpec
from jobguard.validators.names import is_dns1123_label, is_dns1123_subdomain
from jobguard.validators.rules.pod_failure_policy import validate_pod_failure_policy
from jobguard.validators.rules.success_policy import validate_success_policy
from jobguard.validators.strategy import SpecOptions

MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_LIMIT = 100_000
MAX_MANAGED_BY_LENGTH = 63
_LARGE_COMPLETIONS = 100_000
_LARGE_LIMIT = 10_000
_POD_REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]
_HTTP_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")
_RESTART_POLICIES = ["OnFailure", "Never"]


def _non_negative_counts(spec: JobSpec, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for name, value in (
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit),
        ("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished),
        ("backoffLimitPerIndex", spec.backoff_limit_per_index),
        ("maxFailedIndexes", spec.max_failed_indexes),
    ):
        if value is not None and value < 0:
            errors.append(non_negative("JS-001", f"{path}.{name}", value))
    if spec.max_failed_indexes is not None and spec.backoff_limit_per_index is None:
        errors.append(
            required("JS-004", f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified")
        )
    return errors


def _managed_by(spec: JobSpec, path: str) -> list[FieldError]:
    value = spec.managed_by
    if value is None:
        return []
    field_path = f"{path}.managedBy"
    if value == "":
        return [required("JS-006", field_path)]
    errors: list[FieldError] = []
    domain, slash, rest = value.partition("/")
    if not slash or not domain or not rest:
        errors.append(
            invalid(
                "JS-006",
                field_path,
                value,
                'must be a domain-prefixed path (such as "acme.io/foo")',
            )
        )
    else:
        errors += _managed_by_parts(field_path, domain, rest)
    if len(value) > MAX_MANAGED_BY_LENGTH:
        errors.append(
            FieldError(
                "JS-006",
                field_path,
                ErrorType.TOO_LONG,
                f"may not be more than {MAX_MANAGED_BY_LENGTH} bytes",
            )
        )
    return errors


def _managed_by_parts(field_path: str, domain: str, rest: str) -> list[FieldError]:
    """IsDomainPrefixedPath: the host and the path are each checked."""
    errors: list[FieldError] = []
    if not is_dns1123_subdomain(domain):
        errors.append(
            invalid(
                "JS-006",
                field_path,
                domain,
                "a lowercase RFC 1123 subdomain must consist of "
                "lower case alphanumeric characters, '-' or '.', and must start and end with "
                "an alphanumeric character",
            )
        )
    if _HTTP_PATH.fullmatch(rest) is None:
        errors.append(invalid("JS-006", field_path, rest, "Invalid path"))
    return errors


def _completion_mode(spec: JobSpec, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    mode = spec.completion_mode
    completions, parallelism = spec.completions, spec.parallelism
    max_failed, per_index = spec.max_failed_indexes, spec.backoff_limit_per_index
    if mode is not None and mode not in (NON_INDEXED, INDEXED):
        return [not_supported("JS-002", f"{path}.completionMode", mode, [NON_INDEXED, INDEXED])]
    if mode == INDEXED:
        if completions is None:
            errors.append(
                required("JS-003", f"{path}.completions", f"when completion mode is {INDEXED}")
            )
        if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
            errors.append(
                invalid(
                    "JS-003",
                    f"{path}.parallelism",
                    parallelism,
                    f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} "
                    f"when completion mode is {INDEXED}",
                )
            )
        if completions is not None and max_failed is not None and max_failed > completions:
            errors.append(
                invalid(
                    "JS-004",
                    f"{path}.maxFailedIndexes",
                    max_failed,
                    "must be less than or equal to completions",
                )
            )
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES_LIMIT:
            errors.append(
                invalid(
                    "JS-004",
                    f"{path}.maxFailedIndexes",
                    max_failed,
                    f"must be less than or equal to {MAX_FAILED_INDEXES_LIMIT}",
                )
            )
        if completions is not None and completions > _LARGE_COMPLETIONS and per_index is not None:
            if max_failed is None:
                errors.append(
                    required(
                        "JS-004",
                        f"{path}.maxFailedIndexes",
                        f"must be specified when completions is above {_LARGE_COMPLETIONS}",
                    )
                )
            detail = (
                f"must be less than or equal to {_LARGE_LIMIT} when completions are above "
                f"{_LARGE_COMPLETIONS} and used with backoff limit per index"
            )
            if parallelism is not None and parallelism > _LARGE_LIMIT:
                errors.append(invalid("JS-004", f"{path}.parallelism", parallelism, detail))
            if max_failed is not None and max_failed > _LARGE_LIMIT:
                errors.append(invalid("JS-004", f"{path}.maxFailedIndexes", max_failed, detail))
    else:
        if per_index is not None:
            errors.append(
                invalid(
                    "JS-004",
                    f"{path}.backoffLimitPerIndex",
                    per_index,
                    "requires indexed completion mode",
                )
            )
        if max_failed is not None:
            errors.append(
                invalid(
                    "JS-004",
                    f"{path}.maxFailedIndexes",
                    max_failed,
                    "requires indexed completion mode",
                )
            )
    return errors


def _pod_replacement_policy(spec: JobSpec, path: str) -> list[FieldError]:
    policy = spec.pod_replacement_policy
    if policy is None:
        return []
    field_path = f"{path}.podReplacementPolicy"
    if spec.pod_failure_policy is not None:
        if policy != "Failed":
            return [not_supported("JS-002", field_path, policy, ["Failed"])]
    elif policy not in _POD_REPLACEMENT_POLICIES:
        return [not_supported("JS-002", field_path, policy, _POD_REPLACEMENT_POLICIES)]
    return []


def _restart_policy(spec: JobSpec, path: str) -> list[FieldError]:
    pod = spec.template.spec if spec.template is not None else None
    policy = (pod.restart_policy if pod is not None else None) or ""
    field_path = f"{path}.template.spec.restartPolicy"
    # Pod defaulting turns an omitted restartPolicy into Always, which Jobs reject.
    if policy in ("", "Always"):
        return [required("JS-005", field_path, 'valid values: "OnFailure", "Never"')]
    if policy not in _RESTART_POLICIES:
        return [not_supported("JS-005", field_path, policy, _RESTART_POLICIES)]
    if spec.pod_failure_policy is not None and policy != "Never":
        return [
            invalid(
                "JS-005",
                field_path,
                policy,
                'only "Never" is supported when podFailurePolicy is specified',
            )
        ]
    return []


def validate_job_spec(
    spec: JobSpec,
    old: JobSpec | None,
    path: str,
    opts: SpecOptions,
    template_errors: Sequence[FieldError] = (),
) -> list[FieldError]:
    """Every create-style Job spec check (upstream `validateJobSpec`), in upstream order: a
    function of the spec alone (`old` is not read). `opts.defaulted` for a Job, not for a CronJob's
    template, which the Job defaulter never touches. `template_errors`:
    ValidatePodTemplateSpec's errors for `spec.template` (pod.validate_pod_template_spec, on the
    template as sent), placed where upstream runs it, before the restart policy's check.
    """
    errors = _non_negative_counts(spec, path)
    errors += _managed_by(spec, path)
    errors += _completion_mode(spec, path)
    errors += validate_pod_failure_policy(spec, None, path, opts)
    errors += validate_success_policy(spec, None, path, None)
    errors += _pod_replacement_policy(spec, path)
    errors += template_errors
    errors += _restart_policy(spec, path)
    return errors


def validate_indexed_hostname(job: Job, old: Job | None, path: str, opts: None) -> list[FieldError]:
    """JS-007: the largest Indexed pod hostname `<name>-<completions-1>` must be a DNS label
    (`path` is the Job's metadata)."""
    spec, name = job.spec, job.metadata.name or ""
    if spec.completion_mode != INDEXED or spec.completions is None or spec.completions <= 0:
        return []
    hostname = f"{name}-{spec.completions - 1}"
    if is_dns1123_label(hostname):
        return []
    return [
        invalid(
            "JS-007",
            f"{path}.name",
            name,
            f"will not able to create pod with invalid DNS label: {hostname}",
        )
    ]
