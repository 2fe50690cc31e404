"""`jobguard check` throughput on 10,000 generated Job and CronJob documents, beside a
schema-only baseline (kubernetes-validate) measured in the same run on the same files.

Run: `make bench-check` (or `.venv/bin/python bench/bench_check.py [--documents N]`).
The documents are generated deterministically (seeded), so runs are comparable.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

DOCS_PER_FILE = 100


def _pod(rng: random.Random, restart: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": f"registry.example/app:{rng.randint(1, 9)}",
                "command": ["sh", "-c", "echo $JOB_COMPLETION_INDEX && sleep 5"],
                "env": [{"name": "MODE", "value": "batch"}],
                "resources": {
                    "requests": {"cpu": "500m", "memory": "256Mi"},
                    "limits": {"memory": "512Mi"},
                },
            }
        ],
    }
    if restart:
        spec["restartPolicy"] = rng.choice(["Never", "OnFailure"])
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"pool": "batch"}
        spec["tolerations"] = [{"key": "batch", "operator": "Exists", "effect": "NoSchedule"}]
    return {"metadata": {"labels": {"app": "bench"}}, "spec": spec}


def _indexes(rng: random.Random, completions: int, long: bool) -> str:
    if not long:
        return f"0-{completions // 2}"
    # A long, valid interval list: every other index (thousands of fragments).
    return ",".join(str(i) for i in range(0, completions, 2))


def job(rng: random.Random, i: int) -> dict[str, Any]:
    kind = rng.random()
    spec: dict[str, Any] = {"template": _pod(rng)}
    if kind < 0.4:
        completions = rng.choice([4, 16, 64])
        spec.update(completionMode="Indexed", completions=completions, parallelism=completions)
        spec["successPolicy"] = {
            "rules": [{"succeededIndexes": _indexes(rng, completions, False), "succeededCount": 1}]
        }
    elif kind < 0.42:
        completions = 4000
        spec.update(completionMode="Indexed", completions=completions, parallelism=100)
        spec["successPolicy"] = {"rules": [{"succeededIndexes": _indexes(rng, completions, True)}]}
    elif kind < 0.6:
        spec.update(suspend=True, parallelism=3, completions=3)
    else:
        spec.update(backoffLimit=3, activeDeadlineSeconds=600)
    doc: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"job-{i}",
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/queue-name": "q"},
        },
        "spec": spec,
    }
    if rng.random() < 0.15:  # invalid: a broken success policy or no restartPolicy
        if "successPolicy" in spec:
            spec["successPolicy"]["rules"][0]["succeededIndexes"] = "3,1"
        else:
            spec["template"] = _pod(rng, restart=False)
    return doc


def cronjob(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": f"cron-{i}", "namespace": "team-a"},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"backoffLimit": 2, "template": _pod(rng)}},
        },
    }


def generate(directory: Path, documents: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for start in range(0, documents, DOCS_PER_FILE):
        docs = [
            cronjob(rng, i) if rng.random() < 0.2 else job(rng, i)
            for i in range(start, min(start + DOCS_PER_FILE, documents))
        ]
        path = directory / f"batch-{start // DOCS_PER_FILE:04d}.yaml"
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        files.append(path)
    return files


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def in_process(paths: list[str]) -> float:
    from jobguard.app.check import CheckOptions, check
    from jobguard.validators import Settings

    start = time.perf_counter()
    check(paths, CheckOptions(Settings()))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    jobguard = str(bindir / "jobguard")
    baseline = shutil.which("kubernetes-validate", path=str(bindir))
    with tempfile.TemporaryDirectory() as tmp:
        files = generate(Path(tmp), args.documents)
        size = sum(f.stat().st_size for f in files)
        n = args.documents
        print(f"{n} documents in {len(files)} files, {size / 1e6:.1f} MB")
        rows = []
        for label, command in (
            ("jobguard check (1 process)", [jobguard, "check", "--output", "json", tmp]),
            (
                "jobguard check --jobs 2",
                [jobguard, "check", "--output", "json", "--jobs", "2", tmp],
            ),
        ):
            seconds = timed(command)
            rows.append((label, seconds))
        if baseline:
            rows.append(
                (
                    "kubernetes-validate (schema only)",
                    timed([baseline, "--quiet", "--no-warn", *map(str, files)]),
                )
            )
        else:
            print("kubernetes-validate not installed: `pip install kubernetes-validate`")
        reference = rows[-1][1]
        print(f"{'':36} {'seconds':>8} {'docs/s':>8} {'vs baseline':>12}")
        for label, seconds in rows:
            print(f"{label:36} {seconds:8.2f} {n / seconds:8.0f} {reference / seconds:11.1f}x")
        print("linearity (in-process, one core): microseconds per document")
        for fraction in (0.25, 0.5, 1.0):
            subset = [str(f) for f in files[: max(1, int(len(files) * fraction))]]
            docs = len(subset) * DOCS_PER_FILE
            print(f"  {docs:6d} documents: {in_process(subset) / docs * 1e6:7.1f} us/doc")


if __name__ == "__main__":
    main()
