"""The pod template essentials (POD-001..POD-010) on Jobs and CronJob templates."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import create, detailed_causes, job, settings, update
from tests.pod_cases import QUANTITY_FORMAT
from tests.pod_cases import job as pod
from tests.pod_cases import with_container as container

C0 = "spec.template.spec.containers[0]"
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def test_the_issue_examples_no_containers_and_no_image() -> None:
    assert detailed_causes(create(pod(containers=[]))) == [
        ("POD-001", "spec.template.spec.containers", "FieldValueRequired", "Required value")
    ]
    obj = pod(containers=[{"name": "main"}])
    assert detailed_causes(create(obj)) == [
        ("POD-003", f"{C0}.image", "FieldValueRequired", "Required value")
    ]


def test_a_missing_containers_list_is_required_too() -> None:
    obj = pod()
    del obj["spec"]["template"]["spec"]["containers"]
    assert [rule for rule, *_ in detailed_causes(create(obj))] == ["POD-001"]


def test_container_names_are_labels_unique_across_init_containers() -> None:
    obj = pod(
        containers=[{"name": "Main", "image": "a"}, {"name": "b", "image": "a"}, {"image": "a"}],
        initContainers=[{"name": "b", "image": "a"}, {"name": "init", "image": "a"}],
    )
    assert detailed_causes(create(obj)) == [
        ("POD-002", f"{C0}.name", "FieldValueInvalid", f'Invalid value: "Main": {DNS_LABEL}'),
        (
            "POD-002",
            "spec.template.spec.containers[2].name",
            "FieldValueRequired",
            "Required value",
        ),
        (
            "POD-002",
            "spec.template.spec.initContainers[0].name",
            "FieldValueDuplicate",
            'Duplicate value: "b"',
        ),
    ]


def test_image_pull_policy_values_and_the_defaulted_empty_one() -> None:
    for policy in ("Always", "IfNotPresent", "Never", "", None):
        assert create(container(imagePullPolicy=policy)).violations == []
    assert detailed_causes(create(container(imagePullPolicy="Sometimes"))) == [
        (
            "POD-004",
            f"{C0}.imagePullPolicy",
            "FieldValueNotSupported",
            'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
        )
    ]


def test_ports() -> None:
    ports = [
        {"containerPort": 8080, "name": "http"},
        {"containerPort": 70000, "name": "http"},
        {"name": "Metrics--"},
        {"containerPort": 9090, "protocol": "HTTP", "hostPort": 0},
        {"containerPort": 53, "protocol": "UDP", "hostPort": 53},
    ]
    assert detailed_causes(create(container(ports=ports))) == [
        ("POD-005", f"{C0}.ports[1].name", "FieldValueDuplicate", 'Duplicate value: "http"'),
        (
            "POD-005",
            f"{C0}.ports[1].containerPort",
            "FieldValueInvalid",
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            "POD-005",
            f"{C0}.ports[2].name",
            "FieldValueInvalid",
            'Invalid value: "Metrics--": must contain only alpha-numeric characters (a-z, 0-9), '
            "and hyphens (-)",
        ),
        (
            "POD-005",
            f"{C0}.ports[2].name",
            "FieldValueInvalid",
            'Invalid value: "Metrics--": must not contain consecutive hyphens',
        ),
        (
            "POD-005",
            f"{C0}.ports[2].name",
            "FieldValueInvalid",
            'Invalid value: "Metrics--": must not begin or end with a hyphen',
        ),
        ("POD-005", f"{C0}.ports[2].containerPort", "FieldValueRequired", "Required value"),
        (
            "POD-005",
            f"{C0}.ports[3].protocol",
            "FieldValueNotSupported",
            'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        ),
    ]


def test_host_ports_are_unique_per_protocol_and_ip() -> None:
    obj = pod(
        containers=[
            {"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]},
            {
                "name": "b",
                "image": "x",
                "ports": [
                    {"containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
                    {"containerPort": 80, "hostPort": 8080, "protocol": "UDP"},
                ],
            },
        ]
    )
    assert detailed_causes(create(obj)) == [
        (
            "POD-005",
            "spec.template.spec.containers[1].ports[0].hostPort",
            "FieldValueDuplicate",
            'Duplicate value: "TCP//8080"',
        )
    ]


def test_env_names_follow_the_relaxed_rule() -> None:
    env = [{"name": "my.env-name"}, {"name": "1STARTS_WITH_DIGIT"}, {"name": "A=B"}, {"value": "x"}]
    assert detailed_causes(create(container(env=env))) == [
        (
            "POD-006",
            f"{C0}.env[2].name",
            "FieldValueInvalid",
            'Invalid value: "A=B": a valid environment variable name must consist only of '
            "printable ASCII characters other than '='",
        ),
        ("POD-006", f"{C0}.env[3].name", "FieldValueRequired", "Required value"),
    ]


def test_volumes_and_mounts() -> None:
    obj = pod(
        volumes=[{"name": "data", "emptyDir": {}}, {"name": "data"}, {"name": "Cache"}],
        containers=[
            {
                "name": "main",
                "image": "x",
                "volumeMounts": [
                    {"name": "data", "mountPath": "/data"},
                    {"name": "Cache", "mountPath": "/data"},
                    {"name": "", "mountPath": ""},
                ],
            }
        ],
    )
    assert detailed_causes(create(obj)) == [
        (
            "POD-007",
            "spec.template.spec.volumes[1].name",
            "FieldValueDuplicate",
            'Duplicate value: "data"',
        ),
        (
            "POD-007",
            "spec.template.spec.volumes[2].name",
            "FieldValueInvalid",
            f'Invalid value: "Cache": {DNS_LABEL}',
        ),
        ("POD-008", f"{C0}.volumeMounts[1].name", "FieldValueNotFound", 'Not found: "Cache"'),
        (
            "POD-008",
            f"{C0}.volumeMounts[1].mountPath",
            "FieldValueInvalid",
            'Invalid value: "/data": must be unique',
        ),
        ("POD-008", f"{C0}.volumeMounts[2].name", "FieldValueRequired", "Required value"),
        ("POD-008", f"{C0}.volumeMounts[2].name", "FieldValueNotFound", 'Not found: ""'),
        ("POD-008", f"{C0}.volumeMounts[2].mountPath", "FieldValueRequired", "Required value"),
    ]


def resources(**requirements: Any) -> dict[str, Any]:
    return container(resources=requirements)


@pytest.mark.parametrize(
    "requirements",
    [
        {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": 1, "memory": "1024Mi"}},
        {"requests": {"cpu": 0.5, "ephemeral-storage": "2G"}},
        {"limits": {"nvidia.com/gpu": 2}},
        {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}},
        {"requests": {"cpu": "1", "hugepages-2Mi": "4Mi"}, "limits": {"hugepages-2Mi": "4Mi"}},
        {"requests": {"cpu": "1e-3"}, "limits": {"cpu": "1m"}},
        {"requests": {"cpu": " 250m "}},
    ],
)
def test_resources_the_api_server_accepts(requirements: dict[str, Any]) -> None:
    assert create(resources(**requirements)).violations == []


def test_requests_may_not_exceed_limits_in_canonical_form() -> None:
    obj = resources(
        requests={"cpu": "1.5", "memory": "2Gi"}, limits={"cpu": "1", "memory": "1.5Gi"}
    )
    assert detailed_causes(create(obj)) == [
        (
            "POD-010",
            f"{C0}.resources.requests",
            "FieldValueInvalid",
            'Invalid value: "1500m": must be less than or equal to cpu limit of 1',
        ),
        (
            "POD-010",
            f"{C0}.resources.requests",
            "FieldValueInvalid",
            'Invalid value: "2Gi": must be less than or equal to memory limit of 1536Mi',
        ),
    ]


def test_extended_resources_need_equal_integer_limits() -> None:
    gpu = "nvidia.com/gpu"
    assert detailed_causes(create(resources(requests={gpu: "1"}))) == [
        (
            "POD-010",
            f"{C0}.resources.limits",
            "FieldValueRequired",
            "Required value: Limit must be set for non overcommitable resources",
        )
    ]
    assert detailed_causes(create(resources(requests={gpu: "1"}, limits={gpu: "2"}))) == [
        (
            "POD-010",
            f"{C0}.resources.requests",
            "FieldValueInvalid",
            'Invalid value: "1": must be equal to nvidia.com/gpu limit of 2',
        )
    ]
    assert detailed_causes(create(resources(limits={gpu: "0.5"}))) == [
        (
            "POD-009",
            f"{C0}.resources.limits[{gpu}]",
            "FieldValueInvalid",
            'Invalid value: "500m": must be an integer',
        )
    ]


def test_resource_names_and_values() -> None:
    obj = resources(limits={"cpus": "1", "memory": "-1Gi", "example.com/Bad_": "1"})
    assert detailed_causes(create(obj)) == [
        (
            "POD-009",
            f"{C0}.resources.limits[cpus]",
            "FieldValueInvalid",
            'Invalid value: "cpus": must be a standard resource type or fully qualified',
        ),
        (
            "POD-009",
            f"{C0}.resources.limits[cpus]",
            "FieldValueInvalid",
            'Invalid value: "cpus": must be a standard resource for containers',
        ),
        (
            "POD-009",
            f"{C0}.resources.limits[memory]",
            "FieldValueInvalid",
            'Invalid value: "-1Gi": must be greater than or equal to 0',
        ),
        (
            "POD-009",
            f"{C0}.resources.limits[example.com/Bad_]",
            "FieldValueInvalid",
            'Invalid value: "example.com/Bad_": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            "POD-009",
            f"{C0}.resources.limits[example.com/Bad_]",
            "FieldValueInvalid",
            'Invalid value: "example.com/Bad_": doesn\'t follow extended resource name standard',
        ),
    ]


def test_wrongly_typed_quantities_are_left_to_the_schema_rules() -> None:
    assert create(resources(requests={"cpu": True, "memory": {"a": 1}})).violations == []


SUFFIX = "unable to parse quantity's suffix"


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("2x", QUANTITY_FORMAT),
        ("1.5.5", QUANTITY_FORMAT),
        ("", QUANTITY_FORMAT),
        ("1Kb", QUANTITY_FORMAT),
        ("1e3m", QUANTITY_FORMAT),
        ("1K", SUFFIX),
        ("1e", SUFFIX),
        ("1Ki2", SUFFIX),
    ],
)
def test_unparsable_quantities_are_reported_on_create(value: str, detail: str) -> None:
    obj = resources(requests={"cpu": value})
    assert detailed_causes(create(obj)) == [
        (
            "POD-009",
            f"{C0}.resources.requests[cpu]",
            "FieldValueInvalid",
            f'Invalid value: "{value}": {detail}',
        )
    ]


def test_hugepages() -> None:
    obj = resources(limits={"hugepages-2Mi": "3Mi"}, requests={"hugepages-2Mi": "3Mi"})
    multiple = 'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi'
    assert detailed_causes(create(obj)) == [
        ("POD-009", f"{C0}.resources.limits[hugepages-2Mi]", "FieldValueInvalid", multiple),
        ("POD-009", f"{C0}.resources.requests[hugepages-2Mi]", "FieldValueInvalid", multiple),
        (
            "POD-010",
            f"{C0}.resources",
            "FieldValueForbidden",
            "Forbidden: HugePages require cpu or memory",
        ),
    ]


def test_a_cronjob_template_is_judged_at_its_path() -> None:
    obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {
            "schedule": "@daily",
            "jobTemplate": {"spec": pod(containers=[{"name": "x"}])["spec"]},
        },
    }
    path = "spec.jobTemplate.spec.template.spec.containers[0].image"
    assert detailed_causes(create(obj, kind="CronJob")) == [
        ("POD-003", path, "FieldValueRequired", "Required value")
    ]


def test_jobs_prepared_by_the_api_server_pass_on_create_and_update() -> None:
    stored = job()
    pod_spec = stored["spec"]["template"]["spec"]
    pod_spec |= {"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler"}
    pod_spec["containers"][0] |= {
        "imagePullPolicy": "Always",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "128Mi"}},
    }
    assert create(stored).violations == []
    for version in ("1.33", "1.36"):
        assert update(copy.deepcopy(stored), stored, settings(version)).violations == []


def test_update_reports_pod_errors_twice_as_upstream_and_leaves_unparsable_quantities() -> None:
    old = job(suspend=True)
    old["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    verdict = update(copy.deepcopy(old), old)
    assert [v.error.rule for v in verdict.violations] == ["POD-003", "POD-003"]
    new = copy.deepcopy(job(suspend=True))
    new["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2x"
    assert [v.error.rule for v in update(new, job(suspend=True)).unique()] == ["TM-001"]


def test_booleans_do_not_share_a_judgement_with_numbers() -> None:
    # True == 1 in Python: a cached verdict for one must not answer for the other.
    exceeding = resources(requests={"cpu": 2}, limits={"cpu": 1})
    assert [rule for rule, *_ in detailed_causes(create(exceeding))] == ["POD-010"]
    assert create(resources(requests={"cpu": 2}, limits={"cpu": True})).violations == []
    assert [rule for rule, *_ in detailed_causes(create(exceeding))] == ["POD-010"]


def _one_error_per_part() -> dict[str, Any]:
    """A template with one error in each part of upstream's ValidatePodSpec."""
    obj = pod(
        volumes=[{"name": "Bad_Vol", "emptyDir": {}}],
        containers=[{"name": "main", "ports": [{"containerPort": 80, "hostPort": 81}]}],
        initContainers=[{"name": "init"}],
        hostNetwork=True,
        dnsPolicy="Bad",
        nodeSelector={"a": "bad value!"},
        securityContext={"runAsUser": -1},
        shareProcessNamespace=True,
        hostPID=True,
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
            }
        },
        readinessGates=[{"conditionType": "bad gate!"}],
        schedulingGates=[{"name": "bad gate!"}],
        topologySpreadConstraints=[
            {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        hostname="Bad_Host",
        serviceAccountName="Bad_SA",
        activeDeadlineSeconds=0,
        tolerations=[{"operator": "Bad"}],
        hostAliases=[{"ip": "notip"}],
        priorityClassName="Bad_PC",
        overhead={"cpu": "-1"},
    )
    obj["spec"]["template"]["metadata"] = {"labels": {"a": "bad value!"}}
    return obj


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_pod_spec_errors_come_in_validate_pod_spec_order(version: str) -> None:
    """ValidatePodTemplateSpec then ValidatePodSpec, part by part (v1.37.2): volumes,
    containers, init containers, host-network ports, dnsPolicy, nodeSelector, the security
    context (shareProcessNamespace inside it before 1.37, its own step after), affinity,
    readiness and scheduling gates, spread constraints, serviceAccountName,
    activeDeadlineSeconds, hostname, tolerations, hostAliases, priorityClassName, overhead."""
    spec = "spec.template.spec"
    share = f"{spec}.securityContext" if version == "1.36" else spec
    node_terms = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    paths = [
        path
        for _, path, _, _ in detailed_causes(create(_one_error_per_part(), settings(version)))
        if path.startswith("spec.template")
    ]
    assert paths == [
        "spec.template.labels",
        f"{spec}.volumes[0].name",
        f"{spec}.containers[0].image",
        f"{spec}.initContainers[0].image",
        f"{spec}.containers[0].ports[0].hostPort",
        f"{spec}.dnsPolicy",
        f"{spec}.nodeSelector",
        f"{spec}.securityContext.runAsUser",
        f"{share}.shareProcessNamespace",
        f"{spec}.{node_terms}.nodeSelectorTerms",
        f"{spec}.readinessGates[0].conditionType",
        f"{spec}.schedulingGates[0]",
        f"{spec}.topologySpreadConstraints[0].maxSkew",
        f"{spec}.serviceAccountName",
        f"{spec}.activeDeadlineSeconds",
        f"{spec}.hostname",
        f"{spec}.tolerations[0].operator",
        f"{spec}.tolerations[0].operator",
        f"{spec}.hostAliases[0].ip",
        f"{spec}.priorityClassName",
        f"{spec}.overhead.limits[cpu]",
    ]
