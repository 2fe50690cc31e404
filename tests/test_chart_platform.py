"""The chart where platform teams install it (rendered by Helm's engine like tests/test_chart.py):
as a subchart (Helm's `global` values) and with the usual naming and label values, a NetworkPolicy
that opens egress only for what calls the API server, the ResourceQuota pods of a system
priority class need outside kube-system, a startup probe and an image pinned by digest."""

from __future__ import annotations

import base64
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml
from cryptography import x509

from tests.test_chart import CHART, KUBERNETES, NAMESPACE, render

DIGEST = "sha256:" + "ab" * 32
API_SERVER_AND_DNS = [
    {"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]},
    {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
]


def render_in(namespace: str, values: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    chart = helm.Chart.load(str(CHART))
    manifests = chart.render(values or {}, name="jobguard", namespace=namespace, is_install=True)
    return {
        f"{doc['kind']}/{doc['metadata']['name']}": doc
        for path, text in manifests.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    }


def _pod(objects: dict[str, dict[str, Any]], name: str = "jobguard") -> dict[str, Any]:
    pod: dict[str, Any] = objects[f"Deployment/{name}"]["spec"]["template"]["spec"]
    return pod


def test_global_values_of_a_parent_chart_are_accepted() -> None:
    objects = render({"global": {"imageRegistry": "mirror.example", "storageClass": "fast"}})
    assert "Deployment/jobguard" in objects


def test_name_overrides_and_common_labels() -> None:
    objects = render({"nameOverride": "admission", "commonLabels": {"team": "platform"}})
    assert "Deployment/jobguard-admission" in objects
    deployment = objects["Deployment/jobguard-admission"]
    assert deployment["metadata"]["labels"]["team"] == "platform"
    assert deployment["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/name": "admission",
        "app.kubernetes.io/instance": "jobguard",
    }
    assert deployment["spec"]["template"]["metadata"]["labels"]["team"] == "platform"
    objects = render({"fullnameOverride": "admission-jobs"})
    assert {"Deployment/admission-jobs", "Service/admission-jobs"} <= set(objects)
    service = objects["Service/admission-jobs"]["metadata"]["name"]
    args = objects["Deployment/admission-jobs"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--register-webhooks=jobguard-system/{service}" in args
    assert "--webhook-name=admission-jobs" in args
    assert "ClusterRole/admission-jobs-webhooks" in objects


def test_network_policy_has_no_egress_unless_a_feature_calls_the_api_server() -> None:
    rendered = {
        "registration": "rendered",
        "rendered": "kind: MutatingWebhookConfiguration\nmetadata: {name: jobguard}\nwebhooks: []\n",
    }
    policy = render({"networkPolicy": {"enabled": True}, "webhook": rendered})[
        "NetworkPolicy/jobguard"
    ]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["egress"] == []
    for values in (
        {"audit": {"enabled": True}, "webhook": rendered},
        {"config": {"kubernetesVersion": "auto"}, "webhook": rendered},
        {},  # the leader writes the webhook configurations (the default)
    ):
        policy = render({"networkPolicy": {"enabled": True}, **values})["NetworkPolicy/jobguard"]
        kubernetes_validate.validate(policy, KUBERNETES, strict=True)
        assert policy["spec"]["egress"] == API_SERVER_AND_DNS


def test_network_policy_egress_peers_and_ports_are_settable() -> None:
    api_server = [{"ipBlock": {"cidr": "10.0.0.1/32"}}]
    dns = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}]
    policy = render(
        {
            "audit": {"enabled": True},
            "networkPolicy": {
                "enabled": True,
                "apiServer": {"ports": [16443], "to": api_server},
                "dns": {"to": dns},
            },
        }
    )["NetworkPolicy/jobguard"]
    kubernetes_validate.validate(policy, KUBERNETES, strict=True)
    assert policy["spec"]["egress"] == [
        {"ports": [{"port": 16443, "protocol": "TCP"}], "to": api_server},
        {**API_SERVER_AND_DNS[1], "to": dns},
    ]


def test_resource_quota_for_a_system_priority_class_outside_kube_system() -> None:
    objects = render()
    quota = objects["ResourceQuota/jobguard-critical-pods"]
    kubernetes_validate.validate(quota, KUBERNETES, strict=True)
    assert quota["metadata"]["namespace"] == NAMESPACE
    assert quota["spec"] == {
        "hard": {"pods": "10"},
        "scopeSelector": {
            "matchExpressions": [
                {
                    "scopeName": "PriorityClass",
                    "operator": "In",
                    "values": ["system-cluster-critical"],
                }
            ]
        },
    }
    node = render({"priorityClassName": "system-node-critical"})
    expression = node["ResourceQuota/jobguard-critical-pods"]["spec"]["scopeSelector"]
    assert expression["matchExpressions"][0]["values"] == ["system-node-critical"]


@pytest.mark.parametrize(
    ("namespace", "values"),
    [
        ("kube-system", {}),
        (NAMESPACE, {"priorityClassName": ""}),
        (NAMESPACE, {"priorityClassName": "platform-high"}),
        (NAMESPACE, {"resourceQuota": {"enabled": False}}),
    ],
)
def test_no_resource_quota_where_none_is_needed(namespace: str, values: dict[str, Any]) -> None:
    assert not [k for k in render_in(namespace, values) if k.startswith("ResourceQuota/")]


def test_resource_quota_must_fit_the_rollout() -> None:
    with pytest.raises(helm.HelmError, match=r"resourceQuota.pods \(3\) must allow"):
        render({"replicaCount": 3, "resourceQuota": {"pods": 3}})
    render({"replicaCount": 3, "resourceQuota": {"pods": 4}})


def test_startup_probe() -> None:
    container = _pod(render())["containers"][0]
    assert container["startupProbe"] == {
        "httpGet": {"path": "/healthz", "port": "health", "scheme": "HTTP"},
        "periodSeconds": 2,
        "failureThreshold": 30,
    }
    assert "startupProbe" not in _pod(render({"startupProbe": {"enabled": False}}))["containers"][0]


def test_image_by_digest() -> None:
    image = _pod(render({"image": {"digest": DIGEST, "tag": "ignored"}}))["containers"][0]["image"]
    assert image == f"ghcr.io/jobguard/jobguard@{DIGEST}"
    assert _pod(render())["containers"][0]["image"].startswith("ghcr.io/jobguard/jobguard:")


@pytest.mark.parametrize(
    "values",
    [
        {"image": {"digest": "latest"}},
        {"resourceQuota": {"pods": 0}},
        {"startupProbe": {"periodSeconds": 0}},
        {"networkPolicy": {"apiServer": {"ports": []}}},
        {"networkPolicy": {"dns": {"servers": []}}},
        {"commonLabels": {"team": 1}},
    ],
)
def test_schema_rejects_unusable_platform_values(values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        render(values)


def test_a_platform_install_renders_valid_objects() -> None:
    """NetworkPolicy, audit writing OpenReports and the ResourceQuota at once: every object is
    valid Kubernetes."""
    objects = render(
        {
            "audit": {"enabled": True, "writeReports": True, "reportApi": "openreports"},
            "networkPolicy": {"enabled": True},
            "commonLabels": {"team": "platform"},
            "image": {"digest": DIGEST},
        }
    )
    assert {"NetworkPolicy/jobguard", "ResourceQuota/jobguard-critical-pods"} <= set(objects)
    for obj in objects.values():
        if obj["apiVersion"].startswith("cert-manager.io"):
            continue
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
        assert obj["metadata"]["labels"]["team"] == "platform"


def test_installs_as_a_subchart(tmp_path: Path) -> None:
    """Helm hands a subchart the parent's `global` values and validates them against the
    subchart's schema: a schema without `global` refuses every umbrella chart."""
    parent = tmp_path / "platform"
    (parent / "charts").mkdir(parents=True)
    shutil.copytree(CHART, parent / "charts" / "jobguard")
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: platform\nversion: 0.1.0\n"
        "dependencies:\n  - name: jobguard\n    version: '>=0.0.0-0'\n"
    )
    (parent / "values.yaml").write_text(
        "global:\n  imageRegistry: mirror.example\njobguard:\n  networkPolicy:\n    enabled: true\n"
    )
    chart = helm.Chart.load(str(parent))
    manifests = chart.render({}, name="platform", namespace=NAMESPACE, is_install=True)
    kinds = {
        doc["kind"]
        for path, text in manifests.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    }
    assert {"Deployment", "NetworkPolicy", "ResourceQuota"} <= kinds


def test_helm_mode_certificates_are_short_lived_and_say_when_they_expire() -> None:
    secret = render()["Secret/jobguard-tls"]
    not_after = secret["metadata"]["annotations"]["jobguard.io/not-after"]
    leaf = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    annotated = datetime.fromisoformat(not_after)
    assert abs((leaf.not_valid_after_utc - annotated).total_seconds()) < 120
    assert 364 <= (leaf.not_valid_after_utc - datetime.now(UTC)).days <= 365
    secret = render({"certificates": {"validityDays": 90}})["Secret/jobguard-tls"]
    leaf = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    assert 89 <= (leaf.not_valid_after_utc - datetime.now(UTC)).days <= 90
