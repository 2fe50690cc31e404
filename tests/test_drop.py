"""DropDisabledTemplateFields (pkg/api/pod/util.go at v1.37.2, jobguard/validators/drop.py): a
field of a gate off by default in the judged release is dropped before validation, unless the
stored template uses it; per release, from the gates table (versions.GATES, DROPPED_FROM)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators.drop import drop_disabled_template_fields
from jobguard.validators.versions import RELEASES, Release
from tests.builders import create, cronjob, detailed_causes, job, settings, update
from tests.pod_cases import job as pod_job

S = "spec.template.spec"


def rules(obj: dict[str, Any], version: str, kind: str = "Job") -> list[tuple[str, str]]:
    return [(r, p) for r, p, _, _ in detailed_causes(create(obj, settings(version), kind=kind))]


def with_container(**fields: Any) -> dict[str, Any]:
    obj = pod_job()
    obj["spec"]["template"]["spec"]["containers"][0].update(fields)
    return obj


def test_container_restart_policies_are_refused_in_1_33_dropped_in_1_34_judged_from_1_35() -> None:
    never = with_container(restartPolicy="Never")
    bad = with_container(restartPolicy="Bad")
    forbidden = [("POD-012", f"{S}.containers[0].restartPolicy")]
    assert rules(never, "1.33") == forbidden  # no drop before the gate existed
    assert rules(bad, "1.33") == forbidden
    assert rules(never, "1.34") == []  # dropContainerRestartRules
    assert rules(bad, "1.34") == []
    for version in ("1.35", "1.36", "1.37"):
        assert rules(never, version) == []
        assert rules(bad, version) == [("POD-012", f"{S}.containers[0].restartPolicy")]


def test_an_init_container_keeps_always_and_loses_other_policies_in_1_34() -> None:
    obj = pod_job(
        initContainers=[
            {"name": "sidecar", "image": "busybox", "restartPolicy": "Always"},
            {"name": "init", "image": "busybox", "restartPolicy": "OnFailure"},
        ]
    )
    assert rules(obj, "1.34") == []
    assert rules(obj, "1.33") == [("POD-012", f"{S}.initContainers[1].restartPolicy")]
    kept = drop_disabled_template_fields(obj["spec"]["template"], None, "1.34")
    assert [c.get("restartPolicy") for c in kept["spec"]["initContainers"]] == ["Always", None]


def test_a_stored_template_using_the_field_keeps_it_judged() -> None:
    # 1.34: the stored template already sets a container restartPolicy, so nothing is dropped
    # and the relaxation of the update options lets it be judged.
    stored = job()
    stored["spec"]["template"]["spec"]["containers"][0]["restartPolicy"] = "Bad"
    new = copy.deepcopy(stored)
    verdict = update(new, stored, settings("1.34"))
    assert [(r, p) for r, p, _, _ in detailed_causes(verdict)] == [
        ("POD-012", f"{S}.containers[0].restartPolicy")
    ]


@pytest.mark.parametrize(
    ("name", "spec", "dropped_in", "errors"),
    [
        (
            "pod-level resources",
            {"resources": {"limits": {"cpu": "-1"}}},
            {"1.33"},
            [("POD-009", f"{S}.resources.limits[cpu]")],
        ),
        (
            "resource claims",
            {"resourceClaims": [{"name": "Bad_"}]},
            {"1.33"},
            [("POD-025", f"{S}.resourceClaims[0].name"), ("POD-025", f"{S}.resourceClaims[0]")],
        ),
        (
            "an image volume and its mount",
            {
                "volumes": [{"name": "v", "image": {"reference": "x", "pullPolicy": "Bad"}}],
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                    }
                ],
            },
            {"1.33", "1.34"},
            [
                ("POD-015", f"{S}.volumes[0].image.pullPolicy"),
                ("POD-008", f"{S}.containers[0].volumeMounts[0].name"),
            ],
        ),
        (
            "a cluster trust bundle projection",
            {"volumes": [{"name": "v", "projected": {"sources": [{"clusterTrustBundle": {}}]}}]},
            {"1.33", "1.34", "1.35", "1.36"},
            [
                ("POD-015", f"{S}.volumes[0].projected.sources[0].clusterTrustBundle"),
                ("POD-015", f"{S}.volumes[0].projected.sources[0].clusterTrustBundle.path"),
            ],
        ),
        (
            "a pod certificate projection",
            {"volumes": [{"name": "v", "projected": {"sources": [{"podCertificate": {}}]}}]},
            {"1.33", "1.34", "1.35", "1.36"},  # 1.33's schema refuses it first (SC-001)
            [
                ("POD-015", f"{S}.volumes[0].projected.sources[0].podCertificate.signerName"),
                ("POD-015", f"{S}.volumes[0].projected.sources[0].podCertificate.keyType"),
                ("POD-015", f"{S}.volumes[0].projected.sources[0].podCertificate"),
            ],
        ),
        (
            "a hostname override",
            {"hostnameOverride": "Bad_Name"},
            {"1.33", "1.34"},
            [("POD-023", f"{S}.hostnameOverride")],
        ),
    ],
)
def test_each_gate_drops_where_it_is_off(
    name: str, spec: dict[str, Any], dropped_in: set[str], errors: list[tuple[str, str]]
) -> None:
    obj = pod_job(**spec)
    template = obj["spec"]["template"]
    for version in RELEASES:
        kept = drop_disabled_template_fields(template, None, version)
        assert (kept is not template) == (version in dropped_in), version
        found = [e for e in rules(obj, version) if not e[0].startswith("SC-")]
        if version in dropped_in:
            assert found == [], version
        else:
            assert sorted(found) == sorted(errors), version


def test_alpha_fields_are_dropped_so_an_update_of_a_running_job_may_add_them() -> None:
    # TM-001 compares the template after the drop: the stored template does not use
    # stopSignal, so the new one's is gone before the comparison (the API server accepts it).
    stored = job()
    new = copy.deepcopy(stored)
    new["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {"stopSignal": "SIGTERM"}
    assert update(new, stored, settings("1.37")).violations == []
    # Once the stored template uses it, it is kept, and a change of it is one.
    stored_with = copy.deepcopy(new)
    changed = copy.deepcopy(new)
    changed["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {"stopSignal": "SIGKILL"}
    assert [
        r for r, _, _, _ in detailed_causes(update(changed, stored_with, settings("1.37")))
    ] == ["TM-001"]


def test_volume_user_fields_are_dropped_everywhere_they_are_written() -> None:
    # AtomicWriteVolumeUserFields: defaultUser and the items' user of secret, configMap,
    # downwardAPI and projected volumes, and of each projection.
    spec = {
        "volumes": [
            {
                "name": "a",
                "secret": {
                    "secretName": "s",
                    "defaultUser": 1,
                    "items": [{"key": "k", "path": "p", "user": 2}],
                },
            },
            {
                "name": "b",
                "projected": {
                    "defaultUser": 3,
                    "sources": [
                        {"serviceAccountToken": {"path": "t", "user": 4}},
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "path": "n",
                                        "fieldRef": {"fieldPath": "metadata.name"},
                                        "user": 5,
                                    }
                                ]
                            }
                        },
                    ],
                },
            },
        ]
    }
    template = pod_job(**spec)["spec"]["template"]
    kept = drop_disabled_template_fields(template, None, "1.37")
    assert kept["spec"]["volumes"] == [
        {"name": "a", "secret": {"secretName": "s", "items": [{"key": "k", "path": "p"}]}},
        {
            "name": "b",
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"path": "t"}},
                    {
                        "downwardAPI": {
                            "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]
                        }
                    },
                ]
            },
        },
    ]
    assert drop_disabled_template_fields(template, template, "1.37") is template


def test_cronjob_templates_are_dropped_too() -> None:
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["restartPolicy"] = (
        "Never"
    )
    assert rules(obj, "1.34", kind="CronJob") == []
    assert rules(obj, "1.33", kind="CronJob") == [
        ("POD-012", "spec.jobTemplate.spec.template.spec.containers[0].restartPolicy")
    ]


def test_nothing_dropped_is_the_same_object_and_the_request_is_left_alone() -> None:
    template = pod_job()["spec"]["template"]
    assert drop_disabled_template_fields(template, None, "1.37") is template
    template["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    before = copy.deepcopy(template)
    kept = drop_disabled_template_fields(template, None, "1.37")
    assert "schedulingGroup" not in kept["spec"] and template == before
    assert drop_disabled_template_fields(template, template, "1.37") is template
    assert drop_disabled_template_fields("x", None, "1.37") == "x"
    # A sidecar's Always is kept in 1.34: nothing to drop.
    sidecar = pod_job(initContainers=[{"name": "s", "image": "b", "restartPolicy": "Always"}])
    template = sidecar["spec"]["template"]
    assert drop_disabled_template_fields(template, None, "1.34") is template


def test_which_releases_drop_which_gates() -> None:
    assert [v for v in RELEASES if Release.of(v).drops("ContainerRestartRules")] == ["1.34"]
    assert [v for v in RELEASES if Release.of(v).drops("PodCertificateRequest")] == [
        "1.33",
        "1.34",
        "1.35",
        "1.36",
    ]
    assert all(Release.of(v).drops("ContainerStopSignals") for v in RELEASES)
