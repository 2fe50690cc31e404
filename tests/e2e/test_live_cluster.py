"""End to end against a real cluster: `jobguard audit`, `kubernetesVersion: auto` and the
exported ValidatingAdmissionPolicies, on a live API server.

Marked `e2e` and deselected by default (pyproject.toml); nothing here runs in `make test` or CI.
Run it against a disposable cluster (kind, minikube, a test cluster) whose kubeconfig may create
namespaces, Jobs and cluster-wide ValidatingAdmissionPolicies:

    JOBGUARD_E2E_KUBECONFIG=~/.kube/config .venv/bin/pytest -m e2e tests/e2e

It creates a namespace `jobguard-e2e-<random>` and policies named `jobguard-*` scoped to
`jobguard-e2e-*` namespaces, and deletes them afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config

from jobguard.app.cli.main import main
from jobguard.app.cluster.client import connect, detect_version
from jobguard.app.config import parse_config
from jobguard.validators import SUPPORTED_VERSIONS, export_vap

pytestmark = pytest.mark.e2e

KUBECONFIG_ENV = "JOBGUARD_E2E_KUBECONFIG"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
POLICY = {
    "kubernetesVersion": "auto",
    "suspendPolicies": [
        {
            "name": "e2e",
            "match": {
                "namespaces": ["jobguard-e2e-*"],
                "labelSelector": {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]},
            },
            "controllers": {"serviceAccounts": ["kueue-system:kueue-controller-manager"]},
        }
    ],
}


@pytest.fixture(scope="module")
def kubeconfig() -> str:
    path = os.environ.get(KUBECONFIG_ENV)
    if not path:
        pytest.fail(f"the e2e suite needs a cluster: set {KUBECONFIG_ENV} to its kubeconfig")
    return path


@pytest.fixture(scope="module")
def api(kubeconfig: str) -> client.ApiClient:
    api_client: client.ApiClient = config.new_client_from_config(config_file=kubeconfig)
    return api_client


@pytest.fixture(scope="module")
def namespace(api: client.ApiClient) -> Iterator[str]:
    name = f"jobguard-e2e-{secrets.token_hex(3)}"
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        core.delete_namespace(name)


def _job(name: str, namespace: str, suspend: bool) -> client.V1Job:
    job = client.V1Job.from_dict(_manifest(name, namespace, suspend))
    assert job is not None
    return job


def _manifest(name: str, namespace: str, suspend: bool) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: "q"}},
        "spec": {
            "suspend": suspend,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox", "command": ["sleep", "30"]}
                    ],
                }
            },
        },
    }


def test_auto_version_is_supported(kubeconfig: str) -> None:
    cluster = connect(kubeconfig)
    try:
        assert detect_version(cluster) in SUPPORTED_VERSIONS
    finally:
        cluster.close()


def test_audit_finds_a_job_that_bypassed_the_queue(
    api: client.ApiClient,
    namespace: str,
    kubeconfig: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    batch = client.BatchV1Api(api)
    batch.create_namespaced_job(namespace, _job("bypassed", namespace, suspend=False))
    batch.create_namespaced_job(namespace, _job("queued", namespace, suspend=True))
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(POLICY))
    code = main(
        [
            "audit",
            "--kubeconfig",
            kubeconfig,
            "-n",
            namespace,
            "--config",
            str(path),
            "--output",
            "json",
        ]
    )
    body = json.loads(capsys.readouterr().out)
    assert code == 1
    found = {r["name"]: [v["rule"] for v in r["violations"]] for r in body["results"]}
    assert found == {"bypassed": ["SUS-001"], "queued": []}


def test_exported_policies_are_accepted_and_enforced(
    api: client.ApiClient, namespace: str, kubeconfig: str
) -> None:
    cluster = connect(kubeconfig)
    try:
        cluster_version = detect_version(cluster)
    finally:
        cluster.close()
    export = export_vap(parse_config(yaml.safe_dump(POLICY)).to_settings(cluster_version))
    admission = client.AdmissionregistrationV1Api(api)
    created: list[tuple[str, str]] = []
    try:
        for obj in export.objects:
            if obj["kind"] == "ValidatingAdmissionPolicy":
                policy = client.V1ValidatingAdmissionPolicy.from_dict(obj)
                assert policy is not None
                admission.create_validating_admission_policy(policy)
            else:
                binding = client.V1ValidatingAdmissionPolicyBinding.from_dict(obj)
                assert binding is not None
                admission.create_validating_admission_policy_binding(binding)
            created.append((obj["kind"], obj["metadata"]["name"]))
        batch = client.BatchV1Api(api)
        deadline = time.monotonic() + 60
        denied = None
        while time.monotonic() < deadline and denied is None:
            name = f"running-{secrets.token_hex(2)}"
            try:
                batch.create_namespaced_job(namespace, _job(name, namespace, suspend=False))
            except client.ApiException as exc:
                denied = exc
            else:
                batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
                time.sleep(2)  # policies take effect once the API server has loaded them
        assert denied is not None and denied.status in (403, 422)
        assert "SUS-001: spec.suspend: Forbidden" in str(denied.body)
        batch.create_namespaced_job(namespace, _job("suspended", namespace, suspend=True))
    finally:
        for kind, name in reversed(created):
            if kind == "ValidatingAdmissionPolicy":
                admission.delete_validating_admission_policy(name)
            else:
                admission.delete_validating_admission_policy_binding(name)
