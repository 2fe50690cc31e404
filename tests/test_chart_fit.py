"""The chart fitted to a platform without forking it (rendered by Helm's engine like
tests/test_chart.py): the host network, securityContext overrides (OpenShift's restricted-v2
assigns the user), extra flags, environment and volumes, a Linux nodeSelector, spread over nodes,
a PodDisruptionBudget only where it cannot block a drain, and the health port's address."""

from __future__ import annotations

from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest

from jobguard.app.cli.main import build_parser
from tests.test_chart import CHART, KUBERNETES, render


def _deployment(values: dict[str, Any] | None = None) -> dict[str, Any]:
    deployment: dict[str, Any] = render(values)["Deployment/jobguard"]
    kubernetes_validate.validate(deployment, KUBERNETES, strict=True)
    return deployment


def _pod(values: dict[str, Any] | None = None) -> dict[str, Any]:
    pod: dict[str, Any] = _deployment(values)["spec"]["template"]["spec"]
    return pod


def test_defaults_linux_nodes_spread_over_nodes_and_no_host_network() -> None:
    pod = _pod()
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    spread = {c["topologyKey"]: c for c in pod["topologySpreadConstraints"]}
    assert spread["kubernetes.io/hostname"]["whenUnsatisfiable"] == "ScheduleAnyway"
    assert spread["kubernetes.io/hostname"]["labelSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "jobguard",
        "app.kubernetes.io/instance": "jobguard",
    }
    assert "hostNetwork" not in pod and "dnsPolicy" not in pod
    # Only the Lease's holder identity (the leader keeps the registrations by default).
    assert [e["name"] for e in pod["containers"][0]["env"]] == ["POD_NAME"]
    assert pod["securityContext"]["runAsUser"] == 65532
    # A key of the user's is added to the default; null removes the default.
    assert _pod({"nodeSelector": {"pool": "system"}})["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "pool": "system",
    }
    assert "nodeSelector" not in _pod({"nodeSelector": {"kubernetes.io/os": None}})


def test_host_network_uses_the_matching_dns_policy() -> None:
    pod = _pod({"hostNetwork": True, "server": {"port": 10250 + 13, "healthPort": 10264}})
    assert pod["hostNetwork"] is True
    assert pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    ports = {p["name"]: p["containerPort"] for p in pod["containers"][0]["ports"]}
    assert ports == {"https": 10263, "health": 10264}


def test_security_contexts_are_overridable_key_by_key() -> None:
    # OpenShift's restricted-v2: no fixed user, group or fsGroup; the rest stays.
    pod = _pod({"podSecurityContext": {"runAsUser": None, "runAsGroup": None, "fsGroup": None}})
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    pod = _pod({"securityContext": {"readOnlyRootFilesystem": False, "runAsUser": 1000700000}})
    container = pod["containers"][0]["securityContext"]
    assert container["readOnlyRootFilesystem"] is False
    assert container["runAsUser"] == 1000700000
    assert container["capabilities"] == {"drop": ["ALL"]}
    # The helm test pod follows the same values.
    test_pod = render({"podSecurityContext": {"runAsUser": None}})["Pod/jobguard-test"]
    assert "runAsUser" not in test_pod["spec"]["securityContext"]


def test_extra_args_env_and_volumes() -> None:
    values: dict[str, Any] = {
        "extraArgs": ["--idle-timeout=30", "--log-bodies"],
        "extraEnv": [
            {"name": "HTTPS_PROXY", "value": "http://proxy:3128"},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ],
        "extraVolumes": [{"name": "corp-ca", "configMap": {"name": "corp-ca"}}],
        "extraVolumeMounts": [{"name": "corp-ca", "mountPath": "/etc/corp-ca", "readOnly": True}],
    }
    pod = _pod(values)
    (container,) = pod["containers"]
    assert container["args"][-2:] == ["--idle-timeout=30", "--log-bodies"]
    parsed = build_parser().parse_args(container["args"])
    assert parsed.idle_timeout == 30 and parsed.log_bodies is True
    assert container["env"][1:] == values["extraEnv"]
    assert container["env"][0]["name"] == "POD_NAME"
    assert container["volumeMounts"][-1] == values["extraVolumeMounts"][0]
    assert {v["name"] for v in container["volumeMounts"]} == {"tls", "config", "tmp", "corp-ca"}
    assert pod["volumes"][-1] == values["extraVolumes"][0]


@pytest.mark.parametrize(
    "values",
    [
        {"hostNetwork": "yes"},
        {"podSecurityContext": "restricted"},
        {"extraArgs": "--log-bodies"},
        {"extraArgs": ["log-bodies"]},
        {"extraEnv": [{"value": "x"}]},
        {"extraVolumes": [{"emptyDir": {}}]},
        {"extraVolumeMounts": [{"name": "x"}]},
        {"server": {"healthHost": 1}},
        {"podDisruptionBudget": {"minAvailable": "half"}},
    ],
)
def test_schema_refuses_malformed_values(values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        render(values)


def test_pdb_only_where_it_cannot_block_a_drain() -> None:
    assert render()["PodDisruptionBudget/jobguard"]["spec"]["minAvailable"] == 1
    # One replica: any PDB would block every drain.
    assert not any(k.startswith("PodDisruptionBudget/") for k in render({"replicaCount": 1}))
    pdb = render({"replicaCount": 3, "podDisruptionBudget": {"minAvailable": 2}})
    assert pdb["PodDisruptionBudget/jobguard"]["spec"]["minAvailable"] == 2
    percent = render({"replicaCount": 3, "podDisruptionBudget": {"minAvailable": "50%"}})
    assert percent["PodDisruptionBudget/jobguard"]["spec"]["minAvailable"] == "50%"
    with pytest.raises(helm.HelmError, match="minAvailable 2 with replicaCount 2"):
        render({"podDisruptionBudget": {"minAvailable": 2}})
    chart = helm.Chart.load(str(CHART))
    notes = chart.render({"replicaCount": 1}, name="jobguard", namespace="ns")
    assert "One replica: no PodDisruptionBudget" in notes["jobguard/templates/NOTES.txt"]
    notes = chart.render({}, name="jobguard", namespace="ns")
    assert "One replica" not in notes["jobguard/templates/NOTES.txt"]
    off = render({"podDisruptionBudget": {"enabled": False}})
    assert not any(k.startswith("PodDisruptionBudget/") for k in off)


def test_health_host_follows_the_host_unless_set() -> None:
    args = _pod()["containers"][0]["args"]
    assert "--host=0.0.0.0" in args
    assert not any(a.startswith("--health-host") for a in args)
    parsed = build_parser().parse_args(args)
    assert parsed.host == "0.0.0.0" and parsed.health_host is None
    args = _pod({"server": {"host": "::", "healthHost": "0.0.0.0"}})["containers"][0]["args"]
    parsed = build_parser().parse_args(args)
    assert parsed.host == "::" and parsed.health_host == "0.0.0.0"
