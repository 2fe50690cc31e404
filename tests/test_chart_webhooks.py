"""What the chart registers for a configuration, computed by Helm at render time from the chart's
copy of the catalogue, compared with a model of the registrations (tests/registrations.py); the
exemptions' matchConditions evaluated as CEL; and the chart's other safety defaults."""

from __future__ import annotations

import json
import re
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from jobguard.app.chart_rules import render_chart_rules
from jobguard.app.config import parse_config
from jobguard.validators import SUPPORTED_VERSIONS, Requester
from tests.corpus import KUEUE_SETUP
from tests.registrations import Profile, failure_policy, mutating_needed, plan
from tests.test_chart import CHART, KUBERNETES, NAMESPACE, render
from tests.vap_eval import evaluate

KUEUE = KUEUE_SETUP.read_text()
CONFIGS = {
    "defaults": "{}",
    "kueue": KUEUE,
    "every-ne-rule": "rules: {'NE-*': {enabled: true}}\n",
    "ne-warn-only": "rules: {'NE-*': {enforcement: warn}}\n",
    "policy-rules-off": "rules: {'NE-*': {enabled: false}}\n",
    "dryrun": "enforcement: dryrun\n" + KUEUE,
    "glob-then-exact": "rules: {'SUS-*': {enabled: false}, SUS-001: {enabled: true}}\n" + KUEUE,
    "alias": "rules: {SP-010: {enforcement: warn}, 'TM-*': {enabled: false}}\n",
    "no-force": KUEUE.replace("forceSuspendOnCreate: true", "forceSuspendOnCreate: false"),
    "status-rule": "rules: {NE-002: {enabled: false}, NE-008: {enabled: true}}\n",
}


def hooks(objects: dict[str, dict[str, Any]]) -> list[tuple[str, tuple[str, ...], str]]:
    config = objects.get("ValidatingWebhookConfiguration/jobguard")
    return [
        (
            h["name"].removesuffix(".jobguard.io"),
            tuple(h["rules"][0]["operations"]),
            h["failurePolicy"],
        )
        for h in (config or {}).get("webhooks", [])
    ]


def test_chart_rules_file_is_generated() -> None:
    text = (CHART / "files" / "rules.yaml").read_text(encoding="utf-8")
    assert text == render_chart_rules(), "the catalogue changed without `make docs`"


def test_default_values_cannot_take_a_cluster_down() -> None:
    objects = render()
    # No suspend policy forces suspension: no mutating webhook at all.
    assert "MutatingWebhookConfiguration/jobguard" not in objects
    # Only NE-001 (Job updates) and NE-002 (status updates), failing open, and never a CREATE.
    assert hooks(objects) == [
        ("jobs", ("UPDATE",), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    for hook in objects["ValidatingWebhookConfiguration/jobguard"]["webhooks"]:
        (condition,) = hook["matchConditions"]
        assert condition["name"] == "not-an-exempt-requester"


@pytest.mark.parametrize("profile", list(Profile))
@pytest.mark.parametrize("name", list(CONFIGS))
def test_registrations_agree_with_jobguard(name: str, profile: Profile) -> None:
    text = CONFIGS[name]
    settings = parse_config(text).to_settings()
    objects = render({"config": yaml.safe_load(text) or {}, "webhook": {"profile": profile.value}})
    expected = [(r.name, r.operations, failure_policy(r)) for r in plan(settings, profile)]
    assert hooks(objects) == expected
    mutating = (objects.get("MutatingWebhookConfiguration/jobguard") or {}).get("webhooks", [])
    assert [h["name"] for h in mutating] == [
        f"{name}.jobs.mutate.jobguard.io" for name in mutating_needed(settings)
    ]
    for hook in (objects.get("ValidatingWebhookConfiguration/jobguard") or {}).get("webhooks", []):
        per_policy = hook["name"].endswith(".jobs.jobguard.io")
        # A policy's registration always skips its controllers; the others skip exempt
        # requesters in the policy profile only (upstream rules apply to everyone).
        assert ("matchConditions" in hook) is (per_policy or profile is Profile.POLICY)


def test_full_profile_sends_everything_and_fails_open_unless_told() -> None:
    # The API server enforces the upstream rules itself: failing closed for them would block
    # every Job write in an outage to protect nothing a suspend policy needs.
    objects = render({"webhook": {"profile": "full"}})
    assert hooks(objects) == [
        ("jobs", ("CREATE", "UPDATE"), "Ignore"),
        ("cronjobs", ("CREATE", "UPDATE"), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    kueue = render({"webhook": {"profile": "full"}, "config": yaml.safe_load(KUEUE)})
    assert hooks(kueue) == [
        ("queued.jobs", ("CREATE", "UPDATE"), "Fail"),
        ("jobs", ("CREATE", "UPDATE"), "Ignore"),
        ("cronjobs", ("CREATE", "UPDATE"), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]
    told = render({"webhook": {"profile": "full", "failurePolicy": "Fail"}})
    assert hooks(told) == [
        ("jobs", ("CREATE", "UPDATE"), "Fail"),
        ("cronjobs", ("CREATE", "UPDATE"), "Fail"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]


def test_configured_failure_policies_apply_where_rules_deny() -> None:
    objects = render({"webhook": {"failurePolicy": "Fail"}})
    assert hooks(objects) == [("jobs", ("UPDATE",), "Fail"), ("jobs-status", ("UPDATE",), "Ignore")]
    warn_only = render({"config": {"enforcement": "warn"}, "webhook": {"failurePolicy": "Fail"}})
    assert hooks(warn_only) == [
        ("jobs", ("UPDATE",), "Ignore"),
        ("jobs-status", ("UPDATE",), "Ignore"),
    ]


def test_nothing_to_judge_registers_no_validating_webhook() -> None:
    objects = render({"config": {"rules": {"NE-*": {"enabled": False}}}})
    assert "ValidatingWebhookConfiguration/jobguard" not in objects
    notes = helm.Chart.load(str(CHART)).render(
        {"config": {"rules": {"NE-*": {"enabled": False}}}}, name="jobguard", namespace=NAMESPACE
    )["jobguard/templates/NOTES.txt"]
    assert "none: no enabled rule of this profile judges any request" in notes


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
    objects = render({"config": {"exemptions": exemptions}})
    hook = objects["ValidatingWebhookConfiguration/jobguard"]["webhooks"][0]
    conditions = [c["expression"] for c in hook["matchConditions"]]
    settings = parse_config(yaml.safe_dump({"exemptions": exemptions})).to_settings()
    outcomes = set()
    for user, groups, namespace in REQUESTERS:
        request = {"userInfo": {"username": user, "groups": list(groups)}, "namespace": namespace}
        # Evaluated by cel-cpp, as the exported ValidatingAdmissionPolicies are (tests/vap_eval.py).
        sent = all(evaluate(c, {"request": request}) is True for c in conditions)
        exempt = settings.policies.exemptions.exempt(namespace, Requester(user, groups))
        assert sent is not exempt, (user, groups, namespace)
        outcomes.add(sent)
    # On both sides, or conditions that send everything (or nothing) would pass as well.
    assert outcomes == {True, False}


# --- render-time checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ({"config": {"rules": {"NE-07": {"enabled": True}}}}, helm.HelmError, "NE-07"),
        ({"config": {"rules": {"XX-*": {"enabled": True}}}}, helm.HelmError, "matches no rule ID"),
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
    ],
    ids=[
        "unknown-id",
        "glob-matching-nothing",
        "unquoted-version",
        "params",
        "enforcement",
        "profile",
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


def test_notes_list_the_registered_webhooks() -> None:
    chart = helm.Chart.load(str(CHART))
    values = {"config": yaml.safe_load(KUEUE)}
    notes = chart.render(values, name="jobguard", namespace=NAMESPACE)[
        "jobguard/templates/NOTES.txt"
    ]
    for line in (
        "  - jobs:UPDATE: rules that deny",
        "  - cronjobs:CREATE: rules that warn",
        "  - jobs/status:UPDATE: rules that deny",
        "  - jobs:CREATE inside each suspend policy's scope: rules that deny",
        "  - jobs:UPDATE inside each suspend policy's scope: rules that deny",
        "  - jobs:CREATE mutated: spec.suspend set for Jobs matched by a suspend policy",
    ):
        assert line in notes.splitlines()
    assert "  - jobs:CREATE: rules that deny" not in notes.splitlines()
