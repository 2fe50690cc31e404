"""`spec.successPolicy` (SP-001..SP-009; docs/RULES.md, "Success policy (SP)"), shared by Jobs
and CronJob jobTemplates."""

from __future__ import annotations

from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    invalid,
    non_negative,
    required,
    too_many,
)
from jobguard.validators.intervals import IndexParseError, count_indexes
from jobguard.validators.model import INDEXED, JobSpec, SuccessPolicyRule, as_sent

MAX_RULES = 20
MAX_INDEXES_BYTES = 64 * 1024


def validate_success_policy(
    spec: JobSpec, old: JobSpec | None, path: str, opts: None
) -> list[FieldError]:
    """Create-style successPolicy checks on a (possibly undefaulted) Job spec at `path`
    (upstream validateSuccessPolicy)."""
    policy = spec.success_policy
    if policy is None:
        return []
    policy_path = f"{path}.successPolicy"
    if spec.completion_mode != INDEXED:
        return [invalid("SP-001", policy_path, as_sent(policy), "requires indexed completion mode")]
    errors: list[FieldError] = []
    rules = policy.rules or []
    rules_path = f"{policy_path}.rules"
    if not rules:
        errors.append(
            required(
                "SP-002",
                rules_path,
                "at least one rules must be specified when the successPolicy is specified",
            )
        )
    if len(rules) > MAX_RULES:
        errors.append(too_many("SP-003", rules_path, len(rules), MAX_RULES))
    for i, rule in enumerate(rules):
        errors += _check_success_policy_rule(rule, f"{rules_path}[{i}]", spec.completions)
    return errors


def _check_success_policy_rule(
    rule: SuccessPolicyRule, path: str, completions: int | None
) -> list[FieldError]:
    """SP-004..SP-009 on one rule (upstream validateSuccessPolicyRule)."""
    errors: list[FieldError] = []
    indexes, count = rule.succeeded_indexes, rule.succeeded_count
    if indexes is None and count is None:
        errors.append(
            required(
                "SP-004",
                path,
                "at least one of succeededCount or succeededIndexes must be specified",
            )
        )
    indexes_path = f"{path}.succeededIndexes"
    if indexes is not None and len(indexes.encode()) > MAX_INDEXES_BYTES:
        errors.append(
            FieldError(
                "SP-005",
                indexes_path,
                ErrorType.TOO_LONG,
                f"may not be more than {MAX_INDEXES_BYTES} bytes",
            )
        )
    if completions is None:
        # Indexed without completions: JS-003 reports Required spec.completions; the checks
        # below need completions, so they are skipped (upstream would read nil).
        return errors
    indexes_size = 0
    if indexes is not None:
        try:
            indexes_size = count_indexes(indexes, completions)
        except IndexParseError as exc:
            errors.append(
                invalid("SP-006", indexes_path, indexes, f"error parsing succeededIndexes: {exc}")
            )
    if count is None:
        return errors
    count_path = f"{path}.succeededCount"
    if count < 0:
        errors.append(non_negative("SP-007", count_path, count))
    if count > completions:
        errors.append(
            invalid(
                "SP-008",
                count_path,
                count,
                f"must be less than or equal to {completions} "
                "(the number of specified completions)",
            )
        )
    if indexes is not None and count > indexes_size:
        errors.append(
            invalid(
                "SP-009",
                count_path,
                count,
                f"must be less than or equal to {indexes_size} "
                "(the number of indexes in the specified succeededIndexes field)",
            )
        )
    return errors
