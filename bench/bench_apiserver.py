"""Latency as the API server sees it: a bounded load of Job creates through the real
kube-apiserver (tests/controlplane.py), with and without jobguard registered (the Kueue set-up),
and jobguard's share read from the API server's own histograms:
`apiserver_admission_webhook_admission_duration_seconds` (per webhook) against
`apiserver_request_duration_seconds` (the whole create).

    .venv/bin/python -m bench.bench_apiserver --creates 400 --concurrency 4

Everything runs on 127.0.0.1; the load is bounded in count.
"""

from __future__ import annotations

import argparse
import math
import secrets
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.controlplane import (
    ControlPlane,
    Jobguard,
    build,
    create_namespace,
    register,
    registrations,
    unregister,
    wait_until,
)
from tests.realapi.kube import JOBS, job_manifest, queued_create_is_judged

ROOT = Path(__file__).resolve().parents[1]


def histogram(text: str, name: str, match: dict[str, str]) -> list[tuple[float, float]]:
    """Cumulative (upper bound, count) buckets of one histogram, summed over the series whose
    labels include `match`."""
    buckets: dict[float, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name != f"{name}_bucket":
                continue
            if any(sample.labels.get(k) != v for k, v in match.items()):
                continue
            bound = float(sample.labels["le"])
            buckets[bound] = buckets.get(bound, 0.0) + sample.value
    return sorted(buckets.items())


def delta(
    after: list[tuple[float, float]], before: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    earlier = dict(before)
    return [(bound, count - earlier.get(bound, 0.0)) for bound, count in after]


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """Prometheus' histogram_quantile: linear interpolation inside the bucket."""
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return math.nan
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound
            inside = count - lower_count
            share = (rank - lower_count) / inside if inside else 0.0
            return lower_bound + (bound - lower_bound) * share
        lower_bound, lower_count = bound, count
    return lower_bound


def bucket_of(buckets: list[tuple[float, float]], q: float) -> str:
    """The histogram bucket holding quantile q, in ms (the API server's buckets are coarse)."""
    total = buckets[-1][1] if buckets else 0.0
    lower = 0.0
    for bound, count in buckets:
        if count >= q * total:
            return f"({1000 * lower:g}, {1000 * bound:g}] ms"
        lower = bound
    return "n/a"


def load(plane: ControlPlane, namespace: str, creates: int, concurrency: int) -> float:
    """`creates` queued Job creates by alice (dry-run, so etcd holds nothing), wall seconds."""

    def one(i: int) -> int:
        with plane.http("alice") as alice:
            body = job_manifest(f"load-{i}", queue="q")
            return alice.post(
                JOBS.format(namespace=namespace), params={"dryRun": "All"}, json=body
            ).status_code

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        codes = list(pool.map(one, range(creates)))
    elapsed = time.perf_counter() - started
    assert all(code == 201 for code in codes), sorted(set(codes))
    return elapsed


def measure(plane: ControlPlane, namespace: str, creates: int, concurrency: int) -> dict[str, Any]:
    with plane.http() as admin:
        before = admin.get("/metrics").text
        elapsed = load(plane, namespace, creates, concurrency)
        after = admin.get("/metrics").text
    whole = delta(
        histogram(
            after, "apiserver_request_duration_seconds", {"verb": "POST", "resource": "jobs"}
        ),
        histogram(
            before, "apiserver_request_duration_seconds", {"verb": "POST", "resource": "jobs"}
        ),
    )
    result: dict[str, Any] = {"seconds": elapsed, "whole": whole, "webhooks": {}}
    names = {
        s.labels["name"]
        for f in text_string_to_metric_families(after)
        for s in f.samples
        if s.name == "apiserver_admission_webhook_admission_duration_seconds_count"
    }
    for name in sorted(names):
        spec = {"name": name, "operation": "CREATE"}
        metric = "apiserver_admission_webhook_admission_duration_seconds"
        hooks = delta(histogram(after, metric, spec), histogram(before, metric, spec))
        if hooks and hooks[-1][1] > 0:
            result["webhooks"][name] = hooks
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--creates", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    config = yaml.safe_load((ROOT / "examples" / "config" / "kueue.yaml").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        plane = ControlPlane(Path(scratch) / "plane", build())
        started = time.perf_counter()
        plane.start()
        ready = time.perf_counter() - started
        guard = Jobguard(Path(scratch) / "jobguard")
        try:
            with plane.http() as admin:
                namespace = f"team-{secrets.token_hex(2)}"
                create_namespace(admin, namespace)
                load(plane, namespace, 50, args.concurrency)  # warm-up, without jobguard
                bare = measure(plane, namespace, args.creates, args.concurrency)
                guard.start(config)
                objects = registrations(
                    config, guard.url, guard.ca.read_bytes(), release=plane.release()
                )
                register(admin, objects)
                judged = queued_create_is_judged(plane, namespace, guard.url, str(guard.ca))
                wait_until(judged, 30, "registrations")
                load(plane, namespace, 50, args.concurrency)  # warm-up, with jobguard
                guarded = measure(plane, namespace, args.creates, args.concurrency)
                unregister(admin, objects)
        finally:
            guard.stop()
            started = time.perf_counter()
            plane.stop()
            stopped = time.perf_counter() - started
    print(
        f"control plane (etcd, kube-apiserver, kube-controller-manager) ready in {ready:.1f} s, "
        f"stopped in {stopped:.1f} s"
    )
    print(
        f"Kubernetes {plane.version}; {args.creates} dry-run Job creates by a user, "
        f"{args.concurrency} at a time (queued Jobs in a team-* namespace)"
    )
    for label, run in (("without jobguard", bare), ("with jobguard", guarded)):
        whole = run["whole"]
        print(
            f"{label:18} {args.creates / run['seconds']:7.1f} creates/s   create p50 "
            f"{1000 * quantile(whole, 0.5):6.1f} ms  p99 {1000 * quantile(whole, 0.99):6.1f} ms"
        )
    for name, hooks in guarded["webhooks"].items():
        print(
            f"  webhook {name:34} calls {hooks[-1][1]:5.0f}   p50 "
            f"{1000 * quantile(hooks, 0.5):6.1f} ms {bucket_of(hooks, 0.5)}  p99 "
            f"{1000 * quantile(hooks, 0.99):6.1f} ms {bucket_of(hooks, 0.99)}"
        )


if __name__ == "__main__":
    main()
