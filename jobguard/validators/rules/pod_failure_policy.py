"""JS-008: `spec.podFailurePolicy` structure (upstream `validatePodFailurePolicy`).

Upstream: `pkg/apis/batch/validation/validation.go`, kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    invalid,
    invalid_omitted,
    not_supported,
    required,
    too_many,
)
from jobguard.validators.model import (
    ExitCodesRequirement,
    JobSpec,
    PodConditionsPattern,
)
from jobguard.validators.names import label_wording
from jobguard.validators.strategy import SpecOptions

MAX_RULES = 20
MAX_EXIT_CODES = 255
MAX_POD_CONDITIONS = 20
_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
_OPERATORS = ["In", "NotIn"]
_STATUSES = ["False", "True", "Unknown"]
RULE = "JS-008"


def _go_quoted_list(values: list[str]) -> str:
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _container_names(spec: JobSpec) -> set[str]:
    pod = spec.template.spec if spec.template is not None else None
    if pod is None:
        return set()
    return {c.name for c in (pod.containers or []) + (pod.init_containers or [])}


def _exit_codes(rule: ExitCodesRequirement, path: str, names: set[str]) -> list[FieldError]:
    errors: list[FieldError] = []
    operator = rule.operator
    if not operator:
        errors.append(
            required(RULE, f"{path}.operator", f"valid values: {_go_quoted_list(_OPERATORS)}")
        )
    elif operator not in _OPERATORS:
        errors.append(not_supported(RULE, f"{path}.operator", operator, _OPERATORS))
    container = rule.container_name
    if container is not None and container not in names:
        errors.append(
            invalid(
                RULE,
                f"{path}.containerName",
                container,
                "must be one of the container or initContainer names in the pod template",
            )
        )
    values = rule.values or []
    values_path = f"{path}.values"
    if not values:
        errors.append(invalid(RULE, values_path, values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODES:
        errors.append(too_many(RULE, values_path, len(values), MAX_EXIT_CODES))
    if values:
        seen: set[int] = set()
        previous: int | None = None
        ordered = True
        for j, value in enumerate(values):
            if operator == "In" and value == 0:
                errors.append(
                    invalid(RULE, f"{values_path}[{j}]", value, "must not be 0 for the In operator")
                )
            if value in seen:
                errors.append(
                    FieldError(RULE, f"{values_path}[{j}]", ErrorType.DUPLICATE, "", value)
                )
            if previous is not None and previous > value:
                ordered = False
            seen.add(value)
            previous = value
        if not ordered:
            errors.append(invalid(RULE, values_path, values, "must be ordered"))
    return errors


def _pod_conditions(
    conditions: list[PodConditionsPattern], path: str, opts: SpecOptions
) -> list[FieldError]:
    key_problems = label_wording(opts.version).key
    defaulted = opts.defaulted
    errors: list[FieldError] = []
    if len(conditions) > MAX_POD_CONDITIONS:
        errors.append(too_many(RULE, path, len(conditions), MAX_POD_CONDITIONS))
    for k, condition in enumerate(conditions):
        cpath = f"{path}[{k}]"
        ctype = condition.type
        for problem in key_problems(ctype):
            errors.append(invalid(RULE, f"{cpath}.type", ctype, problem))
        # The Job defaulter sets an empty status to "True"; CronJob templates are not defaulted.
        status = condition.status or ""
        if defaulted and status == "":
            status = "True"
        if status == "":
            errors.append(
                required(RULE, f"{cpath}.status", f"valid values: {_go_quoted_list(_STATUSES)}")
            )
        elif status not in _STATUSES:
            errors.append(not_supported(RULE, f"{cpath}.status", status, _STATUSES))
    return errors


def validate_pod_failure_policy(
    spec: JobSpec, old: JobSpec | None, path: str, opts: SpecOptions
) -> list[FieldError]:
    """JS-008 on the spec at `path` (upstream validatePodFailurePolicy); `old` is not read, and
    `opts.defaulted` says whether an empty onPodConditions status was defaulted to "True"."""
    if spec.pod_failure_policy is None:
        return []
    rules_path = f"{path}.podFailurePolicy.rules"
    rules = spec.pod_failure_policy.rules or []
    errors: list[FieldError] = []
    if len(rules) > MAX_RULES:
        errors.append(too_many(RULE, rules_path, len(rules), MAX_RULES))
    names = _container_names(spec)
    for i, rule in enumerate(rules):
        rule_path = f"{rules_path}[{i}]"
        action = rule.action
        if not action:
            errors.append(
                required(RULE, f"{rule_path}.action", f"valid values: {_go_quoted_list(_ACTIONS)}")
            )
        elif action == "FailIndex" and spec.backoff_limit_per_index is None:
            errors.append(
                invalid(
                    RULE,
                    f"{rule_path}.action",
                    action,
                    "requires the backoffLimitPerIndex to be set",
                )
            )
        elif action not in _ACTIONS:
            errors.append(not_supported(RULE, f"{rule_path}.action", action, _ACTIONS))
        exit_codes = rule.on_exit_codes
        conditions = rule.on_pod_conditions
        if exit_codes is not None:
            errors += _exit_codes(exit_codes, f"{rule_path}.onExitCodes", names)
        if conditions is not None:
            errors += _pod_conditions(conditions, f"{rule_path}.onPodConditions", opts)
        if exit_codes is not None and conditions:
            errors.append(
                invalid_omitted(
                    RULE,
                    rule_path,
                    "specifying both OnExitCodes and OnPodConditions is not supported",
                )
            )
        elif exit_codes is None and not conditions:
            errors.append(
                invalid_omitted(
                    RULE, rule_path, "specifying one of OnExitCodes and OnPodConditions is required"
                )
            )
    return errors
