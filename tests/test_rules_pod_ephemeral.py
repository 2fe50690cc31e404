"""validateEphemeralContainers on a Job's template (ValidatePodSpec runs it before
ValidatePodTemplateSpec refuses the list whole). Every expected list is what a real
kube-apiserver 1.37.2 answered for the same manifest (`dryRun=All`), causes in its order."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pod_cases import S, job, pod_causes

E0 = f"{S}.ephemeralContainers[0]"
INIT = [{"name": "init", "image": "busybox"}]
NOT_ALLOWED: dict[str, Any] = {
    "ports": [{"containerPort": 80}],
    "resources": {"limits": {"cpu": "1"}},
    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
    "livenessProbe": {"exec": {"command": ["x"]}},
    "readinessProbe": {"exec": {"command": ["x"]}},
    "startupProbe": {"exec": {"command": ["x"]}},
    "lifecycle": {"preStop": {"exec": {"command": ["x"]}}},
}
SUBPATH_MOUNTS = [
    {"name": "v", "mountPath": "/v", "subPath": "a"},
    {"name": "v", "mountPath": "/w", "subPathExpr": "$(X)"},
]
REFUSED_IN_TEMPLATE = (
    "POD-017",
    f"{S}.ephemeralContainers",
    "FieldValueForbidden",
    "Forbidden: ephemeral containers not allowed in pod template",
)
NOT_FOR_EPHEMERAL = "Forbidden: cannot be set for an Ephemeral Container"


def eph(**fields: Any) -> dict[str, Any]:
    return {"name": "d", "image": "busybox", **fields}


INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "a valid ephemeral container: the template's refusal alone",
        job(ephemeralContainers=[{"name": "dbg", "image": "busybox"}]),
        [
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "a target among the init containers",
        job(ephemeralContainers=[eph(targetContainerName="init")], initContainers=INIT),
        [
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "a regular container's name",
        job(ephemeralContainers=[{"name": "main", "image": "busybox"}], initContainers=INIT),
        [
            ("POD-002", f"{E0}.name", "FieldValueDuplicate", 'Duplicate value: "main"'),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "two ephemeral containers of one name",
        job(ephemeralContainers=[eph(), eph()]),
        [
            (
                "POD-002",
                f"{S}.ephemeralContainers[1].name",
                "FieldValueDuplicate",
                'Duplicate value: "d"',
            ),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "a target that is no regular or init container",
        job(ephemeralContainers=[eph(targetContainerName="nope")], initContainers=INIT),
        [
            ("POD-017", f"{E0}.targetContainerName", "FieldValueNotFound", 'Not found: "nope"'),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "every field the allow list leaves out, in the struct's order",
        job(ephemeralContainers=[eph(**NOT_ALLOWED)]),
        [
            ("POD-017", f"{E0}.ports", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.resources", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.resizePolicy", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.livenessProbe", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.readinessProbe", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.startupProbe", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.lifecycle", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "an empty list is set, an empty resources is not",
        job(ephemeralContainers=[eph(ports=[], resources={}, resizePolicy=[])]),
        [
            ("POD-017", f"{E0}.ports", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            ("POD-017", f"{E0}.resizePolicy", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "resources with an empty member are set",
        job(ephemeralContainers=[eph(resources={"limits": {}})]),
        [
            ("POD-017", f"{E0}.resources", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "an empty probe is set",
        job(ephemeralContainers=[eph(livenessProbe={})]),
        [
            ("POD-017", f"{E0}.livenessProbe", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "a restartPolicy",
        job(ephemeralContainers=[eph(restartPolicy="Always")]),
        [
            ("POD-017", f"{E0}.restartPolicy", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "subPath and subPathExpr",
        job(
            ephemeralContainers=[eph(volumeMounts=SUBPATH_MOUNTS)],
            volumes=[{"name": "v", "emptyDir": {}}],
        ),
        [
            ("POD-017", f"{E0}.volumeMounts[0].subPath", "FieldValueForbidden", NOT_FOR_EPHEMERAL),
            (
                "POD-017",
                f"{E0}.volumeMounts[1].subPathExpr",
                "FieldValueForbidden",
                NOT_FOR_EPHEMERAL,
            ),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "an image with surrounding whitespace (validateContainerOnlyForPod)",
        job(ephemeralContainers=[eph(image=" busybox ")]),
        [
            (
                "POD-003",
                f"{E0}.image",
                "FieldValueInvalid",
                'Invalid value: " busybox ": must not have leading or trailing whitespace',
            ),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "no name, no image: validateContainerCommon",
        job(ephemeralContainers=[{}]),
        [
            ("POD-002", f"{E0}.name", "FieldValueRequired", "Required value"),
            ("POD-003", f"{E0}.image", "FieldValueRequired", "Required value"),
            REFUSED_IN_TEMPLATE,
        ],
    ),
    (
        "validateContainerCommon's name and pull policy",
        job(ephemeralContainers=[eph(name="Bad_Name", imagePullPolicy="Sometimes")]),
        [
            (
                "POD-002",
                f"{E0}.name",
                "FieldValueInvalid",
                "Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ),
            (
                "POD-004",
                f"{E0}.imagePullPolicy",
                "FieldValueNotSupported",
                'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
            ),
            REFUSED_IN_TEMPLATE,
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_ephemeral_containers_are_reported_as_the_api_server_reports_them(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj, "1.37", first=1) == expected
