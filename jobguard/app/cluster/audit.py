"""`jobguard audit` and the server's background audit: the Jobs and CronJobs already stored in a
cluster, each judged at rest (`validators.judge_at_rest`), listed page by page with the
official `kubernetes` client (`app.cluster`).

Exit codes of the command: 0 no deny-level violation, 1 at least one, 2 the cluster could not be
audited (unreachable, unauthorized, a missing permission named by verb and resource).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client import Counter as MetricCounter

from jobguard.app.cluster.client import (
    CRONJOBS,
    JOBS,
    POLICY_REPORTS,
    Cluster,
    ClusterError,
    PageMemory,
    Resource,
)
from jobguard.app.cluster.paging import DEFAULT_PAGE_SIZE
from jobguard.app.exits import ExitCode
from jobguard.validators import Enforcement, Settings, Violation, judge_at_rest

log = logging.getLogger("jobguard.audit")


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    namespace: str
    name: str
    uid: str

    @property
    def api_version(self) -> str:
        return "batch/v1"

    @property
    def path(self) -> str:
        """ "team-a/jobs/pi": where it lives, as kubectl would name it."""
        plural = "jobs" if self.kind == "Job" else "cronjobs"
        return f"{self.namespace}/{plural}/{self.name}"

    def reference(self) -> dict[str, str]:
        """An ObjectReference."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
        }


@dataclass(slots=True)
class ObjectResult:
    ref: ObjectRef
    violations: list[Violation]


@dataclass(slots=True)
class AuditReport:
    results: list[ObjectResult] = field(default_factory=list)
    version: str = ""
    """The Kubernetes version whose semantics judged the objects."""

    def count(self, enforcement: Enforcement) -> int:
        return sum(1 for r in self.results for v in r.violations if v.enforcement is enforcement)

    def by_rule(self) -> Counter[str]:
        return Counter(v.error.rule for r in self.results for v in r.violations)

    def summary(self) -> dict[str, int]:
        return {
            "objects": len(self.results),
            "jobs": sum(1 for r in self.results if r.ref.kind == "Job"),
            "cronjobs": sum(1 for r in self.results if r.ref.kind == "CronJob"),
            "violations": sum(len(r.violations) for r in self.results),
            "deny": self.count(Enforcement.DENY),
            "warn": self.count(Enforcement.WARN),
            "dryrun": self.count(Enforcement.DRYRUN),
        }

    @property
    def exit_code(self) -> int:
        return ExitCode.FINDINGS if self.count(Enforcement.DENY) else ExitCode.OK


@dataclass(frozen=True, slots=True)
class AuditOptions:
    namespace: str | None = None
    """One namespace, else all."""
    page_size: int = DEFAULT_PAGE_SIZE
    pass_seconds: float = 1800.0
    """A pass that has not finished in this long stops with an error (each answer is bounded
    too: `client.REQUEST_DEADLINE`); the next pass starts afresh."""


def _ref(kind: str, item: Any) -> ObjectRef:
    metadata = item.get("metadata") if isinstance(item, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}

    def text(key: str) -> str:
        value = metadata.get(key)
        return value if isinstance(value, str) else ""

    return ObjectRef(kind, text("namespace"), text("name"), text("uid"))


def audit(cluster: Cluster, settings: Settings, options: AuditOptions) -> AuditReport:
    """Every Job and CronJob (of one namespace, or all), judged at rest (ClusterError when the
    cluster cannot be listed)."""
    report = AuditReport(version=settings.semantics.version)
    deadline = time.monotonic() + options.pass_seconds
    for resource in (JOBS, CRONJOBS):
        for item in cluster.list_objects(resource, options.namespace, options.page_size):
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"the audit did not finish within {options.pass_seconds:g} s; stopped"
                )
            verdict = judge_at_rest(resource.kind, item, settings)
            report.results.append(ObjectResult(_ref(resource.kind, item), verdict.unique()))
    report.results.sort(key=lambda r: (r.ref.kind != "Job", r.ref.namespace, r.ref.name))
    return report


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    created: int
    updated: int
    deleted: int = 0


def write_reports(
    cluster: Cluster,
    reports: list[dict[str, Any]],
    resource: Resource = POLICY_REPORTS,
    namespace: str | None = None,
) -> WriteOutcome:
    """Replace what the last pass wrote: create or update `reports` (of `resource`), then delete
    the reports jobguard wrote before (labelled `MANAGED_BY`, in `namespace`, else in all) that
    this pass did not write, those of namespaces and objects that are gone. ClusterError when
    their CRD is not installed (jobguard never installs CRDs) or a request fails."""
    from jobguard.app.cluster.policy_reports import MANAGED_BY_SELECTOR

    if not cluster.serves(resource):
        raise ClusterError(
            f"the {resource.kind} CRD ({resource.qualified}, {resource.version}) is not "
            "installed in the cluster; jobguard does not install CRDs, so no report was written"
        )
    before = cluster.list_reports(resource, namespace, MANAGED_BY_SELECTOR)
    outcomes = Counter(cluster.apply_report(report, resource) for report in reports)
    written = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in reports}
    deleted = sum(
        cluster.delete_report(resource, ns, name) for ns, name in sorted(set(before) - written)
    )
    return WriteOutcome(outcomes["created"], outcomes["updated"], deleted)


class AuditMetrics:
    """The background audit's metrics, on the server's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.violations = Gauge(
            "jobguard_audit_violations",
            "Violations found by the last background audit, by rule ID.",
            ["rule"],
            registry=registry,
        )
        self.last_run = Gauge(
            "jobguard_audit_last_run_timestamp_seconds",
            "Unix time at which the last background audit finished successfully.",
            registry=registry,
        )
        self.runs = MetricCounter(
            "jobguard_audit_runs_total",
            "Background audits by result (success, failure).",
            ["result"],
            registry=registry,
        )
        for result in ("success", "failure"):  # both series from the start (alerts on increase)
            self.runs.labels(result)

    def record(self, report: AuditReport, finished: float) -> None:
        self.violations.clear()
        for rule, count in sorted(report.by_rule().items()):
            self.violations.labels(rule).set(count)
        self.last_run.set(finished)
        self.runs.labels("success").inc()


@dataclass(frozen=True, slots=True)
class BackgroundAuditOptions:
    """What `jobguard serve --audit-interval` asks of the server."""

    connect: Callable[[], Cluster]
    interval: float
    """Seconds between audits."""
    options: AuditOptions = field(default_factory=AuditOptions)
    write_reports: bool = False
    report_api: str = "wgpolicyk8s"
    """"wgpolicyk8s" (PolicyReports) or "openreports" (Reports)."""
    report_scope: str = "namespace"
    """One report per namespace or per object."""


LEADER_POLL = 2.0
"""Seconds between looks at the Lease while another replica leads."""


class BackgroundAudit:
    """Audits the cluster every `interval` seconds in the server (in a worker thread: the
    kubernetes client blocks), publishing metrics and, when asked, reports (PolicyReports or
    OpenReports Reports) that replace those of the previous pass."""

    def __init__(
        self,
        connect: Callable[[], Cluster],
        settings: Callable[[], Settings],
        metrics: AuditMetrics,
        interval: float,
        options: AuditOptions | None = None,
        write: bool = False,
        report_api: str = "wgpolicyk8s",
        report_scope: str = "namespace",
        leading: Callable[[], bool] | None = None,
    ) -> None:
        self.connect = connect
        self.leading = leading
        """With several replicas, whether this one holds the Lease (the registrations' leader):
        only the leader audits, so reports are written once. None: audit in every replica."""
        self.settings = settings
        self.metrics = metrics
        self.interval = interval
        self.options = options or AuditOptions()
        self.write = write
        self.report_api = report_api
        self.report_scope = report_scope
        self.memory: Callable[[asyncio.AbstractEventLoop], PageMemory] | None = None
        """In the server: its request bodies' budget as seen from the audit's thread, on the
        given event loop (`endpoints.ThreadBudget`); each page's decoded cost is held from it."""

    def run_once(self, memory: PageMemory | None = None) -> AuditReport | None:
        """One audit, its pages' memory taken from `memory`, all of it given back when the pass
        ends; failures are logged and counted, never raised."""
        from jobguard.app.cluster.client import REPORT_APIS
        from jobguard.app.cluster.policy_reports import policy_reports

        try:
            cluster = self.connect()
            cluster.page_memory = memory
            try:
                report = audit(cluster, self.settings(), self.options)
                if self.write:
                    written = write_reports(
                        cluster,
                        policy_reports(report, self.report_scope, api=self.report_api),
                        REPORT_APIS[self.report_api],
                        self.options.namespace,
                    )
                    log.info(
                        "policy reports written: %d created, %d updated, %d deleted",
                        written.created,
                        written.updated,
                        written.deleted,
                    )
            finally:
                cluster.close()
                if memory is not None:
                    memory.give_back()
        except ClusterError as exc:
            self.metrics.runs.labels("failure").inc()
            log.error("background audit failed: %s", exc)
            return None
        self.metrics.record(report, time.time())
        log.info(
            "background audit: %d objects, %d violations",
            len(report.results),
            report.summary()["violations"],
        )
        return report

    async def run(self) -> None:
        """Audit now and then every `interval` seconds, until cancelled; with `leading`, only
        while this replica leads (a new leader audits within LEADER_POLL seconds)."""
        while True:
            if self.leading is not None and not self.leading():
                await asyncio.sleep(min(self.interval, LEADER_POLL))
                continue
            memory = self.memory(asyncio.get_running_loop()) if self.memory else None
            await asyncio.to_thread(self.run_once, memory)
            await asyncio.sleep(self.interval)
