"""POD-011..POD-017: probes, lifecycle, sidecars, resize policy, env sources, mounts and devices
(upstream's TestValidateProbe, TestValidateHandler, TestValidateInitContainers, TestValidateEnv,
TestValidateEnvFrom, TestValidateVolumeMounts, TestValidateVolumeDevices cases)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pod_cases import C0, QUANTITY_FORMAT, S, job, pod_causes, with_container

I0 = f"{S}.initContainers[0]"
INV, REQ, FORB, NS, NF, DUP = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueNotSupported",
    "FieldValueNotFound",
    "FieldValueDuplicate",
)
EXEC = {"exec": {"command": ["true"]}}


def sidecar(**fields: Any) -> dict[str, Any]:
    return job(
        initContainers=[{"name": "side", "image": "busybox", **fields}],
    )


def _defaulted(empty: str | None) -> dict[str, Any]:
    """SetDefaults_Container, SetDefaults_HTTPGetAction and SetDefaults_ObjectFieldSelector
    run before validation: an empty or null terminationMessagePolicy is File, an httpGet path
    "/", its scheme HTTP, a fieldRef's apiVersion v1 (upstream's Required never fires)."""
    http = {"path": empty, "scheme": empty, "port": 80}
    field_ref = {"apiVersion": empty, "fieldPath": "metadata.name"}
    obj = with_container(
        terminationMessagePolicy=empty,
        livenessProbe={"httpGet": http},
        lifecycle={"preStop": {"httpGet": http}},
        env=[{"name": "A", "valueFrom": {"fieldRef": field_ref}}],
    )
    obj["spec"]["template"]["spec"]["volumes"] = [
        {"name": "d", "downwardAPI": {"items": [{"path": "n", "fieldRef": field_ref}]}}
    ]
    return obj


def _null_grace_period(**container: Any) -> dict[str, Any]:
    obj = with_container(**container)
    obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = None
    return obj


_RULES = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]

VALID: list[tuple[str, dict[str, Any]]] = [
    ("exec probe", with_container(livenessProbe=EXEC)),
    ("httpGet defaults path and scheme", with_container(readinessProbe={"httpGet": {"port": 80}})),
    ("named port", with_container(startupProbe={"tcpSocket": {"port": "http"}})),
    ("grpc", with_container(livenessProbe={"grpc": {"port": 9090}})),
    (
        "readiness successThreshold 3",
        with_container(readinessProbe={**EXEC, "successThreshold": 3}),
    ),
    (
        "sidecar probes and lifecycle",
        sidecar(
            restartPolicy="Always",
            readinessProbe={**EXEC, "successThreshold": 3},
            lifecycle={"preStop": {"sleep": {"seconds": 0}}},
        ),
    ),
    (
        "preStop sleep up to the grace period",
        with_container(lifecycle={"preStop": {"sleep": {"seconds": 30}}}),
    ),
    (
        "env sources",
        with_container(
            env=[
                {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {
                    "name": "C",
                    "valueFrom": {
                        "resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}
                    },
                },
                {"name": "D", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k.e-y_1"}}},
                {"name": "E", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "K"}}},
                {
                    "name": "F",
                    "valueFrom": {"resourceFieldRef": {"resource": "requests.hugepages-2Mi"}},
                },
            ]
        ),
    ),
    (
        "envFrom",
        with_container(
            envFrom=[{"configMapRef": {"name": "c"}, "prefix": "P_"}, {"secretRef": {"name": "s-"}}]
        ),
    ),
    (
        "mount subPath",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [{"name": "v", "mountPath": "/d", "subPath": "a/b"}],
                }
            ],
        ),
    ),
    (
        "privileged Bidirectional",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {"name": "v", "mountPath": "/d", "mountPropagation": "Bidirectional"}
                    ],
                }
            ],
        ),
    ),
    (
        "recursiveReadOnly",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [
                        {
                            "name": "v",
                            "mountPath": "/d",
                            "readOnly": True,
                            "recursiveReadOnly": "Enabled",
                        }
                    ],
                }
            ],
        ),
    ),
    (
        "block device from a claim",
        job(
            volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeDevices": [{"name": "v", "devicePath": "/dev/x"}],
                }
            ],
        ),
    ),
    (
        "resize NotRequired",
        with_container(resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}]),
    ),
    (
        "hostNetwork matching ports",
        job(
            hostNetwork=True,
            containers=[
                {"name": "m", "image": "i", "ports": [{"containerPort": 80, "hostPort": 80}]}
            ],
        ),
    ),
    ("terminationMessagePolicy", with_container(terminationMessagePolicy="FallbackToLogsOnError")),
    ("empty defaulted fields", _defaulted("")),
    ("null defaulted fields", _defaulted(None)),
]


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_containers_pass(name: str, obj: dict[str, Any], version: str) -> None:
    assert pod_causes(obj, version) == []


HANDLER_ONE = "may not specify more than 1 handler type"
INIT_ONLY = "may not be set for init containers without restartPolicy=Always"
ENV_ONE_OF = (
    "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or "
    "`fileKeyRef`"
)
ENV_FIELDS = (
    'supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", '
    '"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", '
    '"status.podIPs"'
)
INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "no handler",
        with_container(livenessProbe={}),
        [("POD-011", f"{C0}.livenessProbe", REQ, "Required value: must specify a handler type")],
    ),
    (
        "two handlers",
        with_container(livenessProbe={**EXEC, "httpGet": {"port": 80}}),
        [("POD-011", f"{C0}.livenessProbe.httpGet", FORB, f"Forbidden: {HANDLER_ONE}")],
    ),
    (
        "exec without command",
        with_container(readinessProbe={"exec": {}}),
        [("POD-011", f"{C0}.readinessProbe.exec.command", REQ, "Required value")],
    ),
    (
        "liveness successThreshold",
        with_container(livenessProbe={**EXEC, "successThreshold": 2}),
        [("POD-011", f"{C0}.livenessProbe.successThreshold", INV, "Invalid value: 2: must be 1")],
    ),
    (
        "negative threshold",
        with_container(startupProbe={**EXEC, "failureThreshold": -1}),
        [
            (
                "POD-011",
                f"{C0}.startupProbe.failureThreshold",
                INV,
                "Invalid value: -1: must be greater than or equal to 0",
            )
        ],
    ),
    (
        "readiness grace period",
        with_container(readinessProbe={**EXEC, "terminationGracePeriodSeconds": 5}),
        [
            (
                "POD-011",
                f"{C0}.readinessProbe.terminationGracePeriodSeconds",
                INV,
                "Invalid value: 5: must not be set for readinessProbes",
            )
        ],
    ),
    (
        "liveness grace period 0",
        with_container(livenessProbe={**EXEC, "terminationGracePeriodSeconds": 0}),
        [
            (
                "POD-011",
                f"{C0}.livenessProbe.terminationGracePeriodSeconds",
                INV,
                "Invalid value: 0: must be greater than 0",
            )
        ],
    ),
    (
        "httpGet port 0, scheme, header",
        with_container(
            livenessProbe={
                "httpGet": {
                    "port": 0,
                    "scheme": "FTP",
                    "httpHeaders": [{"name": "X Y", "value": "v"}],
                }
            }
        ),
        [
            (
                "POD-011",
                f"{C0}.livenessProbe.httpGet.port",
                INV,
                "Invalid value: 0: must be between 1 and 65535, inclusive",
            ),
            (
                "POD-011",
                f"{C0}.livenessProbe.httpGet.scheme",
                NS,
                'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"',
            ),
            (
                "POD-011",
                f"{C0}.livenessProbe.httpGet.httpHeaders",
                INV,
                "Invalid value: \"X Y\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            ),
        ],
    ),
    (
        "lifecycle without handler",
        with_container(lifecycle={"postStart": {}}),
        [
            (
                "POD-011",
                f"{C0}.lifecycle.postStart",
                REQ,
                "Required value: must specify a handler type",
            )
        ],
    ),
    (
        "sleep longer than the grace period",
        with_container(lifecycle={"preStop": {"sleep": {"seconds": 31}}}),
        [
            (
                "POD-011",
                f"{C0}.lifecycle.preStop.sleep",
                INV,
                'Invalid value: {"seconds":31}: must be non-negative and less than terminationGracePeriodSeconds (30)',
            )
        ],
    ),
    (
        "readinessProbe on an init container",
        job(initContainers=[{"name": "i", "image": "b", "readinessProbe": EXEC}]),
        [("POD-012", f"{I0}.readinessProbe", FORB, f"Forbidden: {INIT_ONLY}")],
    ),
    (
        "lifecycle on an init container",
        job(initContainers=[{"name": "i", "image": "b", "lifecycle": {"preStop": EXEC}}]),
        [("POD-012", f"{I0}.lifecycle", FORB, f"Forbidden: {INIT_ONLY}")],
    ),
    (
        "init restartPolicy Never (1.35: a container policy)",
        job(initContainers=[{"name": "i", "image": "b", "restartPolicy": "Sometimes"}]),
        [
            (
                "POD-012",
                f"{I0}.restartPolicy",
                NS,
                'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
            )
        ],
    ),
    (
        "resize RestartContainer with restartPolicy Never",
        with_container(resizePolicy=[{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]),
        [
            (
                "POD-013",
                f"{C0}.resizePolicy",
                INV,
                "Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'",
            )
        ],
    ),
    (
        "resize duplicate and unknown",
        with_container(
            resizePolicy=[
                {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                {"resourceName": "gpu", "restartPolicy": "NotRequired"},
            ]
        ),
        [
            ("POD-013", f"{C0}.resizePolicy[1]", DUP, 'Duplicate value: "cpu"'),
            (
                "POD-013",
                f"{C0}.resizePolicy",
                NS,
                'Unsupported value: "gpu": supported values: "cpu", "memory"',
            ),
        ],
    ),
    (
        "valueFrom empty",
        with_container(env=[{"name": "A", "valueFrom": {}}]),
        [("POD-014", f"{C0}.env[0].valueFrom", INV, f'Invalid value: "": {ENV_ONE_OF}')],
    ),
    (
        "value and valueFrom",
        with_container(
            env=[
                {
                    "name": "A",
                    "value": "x",
                    "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}},
                }
            ]
        ),
        [
            (
                "POD-014",
                f"{C0}.env[0].valueFrom",
                INV,
                'Invalid value: "": may not be specified when `value` is not empty',
            )
        ],
    ),
    (
        "two sources",
        with_container(
            env=[
                {
                    "name": "A",
                    "valueFrom": {
                        "secretKeyRef": {"name": "s", "key": "k"},
                        "configMapKeyRef": {"name": "c", "key": "k"},
                    },
                }
            ]
        ),
        [
            (
                "POD-014",
                f"{C0}.env[0].valueFrom",
                INV,
                'Invalid value: "": may not have more than one field specified at a time',
            )
        ],
    ),
    (
        "unsupported fieldPath",
        with_container(
            env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.schedulerName"}}}]
        ),
        [
            (
                "POD-014",
                f"{C0}.env[0].valueFrom.fieldRef.fieldPath",
                NS,
                f'Unsupported value: "spec.schedulerName": {ENV_FIELDS}',
            )
        ],
    ),
    (
        "unconvertible fieldPath",
        with_container(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.foo"}}}]),
        [
            (
                "POD-014",
                f"{C0}.env[0].valueFrom.fieldRef.fieldPath",
                INV,
                'Invalid value: "spec.foo": error converting fieldPath: field label not supported: spec.foo',
            )
        ],
    ),
    (
        "cpu divisor",
        with_container(
            env=[
                {
                    "name": "A",
                    "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "2"}},
                }
            ]
        ),
        [
            (
                "POD-014",
                f"{C0}.env[0].valueFrom.resourceFieldRef.divisor",
                INV,
                'Invalid value: "limits.cpu": only divisor\'s values 1m and 1 are supported with the cpu resource',
            )
        ],
    ),
    (
        "a divisor that is not a quantity (the API server cannot decode the Job)",
        with_container(
            env=[
                {
                    "name": "A",
                    "valueFrom": {
                        "resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi_"}
                    },
                }
            ]
        ),
        [
            (
                "POD-014",
                f"{C0}.env[0].valueFrom.resourceFieldRef.divisor",
                INV,
                f'Invalid value: "1Mi_": {QUANTITY_FORMAT}',
            )
        ],
    ),
    (
        "secret key",
        with_container(
            env=[{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": ""}}}]
        ),
        [("POD-014", f"{C0}.env[0].valueFrom.secretKeyRef.key", REQ, "Required value")],
    ),
    (
        "envFrom no source",
        with_container(envFrom=[{"prefix": "P"}]),
        [
            (
                "POD-014",
                f"{C0}.envFrom",
                INV,
                'Invalid value: "": must specify one of: `configMapRef` or `secretRef`',
            )
        ],
    ),
    (
        "envFrom no name",
        with_container(envFrom=[{"configMapRef": {}}]),
        [("POD-014", f"{C0}.envFrom[0].configMapRef.name", REQ, "Required value")],
    ),
    (
        "subPath with ..",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [{"name": "v", "mountPath": "/d", "subPath": "../x"}],
                }
            ],
        ),
        [
            (
                "POD-016",
                f"{C0}.volumeMounts.subPath",
                INV,
                "Invalid value: \"../x\": must not contain '..'",
            )
        ],
    ),
    (
        "absolute subPath",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [{"name": "v", "mountPath": "/d", "subPath": "/x"}],
                }
            ],
        ),
        [
            (
                "POD-016",
                f"{C0}.volumeMounts.subPath",
                INV,
                'Invalid value: "/x": must be a relative path',
            )
        ],
    ),
    (
        "subPath and subPathExpr",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [
                        {"name": "v", "mountPath": "/d", "subPath": "a", "subPathExpr": "$(X)"}
                    ],
                }
            ],
        ),
        [
            (
                "POD-016",
                f"{C0}.volumeMounts[0].subPathExpr",
                INV,
                'Invalid value: "$(X)": subPathExpr and subPath are mutually exclusive',
            )
        ],
    ),
    (
        "Bidirectional unprivileged",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [
                        {"name": "v", "mountPath": "/d", "mountPropagation": "Bidirectional"}
                    ],
                }
            ],
        ),
        [
            (
                "POD-016",
                f"{C0}.volumeMounts.mountPropagation",
                FORB,
                "Forbidden: Bidirectional mount propagation is available only to privileged containers",
            )
        ],
    ),
    (
        "recursiveReadOnly without readOnly",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeMounts": [
                        {"name": "v", "mountPath": "/d", "recursiveReadOnly": "IfPossible"}
                    ],
                }
            ],
        ),
        [
            (
                "POD-016",
                f"{C0}.volumeMounts.recursiveReadOnly",
                FORB,
                "Forbidden: may only be specified when readOnly is true",
            )
        ],
    ),
    (
        "device on an emptyDir",
        job(
            volumes=[{"name": "v"}],
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "volumeDevices": [{"name": "v", "devicePath": "/dev/../x"}],
                }
            ],
        ),
        [
            (
                "POD-016",
                f"{C0}.volumeDevices[0].name",
                INV,
                'Invalid value: "v": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
            ),
            (
                "POD-016",
                f"{C0}.volumeDevices[0].devicePath",
                INV,
                "Invalid value: \"/dev/../x\": can not contain backsteps ('..')",
            ),
        ],
    ),
    (
        "terminationMessagePolicy",
        with_container(terminationMessagePolicy="Logs"),
        [
            (
                "POD-017",
                f"{C0}.terminationMessagePolicy",
                NS,
                'Unsupported value: "Logs": supported values: "FallbackToLogsOnError", "File"',
            )
        ],
    ),
    (
        "hostNetwork port mismatch",
        job(
            hostNetwork=True,
            containers=[
                {"name": "m", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]}
            ],
        ),
        [
            (
                "POD-017",
                f"{C0}.ports[0].hostPort",
                INV,
                "Invalid value: 8080: must match `containerPort` when `hostNetwork` is true",
            )
        ],
    ),
    (
        "ephemeral containers",
        job(ephemeralContainers=[{"name": "d", "image": "busybox"}]),
        [
            (
                "POD-017",
                f"{S}.ephemeralContainers",
                FORB,
                "Forbidden: ephemeral containers not allowed in pod template",
            )
        ],
    ),
    (
        "a null terminationGracePeriodSeconds is 30",
        _null_grace_period(lifecycle={"preStop": {"sleep": {"seconds": 31}}}),
        [
            (
                "POD-011",
                f"{C0}.lifecycle.preStop.sleep",
                INV,
                'Invalid value: {"seconds":31}: must be non-negative and less than '
                "terminationGracePeriodSeconds (30)",
            )
        ],
    ),
    (
        "init container restart rules without a restartPolicy",
        job(initContainers=[{"name": "i", "image": "b", "restartPolicyRules": _RULES}]),
        [
            (
                "POD-012",
                f"{I0}.restartPolicy",
                REQ,
                "Required value: must specify restartPolicy when restart rules are used",
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_containers_are_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj) == expected


def test_version_differences() -> None:
    # 1.33/1.34: the old valueFrom message; 1.33: init restartPolicy only Always, container
    # restartPolicy forbidden (1.34 drops both, tests/test_drop.py); 1.36: the resize message
    # names the pod's restartPolicy.
    empty = with_container(env=[{"name": "A", "valueFrom": {}}])
    assert pod_causes(empty, "1.34")[0][3].endswith("`configMapKeyRef` or `secretKeyRef`")
    init = job(initContainers=[{"name": "i", "image": "b", "restartPolicy": "Never"}])
    assert pod_causes(init, "1.34") == []
    assert pod_causes(init, "1.33") == [
        (
            "POD-012",
            f"{I0}.restartPolicy",
            NS,
            'Unsupported value: "Never": supported values: "Always"',
        )
    ]
    assert pod_causes(init, "1.35") == []
    regular = with_container(restartPolicy="Never")
    assert pod_causes(regular, "1.33") == [
        (
            "POD-012",
            f"{C0}.restartPolicy",
            FORB,
            "Forbidden: may not be set for non-init containers",
        )
    ]
    assert pod_causes(regular, "1.35") == []
    resize = with_container(
        resizePolicy=[{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]
    )
    assert pod_causes(resize, "1.36")[0][3].endswith("when pod `restartPolicy` is 'Never'")
    init_resize = job(
        initContainers=[
            {
                "name": "i",
                "image": "b",
                "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}],
            }
        ]
    )
    assert (
        "POD-013",
        f"{I0}.resizePolicy[0].restartPolicy",
        INV,
        "Invalid value: \"RestartContainer\": must not be set to 'RestartContainer' for non-sidecar initContainers",
    ) in pod_causes(init_resize, "1.36")


def test_a_volume_with_an_invalid_source_cannot_be_mounted() -> None:
    obj = job(
        volumes=[{"name": "v", "configMap": {}}],
        containers=[
            {"name": "m", "image": "i", "volumeMounts": [{"name": "v", "mountPath": "/d"}]}
        ],
    )
    from tests.builders import create, detailed_causes

    assert [c[:2] for c in detailed_causes(create(obj))] == [
        ("POD-015", f"{S}.volumes[0].configMap.name"),
        ("POD-008", f"{C0}.volumeMounts[0].name"),
    ]


def test_file_key_ref_needs_an_empty_dir() -> None:
    obj = job(
        volumes=[{"name": "v", "configMap": {"name": "c"}}],
        containers=[
            {
                "name": "m",
                "image": "i",
                "env": [
                    {
                        "name": "A",
                        "valueFrom": {"fileKeyRef": {"volumeName": "v", "path": "f", "key": "K"}},
                    }
                ],
            }
        ],
    )
    assert pod_causes(obj, "1.35") == [
        (
            "POD-014",
            f"{C0}.env[0].valueFrom.fileKeyRef.volumeName",
            INV,
            'Invalid value: "v": referenced volume must be of type emptyDir',
        )
    ]


def test_a_sidecars_restart_rules_are_refused_whole_without_restart_all_containers() -> None:
    """validateInitContainerRestartPolicy: a sidecar's rules are refused whole while
    RestartAllContainers is off (1.35), their contents not judged."""
    rules = [{"action": "Bad", "exitCodes": {"operator": "In", "values": [1]}}]
    sidecar = job(
        initContainers=[
            {"name": "i", "image": "b", "restartPolicy": "Always", "restartPolicyRules": rules}
        ]
    )
    forbidden = (
        "Forbidden: restartPolicyRules are not allowed for init containers with restart policy "
        "Always"
    )
    assert pod_causes(sidecar, "1.35") == [("POD-012", f"{I0}.restartPolicyRules", FORB, forbidden)]
    # From 1.36 (RestartAllContainers) a sidecar's rules are judged like any container's.
    assert [path for _, path, _, _ in pod_causes(sidecar, "1.36")] == [
        f"{I0}.restartPolicyRules[0].action"
    ]
