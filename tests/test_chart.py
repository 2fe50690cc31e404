"""The Helm chart, rendered by Helm's own engine (helm-python-sdk bundles Helm's Go library)
for each certificate mode; every object is checked against the Kubernetes OpenAPI schema. The
certificate modes render the Kueue set-up (tests/data/config/kueue.yaml), so every webhook exists;
the default values register only what the policy rules need (tests/test_chart_webhooks.py)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from jobguard.app.config import ConfigError, parse_config
from tests.corpus import KUEUE_SETUP

KUEUE_CONFIG: dict[str, Any] = yaml.safe_load(KUEUE_SETUP.read_text())
CHART = Path(__file__).resolve().parents[1] / "charts" / "jobguard"
NAMESPACE = "jobguard-system"
KUBERNETES = "1.35.0"
CERT_MANAGER_KINDS = {"Issuer", "Certificate"}
MODES: dict[str, dict[str, Any]] = {
    "helm": {"config": KUEUE_CONFIG},
    "certManager": {"config": KUEUE_CONFIG, "certificates": {"mode": "certManager"}},
    "existingSecret": {
        "config": KUEUE_CONFIG,
        "certificates": {
            "mode": "existingSecret",
            "existingSecret": {
                "name": "corp-tls",
                "caBundle": base64.b64encode(b"-----BEGIN CERTIFICATE-----").decode(),
            },
        },
    },
}


def render(values: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Rendered objects by "Kind/name"."""
    chart = helm.Chart.load(str(CHART))
    manifests = chart.render(values or {}, name="jobguard", namespace=NAMESPACE, is_install=True)
    objects: dict[str, dict[str, Any]] = {}
    for path, text in manifests.items():
        if path.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                objects[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return objects


@pytest.fixture(scope="module", params=list(MODES))
def mode(request: pytest.FixtureRequest) -> tuple[str, dict[str, dict[str, Any]]]:
    return request.param, render(MODES[request.param])


def test_every_object_is_valid_kubernetes(mode: tuple[str, dict[str, dict[str, Any]]]) -> None:
    _, objects = mode
    checked = 0
    for obj in objects.values():
        if obj["kind"] in CERT_MANAGER_KINDS:
            assert obj["apiVersion"] == "cert-manager.io/v1"
            continue
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
        checked += 1
    assert checked >= 8


def test_deployment(mode: tuple[str, dict[str, dict[str, Any]]]) -> None:
    name, objects = mode
    deployment = objects["Deployment/jobguard"]
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    assert {c["topologyKey"] for c in pod["topologySpreadConstraints"]} == {
        "topology.kubernetes.io/zone",
        "kubernetes.io/hostname",
    }
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    # Probes use the plain-HTTP health port, so they work when TLS requires client certs.
    assert container["livenessProbe"]["httpGet"] == {
        "path": "/healthz",
        "port": "health",
        "scheme": "HTTP",
    }
    assert container["readinessProbe"]["httpGet"] == {
        "path": "/readyz",
        "port": "health",
        "scheme": "HTTP",
    }
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {
        "https": 8443,
        "health": 8081,
    }
    assert "--health-port=8081" in container["args"]
    assert {"--header-timeout=10", "--max-connections=1000"} <= set(container["args"])
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert "--config=/etc/jobguard/config/config.yaml" in container["args"]
    secret = {"helm": "jobguard-tls", "certManager": "jobguard-tls", "existingSecret": "corp-tls"}[
        name
    ]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["tls"]["secret"]["secretName"] == secret
    assert volumes["tmp"]["emptyDir"]  # writable /tmp under a read-only root filesystem
    assert objects["PodDisruptionBudget/jobguard"]["spec"]["minAvailable"] == 1
    assert objects["Service/jobguard"]["spec"]["ports"][0]["port"] == 443
    assert objects["ServiceAccount/jobguard"]["automountServiceAccountToken"] is False


def test_certificates_of_each_mode(mode: tuple[str, dict[str, dict[str, Any]]]) -> None:
    name, objects = mode
    # The leader writes the webhook configurations (webhook.registration: managed).
    assert not [key for key in objects if "WebhookConfiguration" in key]
    if name == "certManager":
        certificate = objects["Certificate/jobguard"]["spec"]
        assert certificate["secretName"] == "jobguard-tls"
        assert certificate["dnsNames"] == [
            "jobguard",
            f"jobguard.{NAMESPACE}",
            f"jobguard.{NAMESPACE}.svc",
            f"jobguard.{NAMESPACE}.svc.cluster.local",
        ]
        # A CA Issuer: self-signed root -> CA -> serving certificate, so renewing the serving
        # certificate keeps the injected caBundle (the root CA) valid.
        assert certificate["issuerRef"] == {"name": "jobguard-ca", "kind": "Issuer"}
        assert objects["Issuer/jobguard-ca"]["spec"] == {"ca": {"secretName": "jobguard-root-ca"}}
        root = objects["Certificate/jobguard-root-ca"]["spec"]
        assert root["isCA"] is True and root["secretName"] == "jobguard-root-ca"
        assert root["issuerRef"] == {"name": "jobguard-selfsigned", "kind": "Issuer"}
        assert objects["Issuer/jobguard-selfsigned"]["spec"] == {"selfSigned": {}}
    if name == "helm":
        assert set(objects["Secret/jobguard-tls"]["data"]) == {"tls.crt", "tls.key", "ca.crt"}


def test_cert_manager_with_an_issuer_of_yours_makes_no_issuers() -> None:
    issuer = {"name": "corp-ca", "kind": "ClusterIssuer"}
    objects = render(
        {"certificates": {"mode": "certManager", "certManager": {"issuerRef": issuer}}}
    )
    assert objects["Certificate/jobguard"]["spec"]["issuerRef"] == issuer
    assert [k for k in objects if k.split("/")[0] in CERT_MANAGER_KINDS] == ["Certificate/jobguard"]


def test_helm_generated_certificate_matches_the_ca_bundle() -> None:
    objects = render(MODES["helm"])
    secret = objects["Secret/jobguard-tls"]
    assert secret["type"] == "kubernetes.io/tls"
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    ca_pem = base64.b64decode(secret["data"]["ca.crt"])
    # The leader reads ca.crt from the mounted Secret for its registrations' caBundle.
    args = objects["Deployment/jobguard"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--webhook-ca-file=/etc/jobguard/tls/ca.crt" in args
    ca = x509.load_pem_x509_certificate(ca_pem)
    leaf = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    assert leaf.issuer == ca.subject
    assert isinstance(leaf.public_key(), ec.EllipticCurvePublicKey)
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"jobguard.{NAMESPACE}.svc" in san.get_values_for_type(x509.DNSName)


def test_configmap_holds_a_valid_policy_configuration() -> None:
    policy = {
        "name": "queued",
        "match": {
            "namespaces": ["team-*"],
            "labelSelector": {
                "matchExpressions": [{"key": "kueue.x-k8s.io/queue-name", "operator": "Exists"}]
            },
        },
        "forceSuspendOnCreate": True,
        "controllers": {"serviceAccounts": ["kueue-system:kueue-controller-manager"]},
    }
    objects = render(
        {"config": {"suspendPolicies": [policy], "rules": {"NE-001": {"enabled": True}}}}
    )
    text = objects["ConfigMap/jobguard"]["data"]["config.yaml"]
    settings = parse_config(text, "configmap").to_settings()
    assert settings.policies.policies[0].name == "queued"
    assert settings.semantics.version == "1.35"


def test_settable_values() -> None:
    objects = render(
        {
            "priorityClassName": "system-cluster-critical",
            "webhook": {"timeoutSeconds": 9, "optIn": True, "failurePolicy": "Fail"},
            "server": {
                "clientCASecret": "apiserver-client-ca",
                "headerTimeoutSeconds": 2.5,
                "maxConnections": 200,
            },
        }
    )
    pod = objects["Deployment/jobguard"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    args = pod["containers"][0]["args"]
    assert "--client-ca-file=/etc/jobguard/client-ca/ca.crt" in args
    assert {"--header-timeout=2.5", "--max-connections=200"} <= set(args)
    assert {
        "--webhook-timeout-seconds=9",
        "--webhook-opt-in-label=jobguard.io/enabled",
        "--webhook-failure-policy=Fail",
    } <= set(args)


@pytest.mark.parametrize(
    "values",
    [
        {"bogus": 1},
        {"replicaCount": "two"},
        {"certificates": {"mode": "selfmade"}},
        {"config": {"kubernetesVersion": "1.30"}},
        {"config": {"suspendPolicies": [{"match": {}}]}},
        {"webhook": {"timeoutSeconds": 31}},
        {"server": {"unknown": True}},
        {"server": {"headerTimeoutSeconds": 0}},
        {"server": {"maxConnections": 0}},
        {"server": {"maxConnections": "many"}},
    ],
)
def test_schema_rejects_unknown_or_mistyped_values(values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        render(values)


def test_existing_secret_mode_requires_its_values() -> None:
    with pytest.raises(helm.HelmError, match="existingSecret"):
        render({"certificates": {"mode": "existingSecret"}})
    rendered = {"registration": "rendered", "rendered": "kind: ValidatingWebhookConfiguration\n"}
    with pytest.raises(helm.HelmError, match="caBundle is required"):
        render(
            {
                "certificates": {"mode": "existingSecret", "existingSecret": {"name": "corp-tls"}},
                "webhook": rendered,
            }
        )


def test_helm_test_pod_and_notes() -> None:
    objects = render()
    pod = objects["Pod/jobguard-test"]
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert "/validate" in pod["spec"]["containers"][0]["args"][0]
    chart = helm.Chart.load(str(CHART))
    notes = chart.render({}, name="jobguard", namespace=NAMESPACE)["jobguard/templates/NOTES.txt"]
    assert "helm test jobguard -n jobguard-system" in notes


def test_chart_lints_clean() -> None:
    report = helm.lint(str(CHART), strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_pod_labels_cannot_break_the_selector() -> None:
    objects = render({"podLabels": {"app.kubernetes.io/name": "other", "team": "batch"}})
    spec = objects["Deployment/jobguard"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert labels["team"] == "batch"
    for key, value in spec["selector"]["matchLabels"].items():
        assert labels[key] == value


POLICY_MISTAKES: dict[str, dict[str, Any]] = {
    "no-match": {"name": "p", "controllers": {"users": ["k"]}},
    "empty-match": {"name": "p", "match": {}, "controllers": {"users": ["k"]}},
    "no-namespace": {"name": "p", "match": {"namespaces": []}, "controllers": {"users": ["k"]}},
    "star-with-others": {
        "name": "p",
        "match": {"namespaces": ["*", "a"]},
        "controllers": {"users": ["k"]},
    },
    "empty-selector": {
        "name": "p",
        "match": {"labelSelector": {"matchLabels": {}}},
        "controllers": {"users": ["k"]},
    },
    # The name is a DNS-1123 label: it names the policy's webhooks.
    "name-not-a-label": {
        "name": "My Policy",
        "match": {"namespaces": ["*"]},
        "controllers": {"users": ["k"]},
    },
    "name-too-long": {
        "name": "p" * 64,
        "match": {"namespaces": ["*"]},
        "controllers": {"users": ["k"]},
    },
    "no-controllers": {"name": "p", "match": {"namespaces": ["*"]}},
    "empty-controllers": {"name": "p", "match": {"namespaces": ["*"]}, "controllers": {}},
    "empty-lists": {
        "name": "p",
        "match": {"namespaces": ["*"]},
        "controllers": {"users": [], "serviceAccounts": []},
    },
    "string-force": {
        "name": "p",
        "match": {"namespaces": ["*"]},
        "controllers": {"users": ["k"]},
        "forceSuspendOnCreate": "no",
    },
    "string-users-may-suspend": {
        "name": "p",
        "match": {"namespaces": ["*"]},
        "controllers": {"users": ["k"]},
        "usersMaySuspend": "false",
    },
}


@pytest.mark.parametrize("name", list(POLICY_MISTAKES))
def test_schema_and_jobguard_refuse_the_same_policies(name: str) -> None:
    config = {"suspendPolicies": [POLICY_MISTAKES[name]]}
    with pytest.raises(helm.HelmValuesError):
        render({"config": config})
    with pytest.raises(ConfigError):
        parse_config(yaml.safe_dump(config), "values")


@pytest.mark.parametrize(
    "config",
    [
        {"exemptions": {"builtIn": "false"}},
        {"rules": {"NE-001": {"enabled": "yes"}}},
    ],
    ids=["builtIn", "enabled"],
)
def test_schema_and_jobguard_refuse_strings_for_booleans(config: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        render({"config": config})
    with pytest.raises(ConfigError):
        parse_config(yaml.safe_dump(config), "values")


@pytest.mark.parametrize(
    "match",
    [
        {"namespaces": ["*"]},
        {"namespaces": ["team-*", "batch"]},
        {"labelSelector": {"matchLabels": {"q": "a"}}},
        {
            "labelSelector": {
                "matchLabels": {},
                "matchExpressions": [{"key": "q", "operator": "Exists"}],
            }
        },
    ],
    ids=["every-namespace", "globs", "selector", "one-requirement"],
)
def test_schema_and_jobguard_accept_the_same_policies(match: dict[str, Any]) -> None:
    config = {"suspendPolicies": [{"name": "p", "match": match, "controllers": {"groups": ["g"]}}]}
    text = render({"config": config})["ConfigMap/jobguard"]["data"]["config.yaml"]
    assert parse_config(text, "configmap").to_settings().policies.policies[0].name == "p"
