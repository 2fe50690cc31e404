"""The chart's PrometheusRule and Grafana dashboard (both optional) read metrics the server
really exports: a server with TLS and the background audit (against the stand-in API server)
judges a few requests, its /metrics is scraped, and every expression of every alert and panel,
parsed as PromQL, may only select metric names found there, with label names those series carry
(or that Prometheus adds from the target) and, for `=` matchers, values they take."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import promql_parser
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from jobguard.app.certs import generate
from jobguard.app.cluster.audit import BackgroundAuditOptions
from jobguard.app.cluster.client import connect
from jobguard.app.config import parse_config
from jobguard.app.server.app import create_app
from jobguard.app.server.tls import TLSManager
from tests.reviews import review
from tests.test_audit import KUEUE, kubeconfig, stand_in  # noqa: F401  (fixtures)
from tests.test_chart import render
from tests.test_operations import bad_job
from tests.test_policy import body_for, queued_job

pytestmark = pytest.mark.slow  # a server with its background audit against the stand-in

TARGET_LABELS = {"job", "namespace", "pod", "instance", "service", "endpoint", "container"}
"""Labels Prometheus adds from the scrape target (the ServiceMonitor's)."""
PROMETHEUS_OWN = {"up"}
"""Series Prometheus makes itself for every target."""
GRAFANA = {"$__rate_interval": "5m", "$__range": "1h", "$job": ".*", "$namespace": ".*"}

Scraped = dict[str, dict[str, set[str]]]
"""Sample name -> label name -> values seen."""


def scrape(kubeconfig: str, tmp_path: Path) -> Scraped:  # noqa: F811
    paths = generate("jobguard", "jobguard-system", tmp_path, dev=True)
    del paths
    tls = TLSManager(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    audit = BackgroundAuditOptions(lambda: connect(kubeconfig), 3600.0)
    app = create_app(parse_config(Path(KUEUE).read_text()), audit=audit, tls=tls)
    with TestClient(app) as client:
        deadline = time.monotonic() + 20
        text = ""
        while 'jobguard_audit_runs_total{result="success"} 1.0' not in text:
            assert time.monotonic() < deadline, "the background audit did not run"
            time.sleep(0.05)
            text = client.get("/metrics").text
        client.post("/validate", json=review(bad_job()))  # denied
        client.post("/validate", json=body_for(queued_job()))  # denied by policy queued
        client.post("/mutate", json=body_for(queued_job()))  # suspended
        client.post("/validate", content=b"nope")  # bad_request
        text = client.get("/metrics").text
    scraped: Scraped = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = scraped.setdefault(sample.name, {})
            for name, value in sample.labels.items():
                labels.setdefault(name, set()).add(value)
    return scraped


def selectors(node: Any) -> tuple[list[promql_parser.VectorSelector], set[str]]:
    """Every vector selector of an expression, and the label names of its by/without/on
    clauses."""
    found: list[promql_parser.VectorSelector] = []
    grouping: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)
            return
        if isinstance(node, promql_parser.MatrixSelector):
            visit(node.vector_selector)
            return
        modifier = getattr(node, "modifier", None)
        labels = getattr(modifier, "labels", None)
        if isinstance(labels, list):
            grouping.update(labels)
        matching = getattr(modifier, "matching", None)
        if matching is not None:
            grouping.update(getattr(matching, "labels", []) or [])
        for attribute in ("lhs", "rhs", "expr", "param", "args"):
            child = getattr(node, attribute, None)
            for item in child if isinstance(child, list) else [child]:
                if item is not None and not isinstance(item, str | int | float):
                    visit(item)

    visit(node)
    return found, grouping


def check_expression(expr: str, scraped: Scraped) -> list[str]:
    """What in `expr` the scrape does not have (empty: all of it is there)."""
    for variable, value in GRAFANA.items():
        expr = expr.replace(variable, value)
    problems = []
    found, grouping = selectors(promql_parser.parse(expr))
    assert found, f"no selector in {expr}"
    available: set[str] = set(TARGET_LABELS)
    for selector in found:
        name = selector.name
        if name in PROMETHEUS_OWN:
            continue
        if name not in scraped:
            problems.append(f"{name}: not exported")
            continue
        labels = scraped[name]
        available |= set(labels)
        for matcher in selector.matchers.matchers:
            if matcher.name in TARGET_LABELS:
                continue
            if matcher.name not in labels:
                problems.append(f"{name}: no label {matcher.name}")
            elif (
                matcher.op == promql_parser.MatchOp.Equal
                and matcher.value not in labels[matcher.name]
            ):
                problems.append(f"{name}: {matcher.name}={matcher.value!r} never exported")
    problems += [f"by/on label {label} on no series" for label in grouping - available]
    return problems


def expressions() -> dict[str, str]:
    objects = render(
        {
            "audit": {"enabled": True},
            "metrics": {"prometheusRule": {"enabled": True}, "dashboard": {"enabled": True}},
        }
    )
    found = {
        f"alert {rule['alert']}": rule["expr"]
        for group in objects["PrometheusRule/jobguard"]["spec"]["groups"]
        for rule in group["rules"]
    }
    dashboard = json.loads(objects["ConfigMap/jobguard-dashboard"]["data"]["jobguard.json"])
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            found[f"panel {panel['title']} {target['refId']}"] = target["expr"]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("definition", "")
        selector = re.fullmatch(r"label_values\((.+), (\w+)\)", query)
        if selector:  # Grafana's label_values(SELECTOR, LABEL): the selector is PromQL
            found[f"variable {variable['name']}"] = selector[1]
    return found


def test_every_alert_and_panel_reads_exported_metrics(
    kubeconfig: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    scraped = scrape(kubeconfig, tmp_path)
    found = expressions()
    assert len([k for k in found if k.startswith("alert")]) == 10
    assert len([k for k in found if k.startswith("panel")]) >= 10
    problems = {where: check_expression(expr, scraped) for where, expr in found.items()}
    assert {where: p for where, p in problems.items() if p} == {}


def test_the_check_finds_what_is_not_exported() -> None:
    scraped: Scraped = {"jobguard_requests_total": {"verdict": {"allowed"}}}
    assert check_expression('rate(jobguard_request_total{job="x"}[5m])', scraped) == [
        "jobguard_request_total: not exported"
    ]
    assert check_expression('jobguard_requests_total{verdict="alowed"}', scraped) == [
        "jobguard_requests_total: verdict='alowed' never exported"
    ]
    assert check_expression("sum by (rule) (jobguard_requests_total)", scraped) == [
        "by/on label rule on no series"
    ]
    assert check_expression('jobguard_requests_total{code="200"}', scraped) == [
        "jobguard_requests_total: no label code"
    ]


def test_monitoring_objects_are_optional_and_labelled() -> None:
    objects = render()
    assert not any(
        k.startswith(("PrometheusRule/", "ConfigMap/jobguard-dashboard")) for k in objects
    )
    objects = render(
        {
            "metrics": {
                "prometheusRule": {"enabled": True, "labels": {"release": "kps"}},
                "dashboard": {
                    "enabled": True,
                    "namespace": "monitoring",
                    "annotations": {"grafana_folder": "Platform"},
                },
            }
        }
    )
    rule = objects["PrometheusRule/jobguard"]
    assert rule["metadata"]["labels"]["release"] == "kps"
    assert [g["name"] for g in rule["spec"]["groups"]] == [
        "jobguard.webhook",
        "jobguard.certificates-and-configuration",
    ]  # no audit group without audit.enabled
    dashboard = objects["ConfigMap/jobguard-dashboard"]
    assert dashboard["metadata"]["namespace"] == "monitoring"
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["metadata"]["annotations"] == {"grafana_folder": "Platform"}
    assert json.loads(dashboard["data"]["jobguard.json"])["uid"] == "jobguard"
