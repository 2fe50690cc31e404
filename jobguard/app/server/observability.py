"""Metrics (Prometheus) and structured JSON logs."""

from __future__ import annotations

import functools
import logging
import math
import platform
import sys
import threading
import time
from bisect import bisect_left
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

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
_LE = (*map(floatToGoString, LATENCY_BUCKETS), "+Inf")
# No `_created` series anywhere (counters and histograms): they double the series count, and no
# dashboard or alert reads them. prometheus_client's switch is process-wide; the server is the
# only process that exports metrics.
disable_created_metrics()  # type: ignore[no-untyped-call]
REQUEST_LABELS = ("endpoint", "operation", "resource", "subresource", "verdict")
LATENCY_LABELS = ("endpoint", "verdict", "code")
VIOLATION_LABELS = ("rule", "enforcement", "policy", "operation")
VERDICT_CODES = {
    "allowed": "200",
    "denied": "200",
    "error": "200",  # an AdmissionReview that says why (status 500 inside it)
    "bad_request": "400",
    "timeout": "408",
    "too_large": "413",
    "busy": "503",
}
"""The HTTP status each verdict is answered with (the latency histogram's `code` label, as
controller-runtime's webhook histogram has it)."""


class _Latency:
    __slots__ = ("buckets", "sum")

    def __init__(self) -> None:
        self.buckets = [0] * len(_LE)  # per bucket, not cumulative; the last is +Inf
        self.sum = 0.0


class RequestMetrics(Collector):
    """The metrics of every request, `jobguard_requests_total`,
    `jobguard_request_duration_seconds` and `jobguard_violations_total`, counted in plain
    Python and exposed as prometheus_client's Counter, Histogram and Counter would expose them
    (the same samples in the same order; a test compares the two).

    A Counter child and a Histogram child take three locks and run their checks in Python:
    about 3 us a request among the judgement's code, against 1 us for one lock here."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str, str, str, str], int] = {}
        self._latency: dict[tuple[str, str], _Latency] = {}
        """Per (endpoint, verdict)."""
        self._violations: dict[tuple[str, str, str, str], int] = {}
        """Per (rule, enforcement, policy, operation)."""
        registry.register(self)

    def count(
        self,
        endpoint: str,
        operation: str,
        resource: str,
        subresource: str,
        verdict: str,
        seconds: float,
    ) -> None:
        key = (endpoint, operation, resource, subresource, verdict)
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            latency = self._latency.get((endpoint, verdict))
            if latency is None:
                latency = self._latency[endpoint, verdict] = _Latency()
            # The first bucket whose bound is at least `seconds` (le: less or equal).
            latency.buckets[bisect_left(LATENCY_BUCKETS, seconds)] += 1
            latency.sum += seconds

    def count_violations(
        self, rule: str, enforcement: str, policy: str, operation: str, count: int
    ) -> None:
        key = (rule, enforcement, policy, operation)
        with self._lock:
            self._violations[key] = self._violations.get(key, 0) + count

    def describe(self) -> list[Metric]:
        return [self._requests_family(), self._latency_family(), self._violations_family()]

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            counts = list(self._counts.items())
            latencies = [
                (key, list(latency.buckets), latency.sum) for key, latency in self._latency.items()
            ]
            counted_violations = list(self._violations.items())
        requests = self._requests_family()
        for key, value in counts:
            requests.add_metric(key, value)
        yield requests
        family = self._latency_family()
        for (endpoint, verdict), buckets, total in latencies:
            cumulative = 0.0
            exposed: list[tuple[str, float]] = []
            for le, count in zip(_LE, buckets, strict=True):
                cumulative += count
                exposed.append((le, cumulative))
            family.add_metric([endpoint, verdict, VERDICT_CODES.get(verdict, "")], exposed, total)
        yield family
        violations = self._violations_family()
        for labels, value in counted_violations:
            violations.add_metric(labels, value)
        yield violations

    @staticmethod
    def _requests_family() -> CounterMetricFamily:
        return CounterMetricFamily(
            "jobguard_requests_total",
            "Admission requests by endpoint, operation, resource, subresource and verdict "
            "(allowed, denied, bad_request, error; too_large and timeout for bodies not read; "
            "busy over the memory budget).",
            labels=REQUEST_LABELS,
        )

    @staticmethod
    def _violations_family() -> CounterMetricFamily:
        return CounterMetricFamily(
            "jobguard_violations_total",
            "Rule violations by rule ID, enforcement mode, suspend policy (empty for rules of "
            "no policy) and operation.",
            labels=VIOLATION_LABELS,
        )

    @staticmethod
    def _latency_family() -> HistogramMetricFamily:
        return HistogramMetricFamily(
            "jobguard_request_duration_seconds",
            "Time from the first byte of the body to the response, by endpoint, verdict and "
            "HTTP status code.",
            labels=LATENCY_LABELS,
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
        self.request_metrics = RequestMetrics(self.registry)
        # Counting on the hot path goes straight to RequestMetrics (no forwarding call).
        self.count_request = self.request_metrics.count
        self.count_violations = self.request_metrics.count_violations
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
        # Both results from the start: an alert on increase() needs the series before the event.
        for result in ("success", "failure"):
            self.config_reloads.labels(result)
            self.certificate_reloads.labels(result)
        self.certificate_expiry_timestamp = Gauge(
            "jobguard_certificate_expiry_timestamp_seconds",
            "Unix time at which the serving certificate expires, its NotAfter (absent without "
            "TLS).",
            registry=self.registry,
        )
        self.certificate_expiry = Gauge(
            "jobguard_certificate_expiry_seconds",
            "Deprecated: use jobguard_certificate_expiry_timestamp_seconds - time(). Seconds "
            "until the serving certificate expires (absent without TLS).",
            registry=self.registry,
        )
        self._not_after: float | None = None
        self.certificate_expiry.set_function(self._seconds_left)
        self.certificate_expiry_timestamp.set_function(self._expiry)
        self.requests_in_flight = Gauge(
            "jobguard_requests_in_flight",
            "Admission requests being read, judged or answered now, by endpoint.",
            ["endpoint"],
            registry=self.registry,
        )
        # Plain ints the request path counts up and down (it runs on the event loop only),
        # read at scrape time: a Gauge's inc() and dec() take a lock on every request.
        self.in_flight: dict[str, int] = {"/validate": 0, "/mutate": 0}
        for endpoint in self.in_flight:
            self.requests_in_flight.labels(endpoint.strip("/")).set_function(
                functools.partial(self.in_flight.__getitem__, endpoint)
            )

    def _seconds_left(self) -> float:
        return float("nan") if self._not_after is None else self._not_after - time.time()

    def _expiry(self) -> float:
        return float("nan") if self._not_after is None else self._not_after

    def set_certificate(self, not_after: datetime | None) -> None:
        self._not_after = None if not_after is None else not_after.timestamp()


_second: tuple[int, str] = (0, "1970-01-01T00:00:00")
"""The second last formatted and its text, replaced whole (threads may log at once)."""


def utc_milliseconds(created: float) -> str:
    """`datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")`, in a fifth of
    its time (every request's log line has one): rounded to microseconds as datetime rounds
    (half to even), the date and time formatted once a second."""
    global _second
    fraction, whole = math.modf(created)
    micro = round(fraction * 1e6)
    if micro >= 1_000_000:
        whole, micro = whole + 1, micro - 1_000_000
    elif micro < 0:  # before 1970
        whole, micro = whole - 1, micro + 1_000_000
    second = int(whole)
    known = _second
    if known[0] != second:
        text = datetime.fromtimestamp(second, UTC).isoformat(timespec="seconds")
        known = _second = (second, text.removesuffix("+00:00"))
    return f"{known[1]}.{micro // 1000:03d}+00:00"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any `fields` given."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": utc_milliseconds(record.created),
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


def log_fields(logger: logging.Logger, message: str, fields: dict[str, Any]) -> None:
    """`logger.info(message, extra={"fields": fields})` without looking up the caller's file
    and line, which no line shows (a quarter of the cost of a request's log line)."""
    if logger.isEnabledFor(logging.INFO):
        extra = {"fields": fields}
        logger.handle(
            logger.makeRecord(logger.name, logging.INFO, "", 0, message, (), None, None, extra)
        )


def configure_logging(level: str = "info") -> None:
    # Records need no thread or process names (JsonFormatter shows neither): looking them up
    # is a tenth of the cost of a request's log line.
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
