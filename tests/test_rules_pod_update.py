"""Upstream's update-time pod validation options (pkg/api/pod/util.go
GetValidationOptionsFromPodSpecAndMeta, the Job and CronJob strategies): a value the stored
template already holds stays allowed on UPDATE, the same value is refused on CREATE and when the
stored template lacks it. Each case: (name, pod-spec fields, the CREATE error's rule, path,
reason and message, the release)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import create, cronjob, detailed_causes, job, settings, update

S = "spec.template.spec"
CJ = "spec.jobTemplate.spec.template.spec"
SA = {"capabilities": {"add": ["CAP_SYS_ADMIN"]}, "allowPrivilegeEscalation": False}
BAD = "-bad-"
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
    "[A-Za-z0-9])?')"
)
EXPRESSION = {"matchExpressions": [{"key": "app", "operator": "In", "values": [BAD]}]}
DEVICE = {"name": "d", "devicePath": "/dev/x"}
CLAIM = {"name": "d", "persistentVolumeClaim": {"claimName": "c"}}

CASES: list[tuple[str, dict[str, Any], tuple[str, str, str, str], str]] = [
    (
        "topology spread selector value",
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": EXPRESSION,
                }
            ]
        },
        (
            "POD-022",
            "topologySpreadConstraints[0].labelSelector.matchExpressions[0].values[0]",
            "FieldValueInvalid",
            f'Invalid value: "{BAD}": {LABEL_VALUE}',
        ),
        "1.37",
    ),
    (
        "pod affinity selector value",
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "zone", "labelSelector": EXPRESSION}
                    ]
                }
            }
        },
        (
            "POD-020",
            "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".labelSelector.matchExpressions[0].values[0]",
            "FieldValueInvalid",
            f'Invalid value: "{BAD}": {LABEL_VALUE}',
        ),
        "1.36",
    ),
    (
        "required node affinity value",
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "k", "operator": "In", "values": [BAD]}]}
                        ]
                    }
                }
            }
        },
        (
            "POD-020",
            "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0].values[0]",
            "FieldValueInvalid",
            f'Invalid value: "{BAD}": {LABEL_VALUE}',
        ),
        "1.35",
    ),
    (
        "namespaced sysctl with hostNetwork",
        {
            "hostNetwork": True,
            "securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1"}]},
        },
        (
            "POD-018",
            "securityContext.sysctls[0].name",
            "FieldValueInvalid",
            "Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is true",
        ),
        "1.37",
    ),
    (
        "absolute projected token path",
        {
            "volumes": [
                {
                    "name": "t",
                    "projected": {"sources": [{"serviceAccountToken": {"path": "/token"}}]},
                }
            ]
        },
        (
            "POD-015",
            "volumes[0].projected.path",
            "FieldValueInvalid",
            'Invalid value: "/token": must be a relative path',
        ),
        "1.37",
    ),
    (
        "seLinuxChangePolicy MountOption before 1.37",
        {"securityContext": {"seLinuxChangePolicy": "MountOption"}},
        (
            "POD-018",
            "securityContext.seLinuxChangePolicy",
            "FieldValueNotSupported",
            'Unsupported value: "MountOption": supported values: "Recursive"',
        ),
        "1.36",
    ),
    (
        "Lt toleration",
        {"tolerations": [{"key": "k", "operator": "Lt", "value": "5", "effect": "NoSchedule"}]},
        (
            "POD-021",
            "tolerations[0].operator",
            "FieldValueNotSupported",
            'Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"',
        ),
        "1.37",
    ),
    (
        "hostUsers false with volumeDevices",
        {
            "hostUsers": False,
            "volumes": [CLAIM],
            "containers": [{"name": "main", "image": "busybox", "volumeDevices": [DEVICE]}],
        },
        (
            "POD-018",
            "containers[0].volumeDevices",
            "FieldValueForbidden",
            "Forbidden: when `hostUsers` is false",
        ),
        "1.37",
    ),
    (
        "indivisible hugepages",
        {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"},
                        "requests": {"hugepages-2Mi": "3Mi", "memory": "1Gi"},
                    },
                }
            ]
        },
        (
            "POD-009",
            "containers[0].resources.limits[hugepages-2Mi]",
            "FieldValueInvalid",
            'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
        ),
        "1.37",
    ),
    (
        "empty image volume reference (1.37)",
        {"volumes": [{"name": "i", "image": {"pullPolicy": "IfNotPresent"}}]},
        ("POD-015", "volumes[0].image.reference", "FieldValueRequired", "Required value"),
        "1.37",
    ),
    (
        "RestartContainer resize policy of a non-sidecar init container (1.36)",
        {
            "restartPolicy": "OnFailure",
            "initContainers": [
                {
                    "name": "init",
                    "image": "busybox",
                    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}],
                }
            ],
        },
        (
            "POD-013",
            "initContainers[0].resizePolicy[0].restartPolicy",
            "FieldValueInvalid",
            "must not be set to 'RestartContainer' for non-sidecar initContainers",
        ),
        "1.36",
    ),
    (
        "CAP_SYS_ADMIN without privilege escalation (1.37)",
        {"containers": [{"name": "main", "image": "busybox", "securityContext": SA}]},
        (
            "POD-018",
            "containers[0].securityContext",
            "FieldValueInvalid",
            "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
        ),
        "1.37",
    ),
]


def _pod_errors(verdict: Any) -> list[tuple[str, str, str, str]]:
    return [c for c in detailed_causes(verdict) if c[0].startswith("POD-")]


def _with(obj: dict[str, Any], template_spec: dict[str, Any], cron: bool) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    spec = out["spec"]["jobTemplate"]["spec"] if cron else out["spec"]
    spec["template"]["spec"].update(copy.deepcopy(template_spec))
    return out


@pytest.mark.parametrize(("name", "fields", "error", "version"), CASES, ids=[c[0] for c in CASES])
def test_a_value_the_stored_template_holds_stays_allowed(
    name: str, fields: dict[str, Any], error: tuple[str, str, str, str], version: str
) -> None:
    s = settings(version)
    rule, path, reason, body = error
    # CREATE: refused with upstream's path and message.
    found = _pod_errors(create(_with(job(), fields, False), s))
    assert found and found[0][:3] == (rule, f"{S}.{path}", reason)
    assert body in found[0][3]
    # UPDATE of a Job that holds it (the template unchanged): no pod error.
    stored = _with(job(), fields, False)
    changed = copy.deepcopy(stored)
    changed["metadata"]["labels"] = {"team": "a"}
    assert _pod_errors(update(changed, stored, s)) == []
    # CronJob: the template is mutable; an update that keeps the value is allowed, one that
    # brings it in is refused.
    plain = cronjob()
    held = _with(plain, fields, True)
    edited = copy.deepcopy(held)
    edited["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    assert _pod_errors(update(edited, held, s, kind="CronJob")) == []
    found = _pod_errors(update(held, plain, s, kind="CronJob"))
    assert found and found[0][:3] == (rule, f"{CJ}.{path}", reason)


def test_mount_option_is_allowed_on_create_from_1_37() -> None:
    fields = {"securityContext": {"seLinuxChangePolicy": "MountOption"}}
    assert _pod_errors(create(_with(job(), fields, False), settings("1.37"))) == []
    bad = {"securityContext": {"seLinuxChangePolicy": "Other"}}
    assert _pod_errors(create(_with(job(), bad, False), settings("1.37"))) == [
        (
            "POD-018",
            f"{S}.securityContext.seLinuxChangePolicy",
            "FieldValueNotSupported",
            'Unsupported value: "Other": supported values: "MountOption", "Recursive"',
        )
    ]


def test_a_kept_lt_toleration_has_its_value_checked() -> None:
    fields = {
        "tolerations": [{"key": "k", "operator": "Gt", "value": "05", "effect": "NoSchedule"}]
    }
    stored = _with(cronjob(), fields, True)
    edited = copy.deepcopy(stored)
    edited["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    assert _pod_errors(update(edited, stored, settings("1.37"), kind="CronJob")) == [
        (
            "POD-021",
            f"{CJ}.tolerations[0].value",
            "FieldValueInvalid",
            'Invalid value: "05": must be a valid decimal integer in canonical form',
        )
    ]


def test_a_manual_selector_keeps_an_invalid_value_it_already_holds() -> None:
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": [BAD]}]}
    stored = job(manualSelector=True, selector=selector)
    stored["spec"]["template"]["metadata"]["labels"] = {"app": "x"}
    found = [c for c in detailed_causes(create(stored, settings("1.37"))) if c[0] == "TM-007"]
    assert found == [
        (
            "TM-007",
            "spec.selector.matchExpressions[0].values[0]",
            "FieldValueInvalid",
            f'Invalid value: "{BAD}": {LABEL_VALUE}',
        )
    ]
    changed = copy.deepcopy(stored)
    changed["metadata"]["labels"] = {"team": "a"}
    assert [c for c in detailed_causes(update(changed, stored, settings("1.37")))] == []


def test_match_label_keys_legacy_check_relaxed_by_the_stored_template_in_1_33() -> None:
    """1.33 (MatchLabelKeysInPodTopologySpreadSelectorMerge off): the legacy
    ValidateMatchLabelKeysInTopologySpread, unless the stored template fails it
    (OldPodViolatesLegacyMatchLabelKeysValidation: the preferred check then)."""
    fields = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "x"}},
                "matchLabelKeys": ["app"],
            }
        ]
    }
    expected = [
        (
            "POD-022",
            f"{CJ}.topologySpreadConstraints[0].matchLabelKeys[0]",
            "FieldValueInvalid",
            'Invalid value: "app": exists in both matchLabelKeys and labelSelector',
        )
    ]
    plain = cronjob()
    held = _with(plain, fields, True)
    assert _pod_errors(update(held, plain, settings("1.33"), kind="CronJob")) == expected
    edited = copy.deepcopy(held)
    edited["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    assert _pod_errors(update(edited, held, settings("1.33"), kind="CronJob")) == []
    # From 1.34 the preferred check: a key of matchLabels only is no conflict.
    assert _pod_errors(update(held, plain, settings("1.34"), kind="CronJob")) == []
