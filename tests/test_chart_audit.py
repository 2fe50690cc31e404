"""The chart's background audit and kubernetesVersion: auto, rendered by Helm's own engine like
tests/test_chart.py: off by default; when on, a least-privilege ClusterRole (list jobs and
cronjobs; list, create, patch and delete reports only when writing them) and the service account token
mounted only for what talks to the API server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from jobguard.app.cli.main import build_parser
from jobguard.app.cluster.paging import DEFAULT_PAGE_SIZE
from tests.test_chart import KUBERNETES, NAMESPACE, render

REPO = Path(__file__).resolve().parents[1]
LIST_JOBS = {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["list"]}
WRITE_REPORTS = {
    "apiGroups": ["wgpolicyk8s.io"],
    "resources": ["policyreports"],
    "verbs": ["list", "create", "patch", "delete"],
}


def _pod(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = objects["Deployment/jobguard"]["spec"]["template"]["spec"]
    return pod


def _audit_args(objects: dict[str, dict[str, Any]]) -> list[str]:
    return [a for a in _pod(objects)["containers"][0]["args"] if a.startswith("--audit")]


def test_audit_is_off_by_default() -> None:
    objects = render()
    assert not [k for k in objects if k.endswith("-audit")]
    assert _audit_args(objects) == []
    # With the webhook configurations rendered by the chart, nothing calls the API server.
    rendered = {
        "registration": "rendered",
        "rendered": "kind: MutatingWebhookConfiguration\nmetadata: {name: jobguard}\nwebhooks: []\n",
    }
    objects = render({"webhook": rendered})
    assert not [k for k in objects if k.startswith(("ClusterRole", "Role"))]
    assert _pod(objects)["automountServiceAccountToken"] is False


def test_audit_grants_list_on_jobs_and_cronjobs_only() -> None:
    objects = render({"audit": {"enabled": True, "intervalMinutes": 15}})
    role = objects["ClusterRole/jobguard-audit"]
    assert role["rules"] == [LIST_JOBS]
    binding = objects["ClusterRoleBinding/jobguard-audit"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "jobguard-audit",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "jobguard", "namespace": NAMESPACE}
    ]
    assert _pod(objects)["automountServiceAccountToken"] is True
    # The page size is the server's own default (one definition: jobguard.app.cluster.paging).
    assert _audit_args(objects) == ["--audit-interval=15"]
    for obj in (role, binding, objects["Deployment/jobguard"]):
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)


def test_writing_reports_grants_what_replacing_them_needs() -> None:
    objects = render({"audit": {"enabled": True, "writeReports": True}})
    assert objects["ClusterRole/jobguard-audit"]["rules"] == [LIST_JOBS, WRITE_REPORTS]
    assert _audit_args(objects) == [
        "--audit-interval=60",
        "--audit-write-reports",
        "--audit-report-api=wgpolicyk8s",
        "--audit-report-scope=namespace",
    ]
    objects = render({"audit": {"enabled": True, "writeReports": True, "reportApi": "openreports"}})
    assert objects["ClusterRole/jobguard-audit"]["rules"] == [
        LIST_JOBS,
        {**WRITE_REPORTS, "apiGroups": ["openreports.io"], "resources": ["reports"]},
    ]


def test_the_rendered_arguments_are_ones_serve_takes() -> None:
    objects = render(
        {
            "audit": {
                "enabled": True,
                "writeReports": True,
                "reportApi": "openreports",
                "reportScope": "object",
                "pageSize": 40,
            }
        }
    )
    args = build_parser().parse_args(_pod(objects)["containers"][0]["args"])  # entrypoint: jobguard
    assert (args.audit_interval, args.audit_page_size, args.audit_write_reports) == (60, 40, True)
    assert (args.audit_report_api, args.audit_report_scope) == ("openreports", "object")


def test_kubernetes_version_auto_mounts_the_token_without_a_role() -> None:
    objects = render({"config": {"kubernetesVersion": "auto"}})
    assert _pod(objects)["automountServiceAccountToken"] is True
    assert "ClusterRole/jobguard-audit" not in objects
    assert "kubernetesVersion: auto" in objects["ConfigMap/jobguard"]["data"]["config.yaml"]


@pytest.mark.parametrize(
    "values",
    [
        {"audit": {"writeReports": True}},
        {"audit": {"enabled": "yes"}},
        {"audit": {"intervalMinutes": 0}},
        {"audit": {"pageSize": 0}},
        {"audit": {"pageSize": "100"}},
        {"audit": {"bogus": 1}},
        {"audit": {"reportApi": "kyverno"}},
        {"audit": {"reportScope": "cluster"}},
    ],
)
def test_schema_rejects_unusable_audit_values(values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        render(values)


def test_the_readme_audit_block_is_the_charts_values() -> None:
    """README's `audit:` block shows values.yaml's audit values (`enabled` turned on) and the
    server's default page size; a change to either must show in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(audit:\n.*?)```", readme, re.DOTALL)
    assert len(blocks) == 1, "one audit block in the README"
    shown = yaml.safe_load(blocks[0])["audit"]
    values = yaml.safe_load((REPO / "charts/jobguard/values.yaml").read_text())["audit"]
    assert shown == {**values, "enabled": True}
    assert f"the server's default ({DEFAULT_PAGE_SIZE})" in blocks[0]
