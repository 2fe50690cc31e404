"""The tolerations annotation of a template (upstream ValidateTolerationsInPodAnnotations at
v1.37.2, through helper.GetTolerationsFromPodAnnotations): the annotation decoded as Go's
encoding/json decodes it into []core.Toleration (its messages checked against Go 1.26's), then
ValidateTolerations under the annotation's key. The tables also run against the real API server
(tests/realapi/differential.py)."""

from __future__ import annotations

from typing import Any

import pytest

from jobguard.validators.rules.pod_annotations import get_tolerations_from_pod_annotations
from tests.pod_cases import job, pod_causes

KEY = "scheduler.alpha.kubernetes.io/tolerations"
A = "spec.template.annotations"
T = f"{A}.{KEY}"
INV, NS = "FieldValueInvalid", "FieldValueNotSupported"


def annotated(value: str) -> dict[str, Any]:
    obj = job()
    obj["spec"]["template"]["metadata"] = {"annotations": {KEY: value}}
    return obj


def unreadable(message: str) -> list[tuple[str, str, str, str]]:
    return [("POD-026", A, INV, f'Invalid value: "{KEY}": {message}')]


VALID: list[tuple[str, dict[str, Any]]] = [
    (
        "tolerations",
        annotated('[{"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"}]'),
    ),
    ("members matched case-insensitively", annotated('[{"KEY": "a", "Operator": "Exists"}]')),
    ("null members", annotated('[{"key": "a", "operator": "Exists", "effect": null}]')),
    ("null", annotated("null")),
    ("empty: not read", annotated("")),
    (
        "tolerationSeconds with NoExecute",
        annotated('[{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -0}]'),
    ),
]

INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "not JSON",
        annotated("x"),
        unreadable("invalid character 'x' looking for beginning of value"),
    ),
    ("cut short", annotated('[{"key": "a"'), unreadable("unexpected end of JSON input")),
    (
        "a trailing comma",
        annotated('[{"key": "a",}]'),
        unreadable("invalid character '}' looking for beginning of object key string"),
    ),
    (
        "no comma between elements",
        annotated("[{} {}]"),
        unreadable("invalid character '{' after array element"),
    ),
    (
        "no comma between members",
        annotated('[{"key": "a" "value": "b"}]'),
        unreadable("invalid character '\"' after object key:value pair"),
    ),
    (
        "a second value",
        annotated("[] x"),
        unreadable("invalid character 'x' after top-level value"),
    ),
    (
        "an object",
        annotated("{}"),
        unreadable("json: cannot unmarshal object into Go value of type []core.Toleration"),
    ),
    (
        "a number for a toleration",
        annotated("[1]"),
        unreadable("json: cannot unmarshal number into Go value of type core.Toleration"),
    ),
    (
        "a number for the key",
        annotated('[{"key": 1}]'),
        unreadable(
            "json: cannot unmarshal number into Go struct field Toleration.Key of type string"
        ),
    ),
    (
        "a bool for the operator",
        annotated('[{"operator": true}]'),
        unreadable(
            "json: cannot unmarshal bool into Go struct field Toleration.Operator of type "
            "core.TolerationOperator"
        ),
    ),
    (
        "a fraction for tolerationSeconds",
        annotated('[{"tolerationSeconds": 1.5}]'),
        unreadable(
            "json: cannot unmarshal number 1.5 into Go struct field "
            "Toleration.TolerationSeconds of type int64"
        ),
    ),
    (
        "the first type error only",
        annotated('[{"value": [], "TOLERATIONSECONDS": "1"}]'),
        unreadable(
            "json: cannot unmarshal array into Go struct field Toleration.Value of type string"
        ),
    ),
    (
        "a null toleration is an empty one",
        annotated("[null]"),
        [
            (
                "POD-021",
                f"{T}[0].operator",
                INV,
                'Invalid value: "": operator must be Exists when `key` is empty, which means '
                '"match all values and all keys"',
            )
        ],
    ),
    (
        "the tolerations' own rules",
        annotated(
            '[{"key": "a", "operator": "Exists", "value": "b"},'
            ' {"key": "a", "operator": "In", "effect": "Never"},'
            ' {"key": "a", "operator": "Exists", "tolerationSeconds": 5}]'
        ),
        [
            (
                "POD-021",
                f"{T}[0].operator",
                INV,
                "Invalid value: \"b\": value must be empty when `operator` is 'Exists'",
            ),
            (
                "POD-021",
                f"{T}[1].operator",
                NS,
                'Unsupported value: "In": supported values: "Equal", "Exists"',
            ),
            (
                "POD-021",
                f"{T}[1].effect",
                NS,
                'Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", '
                '"NoExecute"',
            ),
            (
                "POD-021",
                f"{T}[2].effect",
                INV,
                "Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            ),
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_tolerations_annotation_passes(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj) == []


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_tolerations_annotation_is_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj) == expected


def test_the_decoder_keeps_the_last_member_of_a_name_and_reads_int64_bounds() -> None:
    assert get_tolerations_from_pod_annotations(
        '[{"Key": "a", "key": "b", "tolerationSeconds": 9223372036854775807}]'
    ) == [
        {
            "key": "b",
            "operator": "",
            "value": "",
            "effect": "",
            "tolerationSeconds": 9223372036854775807,
        }
    ]
    with pytest.raises(ValueError, match="number 9223372036854775808 into"):
        get_tolerations_from_pod_annotations('[{"tolerationSeconds": 9223372036854775808}]')
    with pytest.raises(ValueError, match=r"^invalid character 'N' looking for beginning of value$"):
        get_tolerations_from_pod_annotations("NaN")
    with pytest.raises(ValueError, match=r"^exceeded max depth$"):
        get_tolerations_from_pod_annotations("[" * 100_000)
