"""POD-025: resource claims (upstream's TestValidateResourceClaimNames and the resourceClaims
cases of TestValidatePodSpec), from 1.34 (DynamicResourceAllocation)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pod_cases import C0, S, job, pod_causes

INV, REQ, NF, DUP = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueNotFound",
    "FieldValueDuplicate",
)


def claims(pod: list[dict[str, Any]], container: list[dict[str, Any]]) -> dict[str, Any]:
    return job(
        resourceClaims=pod,
        containers=[{"name": "m", "image": "i", "resources": {"claims": container}}],
    )


def test_valid_claims_pass() -> None:
    obj = claims(
        [
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
            {"name": "shared", "resourceClaimName": "pool"},
        ],
        [{"name": "gpu"}, {"name": "gpu", "request": "big"}, {"name": "shared"}],
    )
    for version in ("1.34", "1.35", "1.36"):
        assert pod_causes(obj, version) == []


RC = f"{S}.resourceClaims"
CL = f"{C0}.resources.claims"
INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "neither name",
        claims([{"name": "gpu"}], []),
        [
            (
                "POD-025",
                f"{RC}[0]",
                INV,
                'Invalid value: {"name":"gpu"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`',
            )
        ],
    ),
    (
        "both names",
        claims([{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}], []),
        [
            (
                "POD-025",
                f"{RC}[0]",
                INV,
                'Invalid value: {"name":"gpu","resourceClaimName":"a","resourceClaimTemplateName":"b"}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified',
            )
        ],
    ),
    (
        "duplicate and missing names",
        claims(
            [
                {"name": "a", "resourceClaimName": "x"},
                {"name": "a", "resourceClaimName": "y"},
                {"resourceClaimName": "z"},
            ],
            [],
        ),
        [
            ("POD-025", f"{RC}[1].name", DUP, 'Duplicate value: "a"'),
            ("POD-025", f"{RC}[2].name", REQ, "Required value"),
        ],
    ),
    (
        "unknown claim",
        claims([{"name": "gpu", "resourceClaimName": "x"}], [{"name": "tpu"}]),
        [
            (
                "POD-025",
                f"{CL}[0]",
                NF,
                'Not found: "tpu": must be one of the names in pod.spec.resourceClaims: gpu',
            )
        ],
    ),
    (
        "no pod claims",
        claims([], [{"name": "gpu"}, {"name": "gpu"}]),
        [
            (
                "POD-025",
                f"{CL}[0]",
                NF,
                'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
            ),
            ("POD-025", f"{CL}[1]", DUP, 'Duplicate value: "gpu"'),
            (
                "POD-025",
                f"{CL}[1]",
                NF,
                'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
            ),
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_claims_are_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj, "1.35") == expected


def test_claims_are_dropped_in_1_33() -> None:
    assert pod_causes(claims([{"name": "gpu"}], [{"name": "tpu"}]), "1.33") == []
