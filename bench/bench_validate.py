"""Throughput of the admission pipeline, as a ratio against JSON decoding in the same run.

Run: `make bench` (or `.venv/bin/python -m bench.bench_validate [--seconds S]`);
`--per-review` times the HTTP bench's reviews one at a time instead; `--tail N` times N of
each of them one by one, with the collector set up as `jobguard serve` sets it (what is loaded
frozen), and prints p50/p99/p99.9: whether the judgement has a tail of its own.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from typing import Any

import orjson

from bench.payloads import kueue_job, review_bytes
from jobguard.app.admission.review import handle_validate
from jobguard.validators import Settings


def _job(i: int) -> dict[str, Any]:
    pod = {
        "restartPolicy": "Never",
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [
            {
                "name": "trainer",
                "image": "registry.example/trainer:1.2",
                "args": ["--epochs", "10"],
                "env": [{"name": "X", "value": "1"}],
                "resources": {
                    "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                    "limits": {"nvidia.com/gpu": "1"},
                },
            }
        ],
    }
    obj = kueue_job(
        f"job-{i}",
        f"00000000-0000-4000-8000-{i:012d}",
        pod,
        suspend=True,
        completions=64,
        parallelism=64,
        completionMode="Indexed",
        successPolicy={"rules": [{"succeededIndexes": "0-31,40,42-63", "succeededCount": 50}]},
    )
    obj["spec"]["template"]["metadata"]["annotations"] = {"kueue.x-k8s.io/podset": "main"}
    return obj


def bodies(n: int) -> list[bytes]:
    out = []
    for i in range(n):
        job = _job(i)
        kind = i % 3
        if kind == 0:
            out.append(review_bytes(job, None, "CREATE"))
        elif kind == 1:
            new = copy.deepcopy(job)
            new["spec"]["suspend"] = False
            new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
            out.append(review_bytes(new, job))
        else:
            old = copy.deepcopy(job)
            old["status"] = {
                "active": 64,
                "startTime": "2026-01-01T00:00:00Z",
                "completedIndexes": "0-9",
            }
            new = copy.deepcopy(old)
            new["status"]["completedIndexes"] = "0-19"
            new["status"]["succeeded"] = 20
            out.append(review_bytes(new, old, sub="status"))
    return out


def rate(fn: Callable[[bytes], object], items: list[bytes], seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for body in items:
            fn(body)
        done += len(items)
    return done / (time.perf_counter() - start)


def per_review(settings: Settings) -> dict[str, float]:
    """Microseconds per review of bench_http's reviews, one at a time (best of 5 runs); the
    growing review gets a new last index every time, as over HTTP."""
    from bench.bench_http import reviews

    out = {}
    for name, body in reviews().items():
        count = 400 if len(body) < 100_000 else 40
        runs = [
            [
                body.replace(b"__N__", str(200_002 + 2 * (run * count + i)).encode())
                for i in range(count)
            ]
            for run in range(6)
        ]
        for review in runs[0]:  # warm: caches filled as over a stream
            handle_validate(review, settings)
        best = float("inf")
        for chunk in runs[1:]:
            started = time.perf_counter()
            for review in chunk:
                handle_validate(review, settings)
            best = min(best, (time.perf_counter() - started) / count * 1e6)
        out[name] = best
    return out


def tail(settings: Settings, count: int) -> dict[str, tuple[float, float, float]]:
    """p50, p99 and p99.9 in microseconds of `count` reviews of each fixed HTTP bench review."""
    import gc

    from bench.bench_http import reviews

    gc.collect()
    gc.freeze()  # as `jobguard serve` does once it is loaded
    out = {}
    for name, body in reviews().items():
        if b"__N__" in body or len(body) > 100_000:
            continue
        for _ in range(count // 10):  # warm
            handle_validate(body, settings)
        times = []
        for _ in range(count):
            started = time.perf_counter()
            handle_validate(body, settings)
            times.append((time.perf_counter() - started) * 1e6)
        times.sort()
        out[name] = (times[count // 2], times[count * 99 // 100], times[count * 999 // 1000])
    return out


FIRST_REFUSAL = """
import time
from jobguard.validators.model import ObjectDecodeError, decode_job
started = time.perf_counter()
try:
    decode_job({"spec": {"completions": "3"}})
except ObjectDecodeError:
    pass
print((time.perf_counter() - started) * 1000)
"""


def decode_costs() -> dict[str, float]:
    """Microseconds to read the HTTP bench's stored Job with msgspec's Structs and with the
    pydantic models made from them (which read a refused object again), best of 5 runs of
    5,000; and milliseconds of a new process's first refusal (pydantic imported, models made)."""
    import subprocess
    import sys
    import timeit

    from bench.bench_http import reviews
    from jobguard.validators.model import Job, _error_model, decode_job

    stored = orjson.loads(reviews()["job-update"])["request"]["oldObject"]
    validator = _error_model(Job).__pydantic_validator__
    runs = {
        "msgspec Structs (decode_job)": lambda: decode_job(stored),
        "pydantic models (the refusal path)": lambda: validator.validate_python(stored),
    }
    out = {
        name: min(timeit.repeat(run, number=5000, repeat=5)) / 5000 * 1e6
        for name, run in runs.items()
    }
    first = subprocess.run(
        [sys.executable, "-c", FIRST_REFUSAL], capture_output=True, text=True, check=True
    )
    out["first refusal in a process, ms"] = float(first.stdout)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument(
        "--per-review",
        action="store_true",
        help="microseconds per review for the HTTP bench's reviews, one at a time",
    )
    parser.add_argument(
        "--tail",
        type=int,
        metavar="N",
        help="p50/p99/p99.9 of N reviews of each normal HTTP bench review, one by one",
    )
    parser.add_argument(
        "--decode",
        action="store_true",
        help="microseconds to read a stored Job: msgspec against the pydantic refusal path",
    )
    args = parser.parse_args()
    if args.decode:
        for name, value in decode_costs().items():
            print(f"{name:40} {value:8.1f}")
        return
    if args.tail:
        for name, (p50, p99, p999) in tail(Settings(), args.tail).items():
            print(f"{name:32} p50 {p50:7.1f}  p99 {p99:7.1f}  p99.9 {p999:7.1f} us")
        return
    if args.per_review:
        for name, micros in per_review(Settings()).items():
            print(f"{name:32} {micros:10.1f} us")
        return
    items = bodies(300)
    settings = Settings()
    baseline = rate(orjson.loads, items, args.seconds)
    pipeline = rate(lambda b: handle_validate(b, settings), items, args.seconds)
    print(f"baseline orjson.loads:            {baseline:12.0f} reviews/s")
    print(f"handle_validate (full pipeline):  {pipeline:12.0f} reviews/s")
    print(f"pipeline cost / decode cost:      {baseline / pipeline:12.1f}x")


if __name__ == "__main__":
    main()
