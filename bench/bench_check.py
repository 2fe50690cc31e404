"""`jobguard check` throughput on 10,000 generated Job and CronJob documents, beside a
schema-only baseline (kubernetes-validate) measured in the same run on the same files.

Run: `make bench` (or `.venv/bin/python -m bench.bench_check [--documents N]`).
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

import yaml

from bench.payloads import random_cronjob, random_manifest

DOCS_PER_FILE = 100


def generate(directory: Path, documents: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for start in range(0, documents, DOCS_PER_FILE):
        docs = [
            random_cronjob(rng, i) if rng.random() < 0.2 else random_manifest(rng, i)
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
