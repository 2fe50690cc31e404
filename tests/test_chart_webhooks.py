"""Which webhooks a configuration registers (`jobguard.validators.registrations`, what the
leader writes and `jobguard registrations` prints) for the chart's values; the exemptions'
matchConditions evaluated as CEL; how the chart carries the registrations (written by the leader,
or rendered from the command's output) and the chart's other safety defaults."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from jobguard.app.config import parse_config
from jobguard.validators import SUPPORTED_VERSIONS, Requester
from jobguard.validators.registrations import (
    ClientConfig,
    FailurePolicy,
    Profile,
    RegistrationOptions,
    webhook_configurations,
)
from tests.corpus import KUEUE_SETUP
from tests.test_chart import CHART, KUBERNETES, NAMESPACE, render
from tests.vap_eval import _selects, evaluate

KUEUE = KUEUE_SETUP.read_text()
SERVICE = ClientConfig(service_namespace=NAMESPACE, service_name="jobguard")


def registered(config: Any, **options: Any) -> list[dict[str, Any]]:
    """What the leader writes for a configuration (text or data) and the chart's options."""
    text = config if isinstance(config, str) else yaml.safe_dump(config)
    settings = parse_config(text).to_settings()
    return webhook_configurations(settings, SERVICE, None, RegistrationOptions(**options))


def hooks(objects: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...], str]]:
    return [
        (
            h["name"].removesuffix(".jobguard.io"),
            tuple(op for rule in h["rules"] for op in rule["operations"]),
            h["failurePolicy"],
        )
        for h in objects[0]["webhooks"]
    ]


def test_default_values_cannot_take_a_cluster_down() -> None:
    objects = registered({})
    # No suspend policy forces suspension: no mutating webhook at all.
    assert objects[1]["webhooks"] == []
    # Only NE-001 (Job updates) and NE-002 (status updates), failing open, and never a CREATE.
    assert hooks(objects) == [
        ("jobs", ("UPDATE",), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    for hook in objects[0]["webhooks"]:
        (condition,) = hook["matchConditions"]
        assert condition["name"] == "not-an-exempt-requester"


def test_full_profile_sends_everything_and_fails_open_unless_told() -> None:
    # The API server enforces the upstream rules itself: failing closed for them would block
    # every Job write in an outage to protect nothing a suspend policy needs.
    assert hooks(registered({}, profile=Profile.FULL)) == [
        ("jobs", ("CREATE", "UPDATE"), "Ignore"),
        ("cronjobs", ("CREATE", "UPDATE"), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    assert hooks(registered(KUEUE, profile=Profile.FULL)) == [
        ("queued.jobs", ("CREATE", "UPDATE", "UPDATE"), "Fail"),
        ("jobs", ("CREATE", "UPDATE"), "Ignore"),
        ("cronjobs", ("CREATE", "UPDATE"), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    assert hooks(registered({}, profile=Profile.FULL, failure_policy=FailurePolicy.FAIL)) == [
        ("jobs", ("CREATE", "UPDATE"), "Fail"),
        ("cronjobs", ("CREATE", "UPDATE"), "Fail"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    # The upstream rules apply to everyone: no matchConditions on the shared webhooks.
    assert all(
        "matchConditions" not in h for h in registered({}, profile=Profile.FULL)[0]["webhooks"]
    )


def test_configured_failure_policies_apply_where_rules_deny() -> None:
    assert hooks(registered({}, failure_policy=FailurePolicy.FAIL)) == [
        ("jobs", ("UPDATE",), "Fail"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    warn_only = registered({"enforcement": "warn"}, failure_policy=FailurePolicy.FAIL)
    assert hooks(warn_only) == [
        ("jobs", ("UPDATE",), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    dryrun = registered("enforcement: dryrun\n" + KUEUE)
    assert {h[2] for h in hooks(dryrun)} == {"Ignore"}


def test_nothing_to_judge_registers_no_webhook() -> None:
    assert registered({"rules": {"NE-*": {"enabled": False}}})[0]["webhooks"] == []
    no_force = registered(
        KUEUE.replace("forceSuspendOnCreate: true", "forceSuspendOnCreate: false")
    )
    assert no_force[1]["webhooks"] == []
    assert registered(KUEUE, mutating=False)[1]["webhooks"] == []


# --- matchConditions, evaluated as the API server evaluates them ---------------------------------

EXEMPTIONS = {
    "users": ["ops@example.com"],
    "groups": ["platform-admins"],
    "serviceAccounts": ["ci:deployer"],
    "namespaces": ["kueue-system", "batch-*"],
}
REQUESTERS = [
    ("alice", (), "team-a"),
    ("ops@example.com", (), "team-a"),
    ("bob", ("platform-admins",), "team-a"),
    ("system:serviceaccount:ci:deployer", (), "team-a"),
    ("system:serviceaccount:ci:other", (), "team-a"),
    ("system:serviceaccount:kube-system:job-controller", (), "team-a"),
    ("system:serviceaccount:kube-system:cronjob-controller", (), "team-a"),
    ("system:kube-controller-manager", (), "team-a"),
    ("root", ("system:masters",), "team-a"),
    ("kubernetes-admin", ("kubeadm:cluster-admins",), "team-a"),
    ("alice", (), "kueue-system"),
    ("alice", (), "batch-nightly"),
    ("alice", (), "my-batch-nightly"),
]


@pytest.mark.parametrize("built_in", [True, False])
def test_match_conditions_skip_exactly_the_exempt_requests(built_in: bool) -> None:
    exemptions = {**EXEMPTIONS, "builtIn": built_in}
    hook = registered({"exemptions": exemptions})[0]["webhooks"][0]
    conditions = [c["expression"] for c in hook["matchConditions"]]
    settings = parse_config(yaml.safe_dump({"exemptions": exemptions})).to_settings()
    outcomes = set()
    for user, groups, namespace in REQUESTERS:
        request = {"userInfo": {"username": user, "groups": list(groups)}, "namespace": namespace}
        # Evaluated by cel-cpp, as the exported ValidatingAdmissionPolicies are (tests/vap_eval.py).
        selected = _selects(hook["namespaceSelector"], {"kubernetes.io/metadata.name": namespace})
        sent = selected and all(evaluate(c, {"request": request}) is True for c in conditions)
        exempt = settings.policies.exemptions.exempt(namespace, Requester(user, groups))
        assert sent is not exempt, (user, groups, namespace)
        outcomes.add(sent)
    # On both sides, or conditions that send everything (or nothing) would pass as well.
    assert outcomes == {True, False}


# --- render-time checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ({"config": {"kubernetesVersion": 1.35}}, helm.HelmValuesError, "kubernetesVersion"),
        (
            {"config": {"rules": {"NE-007": {"params": {"users": "kueue"}}}}},
            helm.HelmValuesError,
            "params",
        ),
        (
            {"config": {"rules": {"NE-001": {"enforcement": "block"}}}},
            helm.HelmValuesError,
            "/config/rules/NE-001/enforcement",
        ),
        ({"webhook": {"profile": "everything"}}, helm.HelmValuesError, "profile"),
        ({"webhook": {"registration": "helm"}}, helm.HelmValuesError, "registration"),
        ({"webhook": {"excludeNamespaces": ["x"]}}, helm.HelmValuesError, "excludeNamespaces"),
        (
            {"webhook": {"registration": "rendered"}},
            helm.HelmError,
            "webhook.rendered is required with webhook.registration rendered",
        ),
        (
            {"webhook": {"registration": "rendered", "rendered": "kind: ConfigMap\n"}},
            helm.HelmError,
            "webhook.rendered: ConfigMap is not a webhook configuration",
        ),
    ],
    ids=[
        "unquoted-version",
        "params",
        "enforcement",
        "profile",
        "registration",
        "exclude-namespaces",
        "rendered-missing",
        "rendered-not-webhooks",
    ],
)
def test_mistakes_fail_at_render_time(values: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        render(values)


# --- rollout, priority, metrics, network ----------------------------------------------------------


def test_a_configuration_change_rolls_the_pods_without_losing_the_old_ones() -> None:
    def pod(values: dict[str, Any]) -> dict[str, Any]:
        deployment: dict[str, Any] = render(values)["Deployment/jobguard"]
        return deployment

    default, changed = pod({}), pod({"config": {"enforcement": "warn"}})
    checksum = default["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    assert re.fullmatch(r"[0-9a-f]{64}", checksum)
    assert changed["spec"]["template"]["metadata"]["annotations"]["checksum/config"] != checksum
    annotated = pod({"podAnnotations": {"team": "batch"}})
    assert annotated["spec"]["template"]["metadata"]["annotations"] == {
        "checksum/config": checksum,
        "team": "batch",
    }
    assert default["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }


def test_priority_and_metrics_port() -> None:
    objects = render()
    pod = objects["Deployment/jobguard"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    ports = objects["Service/jobguard"]["spec"]["ports"]
    assert [(p["name"], p["port"], p["targetPort"]) for p in ports] == [
        ("https", 443, "https"),
        ("metrics", 8081, "health"),
    ]
    assert "ServiceMonitor/jobguard" not in objects and "NetworkPolicy/jobguard" not in objects


def test_optional_service_monitor_and_network_policy() -> None:
    peers = [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}]
    objects = render(
        {
            "metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}},
            "networkPolicy": {"enabled": True, "metricsFrom": peers},
            # Rendered registrations: nothing in the pods calls the API server.
            "webhook": {"registration": "rendered", "rendered": yaml.safe_dump_all(registered({}))},
        }
    )
    monitor = objects["ServiceMonitor/jobguard"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["endpoints"] == [
        {"port": "metrics", "path": "/metrics", "scheme": "http", "interval": "30s"}
    ]
    policy = objects["NetworkPolicy/jobguard"]
    kubernetes_validate.validate(policy, KUBERNETES, strict=True)
    assert policy["spec"]["egress"] == []
    webhook, metrics = policy["spec"]["ingress"]
    assert webhook == {"ports": [{"port": "https", "protocol": "TCP"}]}
    assert metrics == {"ports": [{"port": "health", "protocol": "TCP"}], "from": peers}


def test_kube_version_matches_the_supported_versions() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    lowest = SUPPORTED_VERSIONS[0]
    # A lower bound only (as Kyverno's chart): a newer cluster is never refused at install.
    assert chart["kubeVersion"] == f">={lowest}.0-0"
    schema = json.loads((CHART / "values.schema.json").read_text())
    version = schema["properties"]["config"]["properties"]["kubernetesVersion"]
    assert version["enum"] == [*SUPPORTED_VERSIONS, "auto"]
    # matchConditions are GA from 1.30: every supported version has them.
    assert tuple(int(x) for x in lowest.split(".")) >= (1, 30)


def test_notes_say_who_writes_the_webhooks() -> None:
    chart = helm.Chart.load(str(CHART))
    notes = chart.render({}, name="jobguard", namespace=NAMESPACE)["jobguard/templates/NOTES.txt"]
    assert "written by the leader of the pods (Lease jobguard-leader) from the" in notes


# --- who writes them: the leader (managed) or the chart (rendered) -------------------------------


def test_managed_registrations_rbac_and_flags() -> None:
    objects = render()
    assert not [k for k in objects if "WebhookConfiguration" in k]
    role = objects["ClusterRole/jobguard-webhooks"]
    assert role["rules"] == [
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
            "resourceNames": ["jobguard"],
            "verbs": ["get", "update"],
        },
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "resourceNames": ["jobguard-webhooks"],
            "verbs": ["get"],
        },
    ]
    lease = objects["Role/jobguard-leader"]
    assert lease["metadata"]["namespace"] == NAMESPACE
    assert [r.get("resourceNames") for r in lease["rules"]] == [["jobguard-leader"], None]
    for binding in ("ClusterRoleBinding/jobguard-webhooks", "RoleBinding/jobguard-leader"):
        (subject,) = objects[binding]["subjects"]
        assert (subject["name"], subject["namespace"]) == ("jobguard", NAMESPACE)
    pod = objects["Deployment/jobguard"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True
    container = pod["containers"][0]
    assert container["env"] == [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    ]
    assert {
        f"--register-webhooks={NAMESPACE}/jobguard",
        f"--webhook-lease={NAMESPACE}/jobguard-leader",
        "--webhook-ca-file=/etc/jobguard/tls/ca.crt",
        "--webhook-owner=jobguard-webhooks",
        "--webhook-failure-policy=Auto",
    } <= set(container["args"])
    # The flags are serve's own.
    from jobguard.app.cli.main import build_parser

    parsed = build_parser().parse_args(container["args"])  # args start with `serve`
    assert parsed.register_webhooks == f"{NAMESPACE}/jobguard"
    rendered = render(
        {"webhook": {"registration": "rendered", "rendered": yaml.safe_dump_all(registered({}))}}
    )
    assert "ClusterRole/jobguard-webhooks" not in rendered
    assert not any(
        a.startswith("--register-webhooks")
        for a in rendered["Deployment/jobguard"]["spec"]["template"]["spec"]["containers"][0][
            "args"
        ]
    )


@pytest.mark.parametrize("mode", ["helm", "existingSecret", "certManager"])
def test_rendered_registrations_are_the_commands_output(mode: str) -> None:
    objects = registered(KUEUE)
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----").decode()
    certificates: dict[str, Any] = {"mode": mode}
    if mode == "existingSecret":
        certificates["existingSecret"] = {"name": "corp-tls", "caBundle": ca}
    chart = render(
        {
            "config": yaml.safe_load(KUEUE),
            "certificates": certificates,
            "webhook": {"registration": "rendered", "rendered": yaml.safe_dump_all(objects)},
        }
    )
    for obj in objects:
        embedded = chart[f"{obj['kind']}/jobguard"]
        kubernetes_validate.validate(embedded, KUBERNETES, strict=True)
        assert embedded["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        bundles = {h["clientConfig"].pop("caBundle", None) for h in embedded["webhooks"]}
        assert embedded["webhooks"] == obj["webhooks"]  # nothing translated, only the CA added
        if mode == "helm":
            assert bundles == {chart["Secret/jobguard-tls"]["data"]["ca.crt"]}
        elif mode == "existingSecret":
            assert bundles == {ca}
        else:
            assert bundles == {None}
            annotations = embedded["metadata"]["annotations"]
            assert annotations["cert-manager.io/inject-ca-from"] == f"{NAMESPACE}/jobguard"


def test_jobguard_certificates_mode_renders_the_same_every_time() -> None:
    values = {"certificates": {"mode": "jobguard"}, "config": yaml.safe_load(KUEUE)}
    first, second = render(values), render(values)
    assert first == second  # no generated certificate: helm template and Argo CD stay stable
    assert "Secret/jobguard-tls" not in first
    pod = first["Deployment/jobguard"]["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert {
        f"--manage-certificates={NAMESPACE}/jobguard-tls",
        "--certificates-dir=/tmp/jobguard-tls",
        "--certificate-days=365",
    } <= set(args)
    assert not any(a.startswith(("--tls-cert-file", "--webhook-ca-file")) for a in args)
    assert "tls" not in {v["name"] for v in pod["volumes"]}
    secrets = [r for r in first["Role/jobguard-leader"]["rules"] if r["resources"] == ["secrets"]]
    assert secrets == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["jobguard-tls"],
            "verbs": ["get", "update"],
        },
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
    ]
    from jobguard.app.cli.main import build_parser

    parsed = build_parser().parse_args(args)  # args start with `serve`
    assert parsed.manage_certificates == f"{NAMESPACE}/jobguard-tls"
    with pytest.raises(helm.HelmError, match=re.escape("needs webhook.registration managed")):
        render(
            {
                **values,
                "webhook": {
                    "registration": "rendered",
                    "rendered": yaml.safe_dump_all(registered({})),
                },
            }
        )
    for obj in first.values():
        if obj["kind"] not in ("Issuer", "Certificate"):
            kubernetes_validate.validate(obj, KUBERNETES, strict=True)
