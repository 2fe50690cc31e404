"""Output formats of `jobguard audit`: text, json, junit and sarif as `jobguard check` writes them
(an object in the cluster stands where a file and line stand), and `policyreport`:
`wgpolicyk8s.io/v1alpha2` PolicyReport objects, or `openreports.io/v1alpha1` Reports (the same
shape), one per namespace or one per object (owned by the object, so they go with it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree as ET

import orjson
import yaml

from jobguard.app.cli.check_report import SARIF_LEVEL, sarif_log
from jobguard.app.cluster.audit import AuditReport, ObjectResult
from jobguard.validators import RULES_BY_ID, Enforcement, Violation

REPORT_KINDS = {
    "wgpolicyk8s": ("wgpolicyk8s.io/v1alpha2", "PolicyReport"),
    "openreports": ("openreports.io/v1alpha1", "Report"),
}
"""apiVersion and kind of a namespaced report, by report API (`--report-api`)."""
REPORT_SOURCE = "jobguard"
MANAGED_BY = {"app.kubernetes.io/managed-by": "jobguard"}
MANAGED_BY_SELECTOR = "app.kubernetes.io/managed-by=jobguard"
"""What an audit pass lists to find the reports it wrote before (and deletes those it did not
write again); reports of other tools are never touched."""
CLEAN_RULE = "at-rest"
"""The rule of the one `pass` result a clean object gets (no rule ID fired for it)."""
RESULT = {Enforcement.DENY: "fail", Enforcement.WARN: "warn", Enforcement.DRYRUN: "warn"}
SEVERITY = {Enforcement.DENY: "high", Enforcement.WARN: "medium", Enforcement.DRYRUN: "low"}


def _line(result: ObjectResult, violation: Violation) -> str:
    error = violation.error
    mode = "" if violation.enforcement is Enforcement.DENY else f" [{violation.enforcement.value}]"
    return f"{result.ref.kind} {result.ref.path}: {error.rule}{mode} {error.message()}"


def text(report: AuditReport) -> str:
    lines = [_line(r, v) for r in report.results for v in r.violations]
    s = report.summary()
    lines.append(
        f"{s['violations']} violation(s) ({s['deny']} deny, {s['warn']} warn, {s['dryrun']} "
        f"dryrun) in {s['objects']} object(s) ({s['jobs']} Job(s), {s['cronjobs']} CronJob(s)); "
        f"judged at rest with the semantics of Kubernetes {report.version}"
    )
    return "\n".join(lines) + "\n"


def _violation_json(violation: Violation) -> dict[str, Any]:
    error = violation.error
    return {
        "rule": error.rule,
        "field": error.path,
        "type": error.type.reason,
        "message": error.body(),
        "enforcement": violation.enforcement.value,
    }


def json(report: AuditReport) -> str:
    body = {
        "summary": {**report.summary(), "kubernetesVersion": report.version},
        "results": [
            {
                **r.ref.reference(),
                "violations": [_violation_json(v) for v in r.violations],
            }
            for r in report.results
        ],
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"


def junit(report: AuditReport) -> str:
    tests = str(len(report.results))
    failures = str(report.count(Enforcement.DENY))
    suites = ET.Element("testsuites", name="jobguard", tests=tests, failures=failures, errors="0")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="jobguard audit",
        tests=tests,
        failures=failures,
        errors="0",
        skipped="0",
    )
    for r in report.results:
        case = ET.SubElement(
            suite, "testcase", classname=r.ref.namespace, name=f"{r.ref.kind} {r.ref.path}"
        )
        for v in r.violations:
            if v.enforcement is Enforcement.DENY:
                failure = ET.SubElement(
                    case, "failure", type=v.error.rule, message=v.error.message()
                )
                failure.text = _line(r, v)
        others = [v for v in r.violations if v.enforcement is not Enforcement.DENY]
        if others:
            ET.SubElement(case, "system-out").text = "\n".join(_line(r, v) for v in others)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def sarif(report: AuditReport) -> str:
    rule_ids = sorted({v.error.rule for r in report.results for v in r.violations})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results = [
        {
            "ruleId": v.error.rule,
            "ruleIndex": index[v.error.rule],
            "level": SARIF_LEVEL[v.enforcement],
            "message": {"text": v.error.message()},
            "locations": [
                {
                    "logicalLocations": [
                        {
                            "name": r.ref.name,
                            "fullyQualifiedName": f"{r.ref.path}#{v.error.path}",
                            "kind": "object",
                        }
                    ]
                }
            ],
        }
        for r in report.results
        for v in r.violations
    ]
    return sarif_log(rule_ids, results)


# --- PolicyReports ------------------------------------------------------------------------------


def _results(result: ObjectResult, timestamp: dict[str, int]) -> list[dict[str, Any]]:
    resource = result.ref.reference()
    if not result.violations:
        return [
            {
                "source": REPORT_SOURCE,
                "policy": REPORT_SOURCE,
                "rule": CLEAN_RULE,
                "result": "pass",
                "message": "no rule that holds at rest fired",
                "resources": [resource],
                "scored": True,
                "timestamp": timestamp,
            }
        ]
    out = []
    for violation in result.violations:
        error = violation.error
        info = RULES_BY_ID.get(error.rule)
        out.append(
            {
                "source": REPORT_SOURCE,
                "policy": error.rule,
                "rule": error.rule,
                "category": info.area if info is not None else "",
                "result": RESULT[violation.enforcement],
                "severity": SEVERITY[violation.enforcement],
                "message": error.message(),
                "resources": [resource],
                "properties": {"field": error.path, "enforcement": violation.enforcement.value},
                "scored": True,
                "timestamp": timestamp,
            }
        )
    return out


def _summary(results: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0}
    for result in results:
        counts[result["result"]] += 1
    return counts


def _report(name: str, namespace: str, results: list[dict[str, Any]], api: str) -> dict[str, Any]:
    api_version, kind = REPORT_KINDS[api]
    body: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
    }
    if api == "openreports":
        body["source"] = REPORT_SOURCE
    body["summary"] = _summary(results)
    body["results"] = results
    return body


def report_name(result: ObjectResult) -> str:
    """The name of an object's own report: "jobguard-<kind>-<name>" (Job names have at most 63
    characters, CronJob names 52, so it stays a valid name)."""
    return f"jobguard-{result.ref.kind.lower()}-{result.ref.name}"


def policy_reports(
    report: AuditReport,
    scope: str = "namespace",
    now: float | None = None,
    api: str = "wgpolicyk8s",
) -> list[dict[str, Any]]:
    """Reports of the `api` ("wgpolicyk8s": PolicyReports, "openreports": Reports): one per
    namespace (named "jobguard"), or one per object (`report_name`, with the object as `scope`
    and as its owner, so the garbage collector deletes the report with the object)."""
    seconds = int(time.time() if now is None else now)
    timestamp = {"seconds": seconds, "nanos": 0}
    if scope == "object":
        reports = []
        for r in report.results:
            body = _report(report_name(r), r.ref.namespace, _results(r, timestamp), api)
            if r.ref.uid:
                body["metadata"]["ownerReferences"] = [
                    {
                        "apiVersion": r.ref.api_version,
                        "kind": r.ref.kind,
                        "name": r.ref.name,
                        "uid": r.ref.uid,
                    }
                ]
            reports.append({**body, "scope": r.ref.reference()})
        return reports
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for r in report.results:
        by_namespace.setdefault(r.ref.namespace, []).extend(_results(r, timestamp))
    return [_report("jobguard", ns, results, api) for ns, results in sorted(by_namespace.items())]


def policyreport(report: AuditReport, scope: str = "namespace", api: str = "wgpolicyk8s") -> str:
    """The reports as YAML documents (`kubectl apply -f -` takes them)."""
    return yaml.safe_dump_all(policy_reports(report, scope, api=api), sort_keys=False)


FORMATS: dict[str, Callable[[AuditReport], str]] = {
    "text": text,
    "json": json,
    "junit": junit,
    "sarif": sarif,
}
