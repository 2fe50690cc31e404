"""`jobguard audit` (PolicyReports and OpenReports, their CRDs installed), `kubernetesVersion:
auto` and the exported ValidatingAdmissionPolicies, against the real API server."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from jobguard.app.cli.main import main
from jobguard.app.cluster.client import connect, detect_version
from jobguard.app.config import parse_config
from jobguard.validators import SUPPORTED_VERSIONS, export_vap
from tests.controlplane import ControlPlane, apply, collection_path, wait_until
from tests.realapi.kube import JOBS, QUEUE_LABEL, job_manifest

POLICY: dict[str, Any] = {
    "kubernetesVersion": "auto",
    "suspendPolicies": [
        {
            "name": "e2e",
            "match": {
                "namespaces": ["audit-*"],
                "labelSelector": {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]},
            },
            "controllers": {"serviceAccounts": ["kueue-system:kueue-controller-manager"]},
        }
    ],
}


def report_crd(group: str, version: str, kind: str, plural: str) -> dict[str, Any]:
    """A structural CRD of the report kinds: the fields jobguard writes typed as the projects
    type them (result one of pass/fail/warn/error/skip), the rest kept as sent."""
    result = {
        "type": "object",
        "required": ["policy", "result"],
        "properties": {
            "policy": {"type": "string"},
            "rule": {"type": "string"},
            "message": {"type": "string"},
            "result": {"type": "string", "enum": ["pass", "fail", "warn", "error", "skip"]},
            "severity": {"type": "string"},
            "source": {"type": "string"},
        },
        "x-kubernetes-preserve-unknown-fields": True,
    }
    counts = {k: {"type": "integer"} for k in ("pass", "fail", "warn", "error", "skip")}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "source": {"type": "string"},
                                "scope": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                                "summary": {"type": "object", "properties": counts},
                                "results": {"type": "array", "items": result},
                            },
                        }
                    },
                }
            ],
        },
    }


REPORT_CRDS = [
    report_crd("wgpolicyk8s.io", "v1alpha2", "PolicyReport", "policyreports"),
    report_crd("openreports.io", "v1alpha1", "Report", "reports"),
]


def test_auto_reads_the_servers_release(plane: ControlPlane) -> None:
    cluster = connect(str(plane.kubeconfig))
    try:
        version = detect_version(cluster)
    finally:
        cluster.close()
    major_minor = ".".join(plane.version.removeprefix("v").split(".")[:2])
    expected = major_minor if major_minor in SUPPORTED_VERSIONS else max(SUPPORTED_VERSIONS)
    assert version == expected


def test_audit_finds_a_job_that_bypassed_the_queue(
    plane: ControlPlane,
    namespace: Callable[[str], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ns = namespace("audit")
    with plane.http("kueue") as kueue:
        for name, suspend in (("bypassed", False), ("queued", True)):
            body = job_manifest(name, queue="q", suspend=suspend)
            assert kueue.post(JOBS.format(namespace=ns), json=body).status_code == 201
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(POLICY))
    argv = ["audit", "--kubeconfig", str(plane.kubeconfig), "-n", ns, "--config", str(path)]
    code = main([*argv, "--output", "json"])
    body = json.loads(capsys.readouterr().out)
    assert code == 1
    found = {r["name"]: [v["rule"] for v in r["violations"]] for r in body["results"]}
    assert found == {"bypassed": ["SUS-001"], "queued": []}


@pytest.fixture
def report_crds(admin: httpx.Client) -> Iterator[list[str]]:
    """The PolicyReport (wgpolicyk8s.io) and OpenReports CRDs, as their projects ship them."""
    crds = REPORT_CRDS
    for crd in crds:
        apply(admin, crd)
    for crd in crds:
        path = f"{collection_path(crd)}/{crd['metadata']['name']}"

        def established(path: str = path) -> bool:
            # A CRD just created has status.conditions null until the API server sets them.
            status = admin.get(path).json().get("status") or {}
            conditions = status.get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        wait_until(established, what=f"{path} established")
    yield [crd["spec"]["group"] for crd in crds]
    for crd in crds:
        admin.delete(f"{collection_path(crd)}/{crd['metadata']['name']}")


def test_audit_writes_policy_reports(
    plane: ControlPlane,
    namespace: Callable[[str], str],
    report_crds: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ns = namespace("audit")
    with plane.http("kueue") as kueue:
        body = job_manifest("bypassed", queue="q", suspend=False)
        created = kueue.post(JOBS.format(namespace=ns), json=body)
        assert created.status_code == 201
        uid = created.json()["metadata"]["uid"]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(POLICY))
    argv = ["audit", "--kubeconfig", str(plane.kubeconfig), "-n", ns, "--config", str(path)]
    for api, reports_path in (
        ("wgpolicyk8s", f"/apis/wgpolicyk8s.io/v1alpha2/namespaces/{ns}/policyreports"),
        ("openreports", f"/apis/openreports.io/v1alpha1/namespaces/{ns}/reports"),
    ):
        code = main([*argv, "--report-api", api, "--write-reports"])
        capsys.readouterr()
        assert code == 1
        with plane.http() as admin:
            listed = admin.get(reports_path)
        assert listed.status_code == 200, listed.text
        reports = listed.json()["items"]
        assert len(reports) == 1
        results = reports[0]["results"]
        assert [(r["source"], r["policy"], r["result"]) for r in results] == [
            ("jobguard", "SUS-001", "fail")
        ]
        # The report names the stored Job, uid and all.
        assert results[0]["resources"][0]["uid"] == uid


def test_exported_policies_are_accepted_and_enforced(
    plane: ControlPlane, admin: httpx.Client, namespace: Callable[[str], str]
) -> None:
    """The CEL of `jobguard export vap`, compiled and evaluated by the real API server."""
    ns = namespace("audit")
    export = export_vap(parse_config(yaml.safe_dump(POLICY)).to_settings(plane.release()))
    try:
        for obj in export.objects:
            apply(admin, obj)
        with plane.http("alice") as alice:

            def refused() -> httpx.Response | None:
                body = job_manifest(f"running-{secrets.token_hex(2)}", queue="q", suspend=False)
                response = alice.post(
                    JOBS.format(namespace=ns), params={"dryRun": "All"}, json=body
                )
                return response if response.status_code != 201 else None

            denied = wait_until(refused, 60, "the exported policies to take effect")
            assert denied.status_code == 403, denied.text
            assert "SUS-001: spec.suspend: Forbidden" in denied.json()["message"]
            suspended = job_manifest("suspended", queue="q", suspend=True)
            assert alice.post(JOBS.format(namespace=ns), json=suspended).status_code == 201
    finally:
        for obj in reversed(export.objects):
            admin.delete(f"{collection_path(obj)}/{obj['metadata']['name']}")
