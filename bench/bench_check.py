"""`jobguard check` throughput on generated Job and CronJob documents.

Scenarios (seeded, so runs compare):
- `realistic` (default): manifests as people write them (`bench.payloads.realistic_document`):
  quoted numbers and strings, comments, flow lists; 60% Indexed Jobs with a successPolicy,
  20% plain Jobs, 20% CronJobs; about a fifth invalid.
- `generated`: the earlier scenario (`random_manifest`, `random_cronjob`), dumped by PyYAML.

The commands timed, in alternating rounds so that drift in the machine's speed hits each alike:
`jobguard check --output json DIR` in one process, the same with every rule switched on, and
with `--jobs 2`. Each figure is the median of the rounds, with the spread. Then the check's own
CPU time per document in this process (no start-up), for a quarter, half and all of the files,
to show the cost is linear. `--baseline` adds kubernetes-validate (schema only; slow).

Run: `.venv/bin/python -m bench.bench_check [--documents N] [--rounds R] [--scenario S]`.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench.payloads import random_cronjob, random_manifest, realistic_document

DOCS_PER_FILE = 100
ALL_RULES = "rules:\n  '*': {enabled: true}\n"


def generate(
    directory: Path, documents: int, scenario: str = "realistic", seed: int = 7
) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for start in range(0, documents, DOCS_PER_FILE):
        numbers = range(start, min(start + DOCS_PER_FILE, documents))
        if scenario == "realistic":
            text = "---\n".join(realistic_document(rng, i) for i in numbers)
        else:
            docs = [
                random_cronjob(rng, i) if rng.random() < 0.2 else random_manifest(rng, i)
                for i in numbers
            ]
            text = yaml.safe_dump_all(docs, sort_keys=False)
        path = directory / f"batch-{start // DOCS_PER_FILE:04d}.yaml"
        path.write_text(text)
        files.append(path)
    return files


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def cpu_per_document(paths: list[str]) -> float:
    """The check's CPU time per document in this process (best of three)."""
    from jobguard.app.check import CheckOptions, check
    from jobguard.validators import Settings

    options = CheckOptions(Settings())
    check(paths[:1], options)  # schemas compiled, caches warm
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        report = check(paths, options)
        best = min(best, time.process_time() - start)
    return best / sum(o.documents for o in report.outcomes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scenario", choices=["realistic", "generated"], default="realistic")
    parser.add_argument("--baseline", action="store_true", help="also time kubernetes-validate")
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    jobguard = str(bindir / "jobguard")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "manifests"
        directory.mkdir()
        files = generate(directory, args.documents, args.scenario)
        config = Path(tmp) / "all-rules.yaml"
        config.write_text(ALL_RULES)
        size = sum(f.stat().st_size for f in files)
        n = args.documents
        print(f"{args.scenario}: {n} documents in {len(files)} files, {size / 1e6:.1f} MB")
        print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
        commands = {
            "jobguard check (1 process)": [jobguard, "check", "--output", "json", str(directory)],
            "jobguard check, every rule on": [
                *(jobguard, "check", "--output", "json", "--config", str(config)),
                str(directory),
            ],
            "jobguard check --jobs 2": [
                *(jobguard, "check", "--output", "json", "--jobs", "2", str(directory)),
            ],
        }
        seconds: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.rounds):
            for label, command in commands.items():
                seconds[label].append(timed(command))
        print(f"load average after:  {os.getloadavg()[0]:.2f}")
        print(f"{'':32} {'median s':>9} {'docs/s':>8}   spread (min-max s)")
        for label, runs in seconds.items():
            median = statistics.median(runs)
            print(
                f"{label:32} {median:9.2f} {n / median:8.0f}   {min(runs):.2f}-{max(runs):.2f}"
                f" ({len(runs)} runs)"
            )
        baseline = shutil.which("kubernetes-validate", path=str(bindir))
        if args.baseline and baseline:
            reference = timed([baseline, "--quiet", "--no-warn", *map(str, files)])
            print(f"{'kubernetes-validate (schema only)':32} {reference:9.2f} {n / reference:8.0f}")
        print("in-process CPU time per document (no start-up), best of three:")
        for fraction in (0.25, 0.5, 1.0):
            subset = [str(f) for f in files[: max(1, int(len(files) * fraction))]]
            per_document = cpu_per_document(subset)
            print(
                f"  {len(subset) * DOCS_PER_FILE:6d} documents: {per_document * 1e6:6.1f} us/doc "
                f"({1 / per_document:,.0f} docs/s)"
            )


if __name__ == "__main__":
    main()
