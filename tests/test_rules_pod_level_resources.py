"""Pod-level `resources` (PodLevelResources, on from 1.34): upstream validatePodResources,
validatePodResourceName and validatePodResourceConsistency, with upstream's paths and messages
(TestValidatePodResourceConsistency's cases)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import create, detailed_causes, settings
from tests.pod_cases import S, job

R = f"{S}.resources"
INV, FORB, UNS = "FieldValueInvalid", "FieldValueForbidden", "FieldValueNotSupported"


def c(
    name: str,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "busybox", "resources": resources, **extra}


def resources_causes(obj: dict[str, Any], version: str = "1.37") -> list[tuple[str, str, str, str]]:
    return [
        cause
        for cause in detailed_causes(create(obj, settings(version)))
        if cause[0] in ("POD-009", "POD-010")
    ]


CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "aggregate requests covered",
        job(
            resources={"requests": {"cpu": "1", "memory": "1Gi"}},
            containers=[c("a", {"cpu": "500m"}), c("b", {"cpu": "500m"})],
        ),
        [],
    ),
    (
        "aggregate requests above the pod's",
        job(
            resources={"requests": {"cpu": "1"}},
            containers=[c("a", {"cpu": "600m"}), c("b", {"cpu": "500m"})],
        ),
        [
            (
                "POD-010",
                f"{R}.requests[cpu]",
                INV,
                'Invalid value: "1": must be greater than or equal to aggregate container requests of 1100m',
            )
        ],
    ),
    (
        "an init container's peak with the sidecars before it",
        job(
            resources={"requests": {"cpu": "1"}},
            containers=[c("a", {"cpu": "200m"})],
            initContainers=[
                c("side", {"cpu": "300m"}, restartPolicy="Always"),
                c("init", {"cpu": "800m"}),
            ],
        ),
        [
            (
                "POD-010",
                f"{R}.requests[cpu]",
                INV,
                'Invalid value: "1": must be greater than or equal to aggregate container requests of 1100m',
            )
        ],
    ),
    (
        "a container's limit above the pod's",
        job(resources={"limits": {"memory": "1Gi"}}, containers=[c("a", limits={"memory": "2Gi"})]),
        [
            (
                "POD-010",
                f"{R}.containers[0][memory].limits",
                INV,
                'Invalid value: "2Gi": must be less than or equal to pod limits of 1Gi',
            )
        ],
    ),
    (
        "an unsupported pod-level resource",
        job(resources={"requests": {"ephemeral-storage": "1Gi"}}),
        [
            (
                "POD-009",
                f"{R}.requests[ephemeral-storage]",
                UNS,
                'Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"',
            )
        ],
    ),
    (
        "request above limit",
        job(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
        [
            (
                "POD-010",
                f"{R}.requests",
                INV,
                'Invalid value: "2": must be less than or equal to cpu limit of 1',
            )
        ],
    ),
    (
        "claims",
        job(resources={"claims": [{"name": "x"}]}),
        [
            (
                "POD-010",
                f"{R}.claims",
                FORB,
                "Forbidden: claims may not be set for Resources at pod-level",
            )
        ],
    ),
    (
        "a windows pod",
        job(os={"name": "windows"}, resources={"requests": {"cpu": "1"}}),
        [("POD-010", R, FORB, "Forbidden: may not be set for a windows pod")],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_pod_level_resources(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert resources_causes(obj) == expected


def test_pod_level_resources_are_not_judged_before_1_34() -> None:
    obj = job(resources={"requests": {"ephemeral-storage": "1Gi"}})
    assert resources_causes(obj, "1.33") == []
    assert resources_causes(obj, "1.34") != []
