"""Kubernetes LabelSelector: matching (metav1.LabelSelectorAsSelector) and validation.

Upstream: `k8s.io/apimachinery/pkg/apis/meta/v1/validation` and `pkg/labels`, k8s.io/apimachinery v0.37.2 (kubernetes v1.37.2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobguard.validators.errors import ErrorType, FieldError, invalid, required
from jobguard.validators.names import label_value_problems, label_wording
from jobguard.validators.versions import NEWEST_VERSION


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


@dataclass(frozen=True, slots=True)
class LabelSelectorOptions:
    """metav1.LabelSelectorValidationOptions, and the release whose words the errors use
    (names.label_wording)."""

    version: str
    allow_invalid_label_value_in_selector: bool = False


def validate_label_selector(
    rule: str, selector: Any, opts: LabelSelectorOptions, path: str
) -> list[FieldError]:
    """metav1 ValidateLabelSelector: matchLabels keys and values, each requirement's operator,
    values (required for In/NotIn, forbidden for Exists/DoesNotExist), key and value syntax
    (the requirements' values not with AllowInvalidLabelValueInSelector). A selector that is
    not an object is the decoder's to judge."""
    if not isinstance(selector, Mapping):
        return []
    words = label_wording(opts.version)
    errors: list[FieldError] = []
    match_labels = selector.get("matchLabels")
    for key, value in (match_labels if isinstance(match_labels, Mapping) else {}).items():
        errors += _each(rule, f"{path}.matchLabels", key, words.key(key))
        if isinstance(value, str):
            errors += _each(rule, f"{path}.matchLabels", value, words.value(value))
    expressions = selector.get("matchExpressions")
    for index, requirement in enumerate(expressions if isinstance(expressions, list) else []):
        if not isinstance(requirement, Mapping):
            continue
        at = f"{path}.matchExpressions[{index}]"
        operator = requirement.get("operator")
        operator = "" if operator is None else operator
        values = requirement.get("values")
        values = values if isinstance(values, list) else []
        if operator in ("In", "NotIn"):
            if not values:
                errors.append(
                    required(
                        rule, f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errors.append(
                    FieldError(
                        rule,
                        f"{at}.values",
                        ErrorType.FORBIDDEN,
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        elif isinstance(operator, str):
            errors.append(
                invalid(rule, f"{at}.operator", operator, "not a valid selector operator")
            )
        key = requirement.get("key")
        key = "" if key is None else key
        if isinstance(key, str):
            errors += _each(rule, f"{at}.key", key, words.key(key))
        for value_index, value in enumerate(
            () if opts.allow_invalid_label_value_in_selector else values
        ):
            if isinstance(value, str):
                errors += _each(rule, f"{at}.values[{value_index}]", value, words.value(value))
    return errors


def validate_selector(rule: str, selector: Mapping[str, Any], path: str) -> list[FieldError]:
    """The structural errors of ValidateLabelSelector that make a selector unusable: operators,
    values, and an empty key (`validate_label_selector`'s, without the syntax of keys and
    values: their words are the same in every release)."""
    errors: list[FieldError] = []
    for error in validate_label_selector(
        rule, selector, LabelSelectorOptions(NEWEST_VERSION), path
    ):
        if error.path.endswith((".operator", ".values")) or (
            error.path.endswith(".key")
            and error.value == ""
            and (not errors or errors[-1].path != error.path)  # one error for an empty key
        ):
            errors.append(error)
    return errors


def label_selector_has_invalid_label_value(selector: Any) -> bool:
    """metav1validation.LabelSelectorHasInvalidLabelValue (validity only: any release's
    wording)."""
    if not isinstance(selector, Mapping):
        return False
    expressions = selector.get("matchExpressions")
    for requirement in expressions if isinstance(expressions, list) else []:
        values = requirement.get("values") if isinstance(requirement, Mapping) else None
        for value in values if isinstance(values, list) else []:
            if isinstance(value, str) and label_value_problems(value):
                return True
    return False


def _each(rule: str, path: str, value: Any, problems: tuple[str, ...]) -> list[FieldError]:
    return [invalid(rule, path, value, problem) for problem in problems]
