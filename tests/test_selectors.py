"""One LabelSelector validation: the full ValidateLabelSelector (pod templates) and its structural
subset (the Job's selector, TM-005/TM-007, and policy selectors in the configuration)."""

from __future__ import annotations

from jobguard.validators.errors import ErrorType
from jobguard.validators.selectors import (
    LabelSelectorOptions,
    validate_label_selector,
    validate_selector,
)

SELECTOR = {
    "matchLabels": {"app": "ok", "bad key!": "v"},
    "matchExpressions": [
        {"key": "a", "operator": "In"},
        {"key": "b", "operator": "Exists", "values": ["x"]},
        {"key": "c", "operator": "Near", "values": ["x"]},
        {"key": "", "operator": "Exists"},
        {"key": "d", "operator": "In", "values": ["not a value!"]},
    ],
}


def found(errors: list) -> list[tuple[str, ErrorType]]:
    return [(e.path, e.type) for e in errors]


def test_the_full_validation() -> None:
    assert found(validate_label_selector("R", SELECTOR, LabelSelectorOptions("1.37"), "s")) == [
        ("s.matchLabels", ErrorType.INVALID),  # "bad key!"
        ("s.matchExpressions[0].values", ErrorType.REQUIRED),
        ("s.matchExpressions[1].values", ErrorType.FORBIDDEN),
        ("s.matchExpressions[2].operator", ErrorType.INVALID),
        ("s.matchExpressions[3].key", ErrorType.INVALID),  # empty: two problems
        ("s.matchExpressions[3].key", ErrorType.INVALID),
        ("s.matchExpressions[4].values[0]", ErrorType.INVALID),
    ]


def test_the_structural_subset() -> None:
    errors = validate_selector("R", SELECTOR, "s")
    assert found(errors) == [
        ("s.matchExpressions[0].values", ErrorType.REQUIRED),
        ("s.matchExpressions[1].values", ErrorType.FORBIDDEN),
        ("s.matchExpressions[2].operator", ErrorType.INVALID),
        ("s.matchExpressions[3].key", ErrorType.INVALID),
    ]
    assert errors[-1].detail == "name part must be non-empty"
    assert set(errors) <= set(
        validate_label_selector("R", SELECTOR, LabelSelectorOptions("1.37"), "s")
    )


def test_a_valid_selector_has_no_errors() -> None:
    valid = {
        "matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}],
    }
    assert validate_label_selector("R", valid, LabelSelectorOptions("1.37"), "s") == []
    assert validate_selector("R", valid, "s") == []
