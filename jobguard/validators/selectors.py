"""Kubernetes LabelSelector: matching (metav1.LabelSelectorAsSelector) and validation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobguard.validators.errors import ErrorType, FieldError, invalid, required


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector selects a label set.

    An empty selector matches everything; a null one is handled by callers (matches nothing in
    Kubernetes). Unknown operators never match.
    """
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        key = requirement.get("key", "")
        operator = requirement.get("operator")
        values = requirement.get("values") or []
        present = key in labels
        if operator == "In":
            if not present or labels[key] not in values:
                return False
        elif operator == "NotIn":
            if present and labels[key] in values:
                return False
        elif operator == "Exists":
            if not present:
                return False
        elif operator == "DoesNotExist":
            if present:
                return False
        else:
            return False
    return True


def validate_selector(rule: str, selector: Mapping[str, Any], path: str) -> list[FieldError]:
    """The structural errors of ValidateLabelSelector that make a selector unusable."""
    errors: list[FieldError] = []
    for i, requirement in enumerate(selector.get("matchExpressions") or []):
        req_path = f"{path}.matchExpressions[{i}]"
        operator = requirement.get("operator")
        values = requirement.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                errors.append(
                    required(
                        rule,
                        f"{req_path}.values",
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    )
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errors.append(
                    FieldError(
                        rule,
                        f"{req_path}.values",
                        ErrorType.FORBIDDEN,
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errors.append(
                invalid(rule, f"{req_path}.operator", operator, "not a valid selector operator")
            )
        if not requirement.get("key"):
            errors.append(invalid(rule, f"{req_path}.key", "", "name part must be non-empty"))
    return errors
