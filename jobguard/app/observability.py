"""Metrics (Prometheus) and structured JSON logs."""

from __future__ import annotations

import logging
import platform
import sys
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

from jobguard import __version__

# Fine enough for a sub-millisecond p50, up to the API server's 30 s webhook timeout.
LATENCY_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.00075,
    0.001,
    0.0015,
    0.0025,
    0.005,
    0.0075,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)


class Metrics:
    """One registry per app, so several apps (tests) never collide."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        # process_cpu_seconds_total, process_resident_memory_bytes, process_open_fds, ...
        ProcessCollector(registry=self.registry)
        self.build_info = Gauge(
            "jobguard_build_info",
            "Always 1; the labels say which jobguard and Python serve.",
            ["version", "python"],
            registry=self.registry,
        )
        self.build_info.labels(__version__, platform.python_version()).set(1)
        self.requests = Counter(
            "jobguard_requests_total",
            "Admission requests by endpoint, operation, resource, subresource and verdict "
            "(allowed, denied, bad_request, error; too_large and timeout for bodies not read).",
            ["endpoint", "operation", "resource", "subresource", "verdict"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "jobguard_request_duration_seconds",
            "Time from the first byte of the body to the response, by endpoint.",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.violations = Counter(
            "jobguard_violations_total",
            "Rule violations by rule ID and enforcement mode.",
            ["rule", "enforcement"],
            registry=self.registry,
        )
        self.config_reloads = Counter(
            "jobguard_config_reloads_total",
            "Configuration reloads by result.",
            ["result"],
            registry=self.registry,
        )
        self.certificate_reloads = Counter(
            "jobguard_certificate_reloads_total",
            "Serving certificate reloads by result.",
            ["result"],
            registry=self.registry,
        )
        self.certificate_expiry = Gauge(
            "jobguard_certificate_expiry_seconds",
            "Seconds until the serving certificate expires (absent without TLS).",
            registry=self.registry,
        )
        self._not_after: float | None = None
        self._request_children: dict[tuple[str, ...], Any] = {}
        self._latency_children: dict[str, Any] = {}
        self._violation_children: dict[tuple[str, str], Any] = {}
        self.certificate_expiry.set_function(self._seconds_left)

    def count_request(
        self,
        endpoint: str,
        operation: str,
        resource: str,
        subresource: str,
        verdict: str,
        seconds: float,
    ) -> None:
        """Count one request and observe its latency (label children cached: hot path)."""
        key = (endpoint, operation, resource, subresource, verdict)
        counter = self._request_children.get(key)
        if counter is None:
            counter = self._request_children[key] = self.requests.labels(*key)
        counter.inc()
        histogram = self._latency_children.get(endpoint)
        if histogram is None:
            histogram = self._latency_children[endpoint] = self.latency.labels(endpoint)
        histogram.observe(seconds)

    def count_violations(self, rule: str, enforcement: str, count: int) -> None:
        """Count a rule's violations in one request (label children cached: hot path)."""
        key = (rule, enforcement)
        counter = self._violation_children.get(key)
        if counter is None:
            counter = self._violation_children[key] = self.violations.labels(*key)
        counter.inc(count)

    def _seconds_left(self) -> float:
        return float("nan") if self._not_after is None else self._not_after - time.time()

    def set_certificate(self, not_after: datetime | None) -> None:
        self._not_after = None if not_after is None else not_after.timestamp()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any `fields` given."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return orjson.dumps(entry, default=str).decode()


def configure_logging(level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
