"""POD-026: pod-specific annotations of a template (upstream ValidatePodSpecificAnnotations,
validateSeccompAnnotationsAndFields, validateAppArmorAnnotationsAndFieldsMatchOnCreate), with
upstream's paths and messages; the pod deletion cost's format relaxed on UPDATE when the stored
template already held an invalid one (AllowInvalidPodDeletionCost)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import create, cronjob, detailed_causes, settings, update
from tests.pod_cases import job

A = "spec.template.annotations"
S = "spec.template.spec"
INV, FORB = "FieldValueInvalid", "FieldValueForbidden"
COST = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_MAIN = "container.seccomp.security.alpha.kubernetes.io/main"
APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def annotated(annotations: dict[str, str], **spec: Any) -> dict[str, Any]:
    obj = job(**spec)
    obj["spec"]["template"]["metadata"] = {"annotations": annotations}
    return obj


def pod026(obj: dict[str, Any], version: str = "1.37") -> list[tuple[str, str, str, str]]:
    return [c for c in detailed_causes(create(obj, settings(version))) if c[0] == "POD-026"]


CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    ("deletion cost", annotated({COST: "10"}), []),
    ("negative deletion cost", annotated({COST: "-2147483648"}), []),
    (
        "deletion cost with a plus sign",
        annotated({COST: "+10"}),
        [("POD-026", f"{A}[{COST}]", INV, 'Invalid value: "+10": must be a 32bit integer')],
    ),
    (
        "deletion cost with a leading zero",
        annotated({COST: "010"}),
        [("POD-026", f"{A}[{COST}]", INV, 'Invalid value: "010": must be a 32bit integer')],
    ),
    (
        "deletion cost beyond 32 bits",
        annotated({COST: "2147483648"}),
        [("POD-026", f"{A}[{COST}]", INV, 'Invalid value: "2147483648": must be a 32bit integer')],
    ),
    (
        "mirror pod without nodeName",
        annotated({"kubernetes.io/config.mirror": "x"}),
        [
            (
                "POD-026",
                f"{A}[kubernetes.io/config.mirror]",
                INV,
                'Invalid value: "x": must set spec.nodeName if mirror pod annotation is set',
            )
        ],
    ),
    ("seccomp annotation", annotated({SECCOMP_POD: "runtime/default"}), []),
    (
        "seccomp annotation of an unknown profile",
        annotated({SECCOMP_POD: "foo"}),
        [
            (
                "POD-026",
                f"{A}.{SECCOMP_POD}",
                INV,
                'Invalid value: "foo": must be a valid seccomp profile',
            )
        ],
    ),
    (
        "seccomp localhost profile going up",
        annotated({SECCOMP_MAIN: "localhost/../x"}),
        [("POD-026", f"{A}.{SECCOMP_MAIN}", INV, "Invalid value: \"../x\": must not contain '..'")],
    ),
    (
        "seccomp annotation and field disagree",
        annotated(
            {SECCOMP_POD: "unconfined"},
            securityContext={"seccompProfile": {"type": "RuntimeDefault"}},
        ),
        [
            (
                "POD-026",
                f"{S}.securityContext.seccompProfile.type",
                FORB,
                "Forbidden: seccomp type in annotation and field must match",
            )
        ],
    ),
    (
        "seccomp localhost profiles disagree",
        annotated(
            {SECCOMP_MAIN: "localhost/a"},
            containers=[
                {
                    "name": "main",
                    "image": "busybox",
                    "securityContext": {
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "b"}
                    },
                }
            ],
        ),
        [
            (
                "POD-026",
                f"{S}.containers[0].securityContext.seccompProfile.localhostProfile",
                FORB,
                "Forbidden: seccomp profile in annotation and field must match",
            )
        ],
    ),
    (
        "AppArmor annotation of no container",
        annotated({f"{APPARMOR}other": "runtime/default"}),
        [("POD-026", f"{A}[{APPARMOR}other]", INV, 'Invalid value: "other": container not found')],
    ),
    (
        "AppArmor annotation of an unknown profile",
        annotated({f"{APPARMOR}main": "foo"}),
        [
            (
                "POD-026",
                f"{A}[{APPARMOR}main]",
                INV,
                'Invalid value: "foo": invalid AppArmor profile name: "foo"',
            )
        ],
    ),
    (
        "AppArmor annotation and the pod's field disagree",
        annotated(
            {f"{APPARMOR}main": "unconfined"},
            securityContext={"appArmorProfile": {"type": "RuntimeDefault"}},
        ),
        [
            (
                "POD-026",
                f"{S}.containers[0].securityContext.appArmorProfile.type",
                FORB,
                "Forbidden: apparmor type in annotation and field must match",
            )
        ],
    ),
    (
        "AppArmor on a Windows pod is not compared",
        annotated(
            {f"{APPARMOR}main": "unconfined"},
            os={"name": "windows"},
            containers=[
                {
                    "name": "main",
                    "image": "busybox",
                    "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                }
            ],
        ),
        [],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_pod_specific_annotations(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod026(obj) == expected


@pytest.mark.parametrize("version", ["1.33", "1.37"])
def test_an_invalid_deletion_cost_the_stored_template_holds_stays_allowed(version: str) -> None:
    held = cronjob()
    held["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"] = {COST: "x"}
    edited = copy.deepcopy(held)
    edited["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    s = settings(version)
    assert [c for c in detailed_causes(update(edited, held, s, kind="CronJob"))] == []
    path = f"spec.jobTemplate.{A}[{COST}]"
    assert [c[:2] for c in detailed_causes(update(held, cronjob(), s, kind="CronJob"))] == [
        ("POD-026", path)
    ]
