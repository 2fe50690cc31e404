"""POD-020..POD-022 and POD-024: affinity, tolerations, topology spread and the pod's scalar
fields (upstream's TestValidateTolerations, TestValidateAffinity, TestValidateTopologySpread-
Constraints, TestValidatePodSpec cases)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pod_cases import S, job, pod_causes

INV, REQ, FORB, NS, DUP = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueNotSupported",
    "FieldValueDuplicate",
)
NA = f"{S}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def node_affinity(*expressions: dict[str, Any]) -> dict[str, Any]:
    return job(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
                }
            }
        }
    )


VALID: list[tuple[str, dict[str, Any]]] = [
    ("empty restartPolicy and dnsPolicy are defaulted", job(restartPolicy="", dnsPolicy="")),
    (
        "node affinity",
        node_affinity(
            {"key": "zone", "operator": "In", "values": ["a"]},
            {"key": "gpu", "operator": "Exists"},
            {"key": "n", "operator": "Gt", "values": ["3"]},
        ),
    ),
    (
        "preferred node affinity",
        job(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "a", "operator": "In", "values": ["has space"]}
                                ]
                            },
                        }
                    ]
                }
            }
        ),
    ),
    (
        "pod anti-affinity",
        job(
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "x"}},
                            "topologyKey": "kubernetes.io/hostname",
                            "namespaces": ["ns"],
                        }
                    ]
                }
            }
        ),
    ),
    (
        "tolerations",
        job(
            tolerations=[
                {"operator": "Exists"},
                {"key": "k", "value": "v", "effect": "NoSchedule"},
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
            ]
        ),
    ),
    (
        "spread",
        job(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 2,
                    "labelSelector": {"matchLabels": {"a": "b"}},
                    "matchLabelKeys": ["pod-template-hash"],
                }
            ]
        ),
    ),
    (
        "scalars",
        job(
            activeDeadlineSeconds=60,
            serviceAccountName="sa",
            priorityClassName="high",
            runtimeClassName="gvisor",
            preemptionPolicy="Never",
            readinessGates=[{"conditionType": "example.com/ready"}],
            schedulingGates=[{"name": "example.com/gate"}],
        ),
    ),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_scheduling_passes(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj) == []


T0 = f"{S}.tolerations[0]"
TS0 = f"{S}.topologySpreadConstraints[0]"
INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "In without values",
        node_affinity({"key": "zone", "operator": "In"}),
        [
            (
                "POD-020",
                f"{NA}[0].matchExpressions[0].values",
                REQ,
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            )
        ],
    ),
    (
        "Exists with values",
        node_affinity({"key": "zone", "operator": "Exists", "values": ["a"]}),
        [
            (
                "POD-020",
                f"{NA}[0].matchExpressions[0].values",
                FORB,
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        ],
    ),
    (
        "Gt with two values",
        node_affinity({"key": "n", "operator": "Gt", "values": ["1", "2"]}),
        [
            (
                "POD-020",
                f"{NA}[0].matchExpressions[0].values",
                REQ,
                "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
            )
        ],
    ),
    (
        "bad operator",
        node_affinity({"key": "n", "operator": "Equals", "values": ["1"]}),
        [
            (
                "POD-020",
                f"{NA}[0].matchExpressions[0].operator",
                INV,
                'Invalid value: "Equals": not a valid selector operator',
            )
        ],
    ),
    (
        "no terms",
        job(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            }
        ),
        [("POD-020", NA, REQ, "Required value: must have at least one node selector term")],
    ),
    (
        "weight",
        job(
            affinity={
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "podAffinityTerm": {"topologyKey": "zone"}}
                    ]
                }
            }
        ),
        [
            (
                "POD-020",
                f"{S}.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
                INV,
                "Invalid value: 0: must be in the range 1-100",
            )
        ],
    ),
    (
        "empty topologyKey",
        job(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]
                }
            }
        ),
        [
            (
                "POD-020",
                f"{S}.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
                REQ,
                "Required value: can not be empty",
            ),
            (
                "POD-020",
                f"{S}.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
                INV,
                'Invalid value: "": name part must be non-empty',
            ),
            (
                "POD-020",
                f"{S}.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
                INV,
                "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ],
    ),
    (
        "Exists with a value",
        job(tolerations=[{"key": "k", "operator": "Exists", "value": "a"}]),
        [
            (
                "POD-021",
                f"{T0}.operator",
                INV,
                "Invalid value: \"a\": value must be empty when `operator` is 'Exists'",
            )
        ],
    ),
    (
        "tolerationSeconds with NoSchedule",
        job(tolerations=[{"key": "k", "tolerationSeconds": 5, "effect": "NoSchedule"}]),
        [
            (
                "POD-021",
                f"{T0}.effect",
                INV,
                "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        ],
    ),
    (
        "empty key needs Exists",
        job(tolerations=[{"operator": "Equal", "value": "v"}]),
        [
            (
                "POD-021",
                f"{T0}.operator",
                INV,
                'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
            )
        ],
    ),
    (
        "bad effect and operator",
        job(tolerations=[{"key": "k", "operator": "In", "effect": "Never"}]),
        [
            (
                "POD-021",
                f"{T0}.operator",
                NS,
                'Unsupported value: "In": supported values: "Equal", "Exists"',
            ),
            (
                "POD-021",
                f"{T0}.effect",
                NS,
                'Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            ),
        ],
    ),
    (
        "Lt from 1.35",
        job(tolerations=[{"key": "k", "operator": "Lt", "value": "3"}]),
        [
            (
                "POD-021",
                f"{T0}.operator",
                NS,
                'Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"',
            )
        ],
    ),
    (
        "maxSkew 0",
        job(
            topologySpreadConstraints=[
                {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        ),
        [("POD-022", f"{TS0}.maxSkew", INV, "Invalid value: 0: must be greater than zero")],
    ),
    (
        "minDomains with ScheduleAnyway",
        job(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "minDomains": 2,
                }
            ]
        ),
        [
            (
                "POD-022",
                f"{TS0}.minDomains",
                INV,
                "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            )
        ],
    ),
    (
        "repeated pair",
        job(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            ]
        ),
        [
            (
                "POD-022",
                f"{TS0}.{{topologyKey, whenUnsatisfiable}}",
                DUP,
                'Duplicate value: "{zone, DoNotSchedule}"',
            )
        ],
    ),
    (
        "empty key, bad action",
        job(topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "Maybe"}]),
        [
            ("POD-022", f"{TS0}.topologyKey", REQ, "Required value: can not be empty"),
            (
                "POD-022",
                f"{TS0}.whenUnsatisfiable",
                NS,
                'Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
            ),
        ],
    ),
    (
        "activeDeadlineSeconds 0",
        job(activeDeadlineSeconds=0),
        [
            (
                "POD-024",
                f"{S}.activeDeadlineSeconds",
                INV,
                "Invalid value: 0: must be between 1 and 2147483647, inclusive",
            )
        ],
    ),
    (
        "preemptionPolicy",
        job(preemptionPolicy="Sometimes"),
        [
            (
                "POD-024",
                f"{S}.preemptionPolicy",
                NS,
                'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
            )
        ],
    ),
    (
        "scheduling gate duplicate",
        job(schedulingGates=[{"name": "a"}, {"name": "a"}]),
        [("POD-024", f"{S}.schedulingGates[1]", DUP, 'Duplicate value: "a"')],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_scheduling_is_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj) == expected


def test_lt_before_1_35_lists_only_equal_and_exists() -> None:
    obj = job(tolerations=[{"key": "k", "operator": "Gt", "value": "3"}])
    assert pod_causes(obj, "1.34") == [
        (
            "POD-021",
            f"{T0}.operator",
            NS,
            'Unsupported value: "Gt": supported values: "Equal", "Exists"',
        )
    ]


LABEL_VALUE = st.from_regex(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?", fullmatch=True)


@given(value=LABEL_VALUE)
def test_a_toleration_value_in_the_label_value_grammar_passes(value: str) -> None:
    assert pod_causes(job(tolerations=[{"key": "k", "value": value}])) == []


@given(value=st.text(alphabet="ab-_.!/ ", min_size=1, max_size=8))
def test_toleration_values_follow_the_label_value_grammar(value: str) -> None:
    import re

    ok = re.fullmatch(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", value) is not None
    assert (pod_causes(job(tolerations=[{"key": "k", "value": value}])) == []) == ok
