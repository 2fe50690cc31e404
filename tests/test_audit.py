"""`jobguard audit` and the server's background audit against the stand-in API server
(tests/apiserver.py): exit codes, every output format, PolicyReports (printed and written),
RBAC failures, kubernetesVersion: auto, and the audit metrics."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema
import yaml
from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry

from jobguard.app.cli.main import main
from jobguard.app.cluster.audit import (
    AuditMetrics,
    AuditOptions,
    BackgroundAudit,
    BackgroundAuditOptions,
    audit,
)
from jobguard.app.cluster.client import ClusterError, connect
from jobguard.app.cluster.policy_reports import policy_reports
from jobguard.app.config import parse_config
from jobguard.app.server import endpoints
from jobguard.app.server.app import create_app
from jobguard.app.server.endpoints import DECODED_COST, MemoryBudget, ThreadBudget, _Hold
from jobguard.validators import Settings
from tests.apiserver import StandIn
from tests.builders import LATER, START, cond, cronjob, job, with_status
from tests.corpus import DATA, KUEUE_SETUP
from tests.test_policy import queued_job

KUEUE = str(KUEUE_SETUP)
MIB = 1024 * 1024
SCHEMAS = Path(__file__).parent / "schemas"
BYPASSED_MESSAGE = (
    "Forbidden: a job matched by policy 'queued' is not suspended and never was (no Suspended "
    "condition): it started without the queue; only kueue-system:kueue-controller-manager may "
    "create matched jobs running"
)
BYPASSED = f"Job team-a/jobs/train: SUS-001 spec.suspend: {BYPASSED_MESSAGE}"


def _objects() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    done = with_status(
        job("pi", uid="uid-pi", namespace="default"),
        startTime=START,
        completionTime=LATER,
        succeeded=1,
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    bypassed = with_status(queued_job(name="train", uid="uid-train"), startTime=START, active=1)
    queued = with_status(
        queued_job(name="queued", uid="uid-queued"),
        startTime=START,
        active=1,
        conditions=[cond("Suspended", "False")],
    )
    broken = with_status(job("broken", uid="uid-broken", namespace="team-b"), active=1, ready=2)
    return [done, bypassed, queued, broken], [cronjob("nightly", namespace="default")]


@pytest.fixture
def stand_in(server: StandIn, tmp_path: Path) -> StandIn:
    server.cluster.reset()
    jobs, cronjobs = _objects()
    server.cluster.add("jobs", *jobs)
    server.cluster.add("cronjobs", *cronjobs)
    return server


@pytest.fixture
def kubeconfig(stand_in: StandIn, tmp_path: Path) -> str:
    return str(stand_in.kubeconfig(tmp_path / "kubeconfig"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["audit", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output_and_exit_codes(capsys: pytest.CaptureFixture[str], kubeconfig: str) -> None:
    code, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE)
    assert code == 1
    assert out.splitlines() == [
        BYPASSED,
        "Job team-b/jobs/broken: ST-040 status.ready: Invalid value: 2: cannot set more ready "
        "pods than active",
        "2 violation(s) (2 deny, 0 warn, 0 dryrun) in 5 object(s) (4 Job(s), 1 CronJob(s)); "
        "judged at rest with the semantics of Kubernetes 1.35",
    ]
    code, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--namespace", "default")
    assert code == 0
    assert out.splitlines()[-1].startswith(
        "0 violation(s) (0 deny, 0 warn, 0 dryrun) in 2 object(s)"
    )


def test_warn_only_exits_zero(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, tmp_path: Path
) -> None:
    config = yaml.safe_load(Path(KUEUE).read_text())
    config["rules"] = {"SUS-001": {"enforcement": "warn"}, "ST-*": {"enforcement": "warn"}}
    path = tmp_path / "warn.yaml"
    path.write_text(yaml.safe_dump(config))
    code, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--config", str(path))
    assert code == 0
    assert out.splitlines()[0].startswith("Job team-a/jobs/train: SUS-001 [warn] spec.suspend")


def test_pages_and_namespace_reach_the_server(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, stand_in: StandIn
) -> None:
    run(capsys, "--kubeconfig", kubeconfig, "--page-size", "2")
    jobs = stand_in.cluster.lists("jobs")
    assert [r.query.get("limit") for r in jobs] == ["2", "2"]
    stand_in.cluster.requests.clear()
    run(capsys, "--kubeconfig", kubeconfig, "-n", "team-a")
    assert [r.path for r in stand_in.cluster.requests if "batch" in r.path] == [
        "/apis/batch/v1/namespaces/team-a/jobs",
        "/apis/batch/v1/namespaces/team-a/cronjobs",
    ]
    assert run(capsys, "--kubeconfig", kubeconfig, "--page-size", "0")[0] == 2


def test_json_output(capsys: pytest.CaptureFixture[str], kubeconfig: str) -> None:
    code, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--output", "json")
    assert code == 1
    body = json.loads(out)
    assert body["summary"] == {
        "objects": 5,
        "jobs": 4,
        "cronjobs": 1,
        "violations": 2,
        "deny": 2,
        "warn": 0,
        "dryrun": 0,
        "kubernetesVersion": "1.35",
    }
    train = next(r for r in body["results"] if r["name"] == "train")
    assert train == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "namespace": "team-a",
        "name": "train",
        "uid": "uid-train",
        "violations": [
            {
                "rule": "SUS-001",
                "field": "spec.suspend",
                "type": "FieldValueForbidden",
                "message": BYPASSED_MESSAGE,
                "enforcement": "deny",
            }
        ],
    }
    assert train["violations"][0]["message"].startswith("Forbidden: a job matched by policy")


def test_junit_output(capsys: pytest.CaptureFixture[str], kubeconfig: str) -> None:
    _, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--output", "junit")
    xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd")).validate(out)
    assert 'tests="5" failures="2"' in out
    assert '<failure type="SUS-001"' in out


def test_sarif_output(capsys: pytest.CaptureFixture[str], kubeconfig: str) -> None:
    _, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--output", "sarif")
    body = json.loads(out)
    schema = json.loads((SCHEMAS / "sarif-2.1.0-subset.schema.json").read_text())
    # Objects in a cluster have logical locations (namespace/resource/name), not files.
    results = schema["properties"]["runs"]["items"]["properties"]["results"]["items"]
    results["properties"]["locations"]["items"] = {
        "type": "object",
        "required": ["logicalLocations"],
        "properties": {
            "logicalLocations": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "object", "required": ["fullyQualifiedName", "kind"]},
            }
        },
    }
    jsonschema.validate(body, schema)
    (run_,) = body["runs"]
    assert [r["ruleId"] for r in run_["results"]] == ["SUS-001", "ST-040"]
    assert run_["results"][0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == (
        "team-a/jobs/train#spec.suspend"
    )


# The fields jobguard fills in, as the wgpolicyk8s.io/v1alpha2 PolicyReport CRD defines them.
POLICY_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "summary", "results"],
    "properties": {
        "apiVersion": {"const": "wgpolicyk8s.io/v1alpha2"},
        "kind": {"const": "PolicyReport"},
        "metadata": {"type": "object", "required": ["name", "namespace"]},
        "scope": {"type": "object", "required": ["apiVersion", "kind", "name", "namespace"]},
        "summary": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                k: {"type": "integer"} for k in ("pass", "fail", "warn", "error", "skip")
            },
        },
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["policy", "result", "resources", "source"],
                "additionalProperties": False,
                "properties": {
                    "source": {"type": "string"},
                    "policy": {"type": "string"},
                    "rule": {"type": "string"},
                    "category": {"type": "string"},
                    "message": {"type": "string"},
                    "result": {"enum": ["pass", "fail", "warn", "error", "skip"]},
                    "severity": {"enum": ["critical", "high", "low", "medium", "info"]},
                    "scored": {"type": "boolean"},
                    "properties": {"type": "object", "additionalProperties": {"type": "string"}},
                    "timestamp": {
                        "type": "object",
                        "required": ["seconds", "nanos"],
                        "properties": {
                            "seconds": {"type": "integer"},
                            "nanos": {"type": "integer"},
                        },
                    },
                    "resources": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["apiVersion", "kind", "name", "namespace", "uid"],
                        },
                    },
                },
            },
        },
    },
}


def test_policyreport_output_per_namespace(
    capsys: pytest.CaptureFixture[str], kubeconfig: str
) -> None:
    code, out, _ = run(
        capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--output", "policyreport"
    )
    assert code == 1
    reports = list(yaml.safe_load_all(out))
    for report in reports:
        jsonschema.validate(report, POLICY_REPORT_SCHEMA)
    assert [(r["metadata"]["namespace"], r["metadata"]["name"], r["summary"]) for r in reports] == [
        ("default", "jobguard", {"pass": 2, "fail": 0, "warn": 0, "error": 0, "skip": 0}),
        ("team-a", "jobguard", {"pass": 1, "fail": 1, "warn": 0, "error": 0, "skip": 0}),
        ("team-b", "jobguard", {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0}),
    ]
    failed = next(r for r in reports[1]["results"] if r["result"] == "fail")
    assert (failed["policy"], failed["rule"], failed["severity"], failed["category"]) == (
        "SUS-001",
        "SUS-001",
        "high",
        "policy",
    )
    assert failed["resources"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "namespace": "team-a",
            "name": "train",
            "uid": "uid-train",
        }
    ]
    assert failed["properties"] == {"field": "spec.suspend", "enforcement": "deny"}


def test_policyreport_per_object(stand_in: StandIn, kubeconfig: str) -> None:
    cluster = connect(kubeconfig)
    settings = parse_config(Path(KUEUE).read_text()).to_settings()
    reports = policy_reports(audit(cluster, settings, AuditOptions()), "object", now=1700000000)
    names = [(r["metadata"]["namespace"], r["metadata"]["name"]) for r in reports]
    assert names == [
        ("default", "jobguard-job-pi"),
        ("team-a", "jobguard-job-queued"),
        ("team-a", "jobguard-job-train"),
        ("team-b", "jobguard-job-broken"),
        ("default", "jobguard-cronjob-nightly"),
    ]
    for report in reports:
        jsonschema.validate(report, POLICY_REPORT_SCHEMA)
        assert report["scope"] == report["results"][0]["resources"][0]
    assert reports[0]["results"][0]["timestamp"] == {"seconds": 1700000000, "nanos": 0}
    warn = Settings()  # no policies: the bypassed Job passes
    assert [
        r["summary"]["fail"] for r in policy_reports(audit(cluster, warn, AuditOptions()), "object")
    ] == [0, 0, 0, 1, 0]


def test_write_reports_creates_then_updates(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, stand_in: StandIn
) -> None:
    code, _, err = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--write-reports")
    assert code == 2
    assert "the PolicyReport CRD (policyreports.wgpolicyk8s.io, v1alpha2) is not installed" in err
    assert stand_in.cluster.reports == {}
    stand_in.cluster.reports_installed = True
    code, _, err = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--write-reports")
    assert code == 1
    assert "PolicyReports written: 3 created, 0 updated" in err
    assert set(stand_in.cluster.reports) == {
        ("default", "jobguard"),
        ("team-a", "jobguard"),
        ("team-b", "jobguard"),
    }
    # The bypassing Job is suspended by its queue: the next audit updates the report.
    train = next(o for o in stand_in.cluster.objects["jobs"] if o["metadata"]["name"] == "train")
    train["spec"]["suspend"] = True
    code, _, err = run(capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--write-reports")
    assert "PolicyReports written: 0 created, 3 updated" in err
    assert stand_in.cluster.reports[("team-a", "jobguard")]["summary"]["fail"] == 0


OPEN_REPORT_SCHEMA = {
    **POLICY_REPORT_SCHEMA,
    "required": ["apiVersion", "kind", "metadata", "source", "summary", "results"],
    "properties": {
        **POLICY_REPORT_SCHEMA["properties"],
        "apiVersion": {"const": "openreports.io/v1alpha1"},
        "kind": {"const": "Report"},
        "source": {"const": "jobguard"},
    },
}


def test_write_reports_replace_the_last_pass(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, stand_in: StandIn
) -> None:
    cluster = stand_in.cluster
    cluster.reports_installed = True
    # A report of another tool in the same namespace: never listed as jobguard's, never touched.
    kyverno = {
        "apiVersion": "wgpolicyk8s.io/v1alpha2",
        "kind": "PolicyReport",
        "metadata": {
            "name": "kyverno",
            "namespace": "team-b",
            "labels": {"app.kubernetes.io/managed-by": "kyverno"},
        },
        "results": [],
    }
    cluster.reports[("team-b", "kyverno")] = kyverno
    args = ("--kubeconfig", kubeconfig, "--config", KUEUE, "--write-reports")
    code, _, err = run(capsys, *args)
    assert "PolicyReports written: 3 created, 0 updated, 0 deleted (stale)" in err
    assert cluster.reports[("team-b", "jobguard")]["summary"]["fail"] == 1
    # team-b's only Job is removed (ttlSecondsAfterFinished): its namespace report goes with it.
    cluster.delete("jobs", "team-b", "broken")
    code, _, err = run(capsys, *args)
    assert code == 1
    assert "PolicyReports written: 0 created, 2 updated, 1 deleted (stale)" in err
    assert set(cluster.reports) == {
        ("default", "jobguard"),
        ("team-a", "jobguard"),
        ("team-b", "kyverno"),
    }
    # The Job that failed is gone too: the namespace report no longer says fail.
    cluster.delete("jobs", "team-a", "train")
    code, _, err = run(capsys, *args)
    assert code == 0
    assert cluster.reports[("team-a", "jobguard")]["summary"] == {
        "pass": 1,
        "fail": 0,
        "warn": 0,
        "error": 0,
        "skip": 0,
    }
    # One namespace audited: only that namespace's reports are listed and replaced.
    cluster.requests.clear()
    run(capsys, *args, "-n", "team-a")
    lists = [r for r in cluster.requests if r.method == "GET" and r.path.endswith("policyreports")]
    assert [(r.path, r.query["labelSelector"]) for r in lists] == [
        (
            "/apis/wgpolicyk8s.io/v1alpha2/namespaces/team-a/policyreports",
            "app.kubernetes.io/managed-by=jobguard",
        )
    ]
    assert ("default", "jobguard") in cluster.reports
    assert cluster.reports[("team-b", "kyverno")] is kyverno


def test_openreports_per_object_owned_and_deleted_with_the_object(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, stand_in: StandIn
) -> None:
    cluster = stand_in.cluster
    args = ("--kubeconfig", kubeconfig, "--config", KUEUE, "--write-reports")
    per_object = (*args, "--report-api", "openreports", "--report-scope", "object")
    code, _, err = run(capsys, *per_object)
    assert code == 2
    assert "the Report CRD (reports.openreports.io, v1alpha1) is not installed" in err
    cluster.openreports_installed = True
    cluster.reports_installed = True
    # A namespace-scoped pass first, in the PolicyReport API: that API is not touched by passes
    # that write OpenReports.
    run(capsys, *args)
    code, _, err = run(capsys, *per_object)
    assert code == 1
    assert "Reports written: 5 created, 0 updated, 0 deleted (stale)" in err
    assert len(cluster.reports) == 3
    train = cluster.openreports[("team-a", "jobguard-job-train")]
    jsonschema.validate(train, OPEN_REPORT_SCHEMA)
    assert train["metadata"]["ownerReferences"] == [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-train"}
    ]
    assert train["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "jobguard"}
    assert train["scope"]["uid"] == "uid-train"
    assert train["summary"]["fail"] == 1
    # The Job disappears between passes: its report is deleted, the others are updated.
    cluster.delete("jobs", "team-a", "train")
    code, _, err = run(capsys, *per_object)
    assert code == 1
    assert "Reports written: 0 created, 4 updated, 1 deleted (stale)" in err
    assert ("team-a", "jobguard-job-train") not in cluster.openreports
    # Recreated under the same name: the report is patched to its new owner.
    cluster.add("jobs", job("train", uid="uid-train-2", namespace="team-a"))
    run(capsys, *per_object)
    owner = cluster.openreports[("team-a", "jobguard-job-train")]["metadata"]["ownerReferences"]
    assert owner[0]["uid"] == "uid-train-2"
    # Back to one report per namespace: the per-object reports are replaced.
    code, _, err = run(capsys, *args, "--report-api", "openreports")
    assert "Reports written: 3 created, 0 updated, 5 deleted (stale)" in err
    assert sorted(cluster.openreports) == [
        ("default", "jobguard"),
        ("team-a", "jobguard"),
        ("team-b", "jobguard"),
    ]
    assert "ownerReferences" not in cluster.openreports[("team-a", "jobguard")]["metadata"]


def test_openreports_output(capsys: pytest.CaptureFixture[str], kubeconfig: str) -> None:
    code, out, _ = run(
        capsys, "--kubeconfig", kubeconfig, "--config", KUEUE, "--output", "openreports"
    )
    assert code == 1
    reports = list(yaml.safe_load_all(out))
    assert [r["metadata"]["namespace"] for r in reports] == ["default", "team-a", "team-b"]
    for report in reports:
        jsonschema.validate(report, OPEN_REPORT_SCHEMA)
    code, out, _ = run(
        capsys,
        "--kubeconfig",
        kubeconfig,
        "--output",
        "policyreport",
        "--report-api",
        "openreports",
        "--report-scope",
        "object",
    )
    assert {r["kind"] for r in yaml.safe_load_all(out)} == {"Report"}


def test_missing_rbac_is_named(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, stand_in: StandIn
) -> None:
    stand_in.cluster.forbid.add(("list", "cronjobs"))
    code, out, err = run(capsys, "--kubeconfig", kubeconfig)
    assert code == 2
    assert out == ""
    assert err.startswith(
        "jobguard: could not audit: forbidden: the credentials may not list cronjobs.batch in all "
        "namespaces (RBAC needs verb 'list' on resource 'cronjobs' in API group 'batch', "
        "cluster-wide)"
    )
    stand_in.cluster.forbid = {("create", "policyreports")}
    stand_in.cluster.reports_installed = True
    code, _, err = run(capsys, "--kubeconfig", kubeconfig, "--write-reports")
    assert code == 2
    assert (
        "RBAC needs verb 'create' on resource 'policyreports' in API group 'wgpolicyk8s.io'" in err
    )
    # Replacing the last pass lists and deletes reports: both are named when not granted.
    for verb, message in [
        ("list", "may not list reports.openreports.io in all namespaces"),
        ("delete", "may not delete reports.openreports.io in namespace 'team-b'"),
    ]:
        stand_in.cluster.forbid = {(verb, "reports")}
        stand_in.cluster.openreports_installed = True
        stand_in.cluster.openreports[("team-b", "jobguard-job-gone")] = {
            "metadata": {
                "name": "jobguard-job-gone",
                "namespace": "team-b",
                "labels": {"app.kubernetes.io/managed-by": "jobguard"},
            }
        }
        code, _, err = run(
            capsys, "--kubeconfig", kubeconfig, "--write-reports", "--report-api", "openreports"
        )
        assert code == 2 and message in err, err


def test_unreachable_or_unauthorized(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    stand_in: StandIn,
    tmp_path: Path,
) -> None:
    stale = str(stand_in.kubeconfig(tmp_path / "stale", token="stale"))
    code, _, err = run(capsys, "--kubeconfig", stale)
    assert code == 2 and "could not audit: unauthorized" in err
    # Unreachable: one line naming the server and the kubeconfig, and no retry warning first.
    code, _, err = run(capsys, "--kubeconfig", stale, "--context", "nowhere")
    assert code == 2
    assert err == (
        f"jobguard: could not audit: cannot reach the cluster at https://127.0.0.1:9 (kubeconfig "
        f"{stale}, context nowhere): [Errno 111] Connection refused\n"
    )
    assert "Retrying" not in caplog.text


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such file"),
        ("clusters: [\n  broken", "not YAML: expected ',' or ']', but got '<stream end>'"),
        ("just a string\n", "not a kubeconfig (TypeError: "),
        ("apiVersion: v1\nkind: Config\n", "Invalid kube-config file"),
    ],
)
def test_an_unusable_kubeconfig_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "--kubeconfig", str(path))
    assert code == 2 and out == ""
    prefix = f"jobguard: could not audit: no usable cluster configuration: kubeconfig {path}: "
    assert err.startswith(prefix + problem), err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_default_kubeconfig_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    code, _, err = run(capsys)
    assert code == 2
    assert err == (
        f"jobguard: could not audit: no usable cluster configuration: kubeconfig "
        f"{tmp_path / 'nope'}: no such file (and not running in a pod)\n"
    )


@pytest.mark.parametrize(
    ("minor", "version", "warned"),
    [("36", "1.36", False), ("37", "1.37", False), ("30", "1.33", True), ("39", "1.37", True)],
)
def test_kubernetes_version_auto(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    kubeconfig: str,
    stand_in: StandIn,
    tmp_path: Path,
    minor: str,
    version: str,
    warned: bool,
) -> None:
    stand_in.cluster.version = {"major": "1", "minor": minor, "gitVersion": f"v1.{minor}.0"}
    path = tmp_path / "auto.yaml"
    path.write_text("kubernetesVersion: auto\n")
    _, out, _ = run(capsys, "--kubeconfig", kubeconfig, "--config", str(path))
    assert out.splitlines()[-1].endswith(f"with the semantics of Kubernetes {version}")
    assert ("than every release jobguard knows" in caplog.text) is warned


def test_offline_commands_say_what_auto_means(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "auto.yaml"
    path.write_text("kubernetesVersion: auto\n")
    manifest = DATA / "cases" / "tm" / "running.yaml"
    assert main(["check", "--config", str(path), str(manifest)]) == 0
    assert (
        "kubernetesVersion: auto needs a cluster; judging with the semantics of 1.35"
        in capsys.readouterr().err
    )


# --- the background audit in the server ---------------------------------------------------------


def test_background_audit_metrics(kubeconfig: str, stand_in: StandIn) -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    metrics = AuditMetrics(registry)
    settings = parse_config(Path(KUEUE).read_text()).to_settings()
    background = BackgroundAudit(lambda: connect(kubeconfig), lambda: settings, metrics, 60.0)
    before = time.time()
    report = background.run_once()
    assert report is not None and len(report.results) == 5
    text = generate_latest(registry).decode()
    assert 'jobguard_audit_violations{rule="SUS-001"} 1.0' in text
    assert 'jobguard_audit_violations{rule="ST-040"} 1.0' in text
    assert 'jobguard_audit_runs_total{result="success"} 1.0' in text
    assert metrics.last_run._value.get() >= before
    # Fixed in the cluster: the next audit drops the rule's series.
    broken = next(o for o in stand_in.cluster.objects["jobs"] if o["metadata"]["name"] == "broken")
    broken["status"]["ready"] = 1
    background.run_once()
    text = generate_latest(registry).decode()
    assert 'rule="ST-040"' not in text
    # A failed audit is counted and logged; the last successful run's metrics stay.
    stand_in.cluster.forbid.add(("list", "jobs"))
    assert background.run_once() is None
    text = generate_latest(registry).decode()
    assert 'jobguard_audit_runs_total{result="failure"} 1.0' in text
    assert 'jobguard_audit_violations{rule="SUS-001"} 1.0' in text


class _Recorded:
    """A ThreadBudget whose holds are noted as the audit takes them."""

    def __init__(self, budget: MemoryBudget, loop: asyncio.AbstractEventLoop) -> None:
        self.budget = budget
        self.inner = ThreadBudget(budget, loop)
        self.used: list[int] = []
        self.sizes: list[int] = []
        self.before: list[int] = []

    def take(self, size: int) -> bool:
        self.sizes.append(size)
        self.before.append(self.budget.used)
        taken = self.inner.take(size)
        self.used.append(self.budget.used if taken else -1)
        return taken

    def give_back(self) -> None:
        self.inner.give_back()


def test_the_audit_draws_on_the_bodies_budget(
    kubeconfig: str, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page is held (at DECODED_COST a byte of it) while it is judged; a pass leaves the
    budget as it found it, passed or failed; the audit waits for a large body holding the
    share, and fails its pass (AUDIT_WAIT) when the body keeps it."""
    monkeypatch.setattr(endpoints, "AUDIT_WAIT", 0.3)
    settings = parse_config(Path(KUEUE).read_text()).to_settings()
    background = BackgroundAudit(
        lambda: connect(kubeconfig),
        lambda: settings,
        AuditMetrics(CollectorRegistry()),
        60.0,
        AuditOptions(page_size=2),
    )

    async def scenario() -> None:
        budget = MemoryBudget(64 * MIB)
        memory = _Recorded(budget, asyncio.get_running_loop())
        report = await asyncio.to_thread(background.run_once, memory)
        assert report is not None and len(report.results) == 5
        # Pages of two objects: each held alone, at its bytes' decoded cost, the one before
        # given back before the next is asked.
        pages = len(stand_in.cluster.lists("jobs")) + len(stand_in.cluster.lists("cronjobs"))
        assert len(memory.sizes) == pages >= 3 and min(memory.sizes) > 100
        assert memory.used == [size * DECODED_COST for size in memory.sizes]
        assert memory.before == [0] * pages
        assert (budget.used, budget.large_used) == (0, 0)
        # A large body holds the share: the audit waits, and goes on once it is answered.
        body = _Hold("/validate")
        assert budget.try_acquire(body, 4 * MIB)
        running = asyncio.create_task(asyncio.to_thread(background.run_once, memory))
        for _ in range(100):
            if budget.waiting:
                break
            await asyncio.sleep(0.01)
        assert budget.waiting == 1
        budget.release(body)
        assert await running is not None
        assert (budget.used, budget.waiting) == (0, 0)
        # Held throughout: the pass fails, naming why, and gives everything back.
        assert budget.try_acquire(body, 4 * MIB)
        assert await asyncio.to_thread(background.run_once, memory) is None
        assert memory.used[-1] == -1
        budget.release(body)
        assert (budget.used, budget.waiting) == (0, 0)
        # A pass failing after a page was held gives it back too.
        stand_in.cluster.forbid.add(("list", "cronjobs"))
        assert await asyncio.to_thread(background.run_once, memory) is None
        assert memory.used[-1] > 0 and (budget.used, budget.large_used) == (0, 0)

    asyncio.run(scenario())


def test_background_audit_runs_in_the_server(kubeconfig: str, stand_in: StandIn) -> None:
    options = BackgroundAuditOptions(lambda: connect(kubeconfig), 3600.0)
    app = create_app(parse_config(Path(KUEUE).read_text()), audit=options)
    with TestClient(app) as client:
        deadline = time.monotonic() + 20
        text = ""
        done = 'jobguard_audit_runs_total{result="success"} 1.0'
        while time.monotonic() < deadline and done not in text:
            time.sleep(0.05)
            text = client.get("/metrics").text
        assert 'jobguard_audit_violations{rule="SUS-001"} 1.0' in text
        assert client.get("/readyz").status_code == 200
    assert len(stand_in.cluster.lists("jobs")) == 1  # once at start, then every hour


def test_server_without_audit_has_no_audit_metrics() -> None:
    with TestClient(create_app(parse_config("{}"))) as client:
        assert "jobguard_audit" not in client.get("/metrics").text


def test_serve_with_auto_needs_the_cluster(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, stand_in: StandIn
) -> None:
    path = tmp_path / "auto.yaml"
    path.write_text("kubernetesVersion: auto\n")
    kubeconfig = str(stand_in.kubeconfig(tmp_path / "kc"))
    code = main(
        ["serve", "--config", str(path), "--kubeconfig", kubeconfig, "--context", "nowhere"]
    )
    assert code == 2
    assert "kubernetesVersion: auto: cannot reach the cluster" in capsys.readouterr().err


def test_auto_version_survives_reloads(tmp_path: Path) -> None:
    path = tmp_path / "auto.yaml"
    path.write_text("kubernetesVersion: auto\n")
    app = create_app(config_path=str(path), cluster_version="1.36")
    assert app.state.settings.semantics.version == "1.36"
    path.write_text("kubernetesVersion: auto\nenforcement: warn\n")
    assert app.state.reloader.check(force=True)
    assert app.state.settings.semantics.version == "1.36"
    assert app.state.settings.enforcement.value == "warn"


def test_a_pass_past_its_deadline_stops_with_an_error(stand_in: StandIn, kubeconfig: str) -> None:
    cluster = connect(kubeconfig)
    with pytest.raises(ClusterError, match=r"^the audit did not finish within 0 s; stopped$"):
        audit(cluster, Settings(), AuditOptions(pass_seconds=0))
    assert len(audit(cluster, Settings(), AuditOptions()).results) > 0
