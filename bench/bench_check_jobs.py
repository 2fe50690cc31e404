"""`jobguard check --jobs N`: documents per second at 1, 2 and 4 worker processes and `auto`,
on the 10,000-document bench of bench_check.py (scenario `realistic`), laid out as a repository
of one document per file (10,000 files) or as bench_check's 100 files of 100 documents.

The commands run in alternating rounds (drift in the machine's speed hits each alike); each
figure is the median of the rounds, with the median CPU time of the command's processes (the
workers' included). The ratios are against `--jobs 1` measured in the same rounds.

`--against DIR` times the `jobguard` package under DIR as well (another tree, e.g. a `git
archive` of an earlier commit), interleaved with this one's (its `auto` left out when it has
none).

Run: `.venv/bin/python -m bench.bench_check_jobs [--documents N] [--docs-per-file D]
[--rounds R] [--jobs 1,2,4,auto] [--against DIR]`.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

from bench.bench_check import compile_tree, timed_with_cpu
from bench.payloads import realistic_document


def generate(directory: Path, documents: int, per_file: int, seed: int = 7) -> int:
    """bench_check's realistic documents, `per_file` to a file, spread over subdirectories
    as a repository has them; the number of files."""
    rng = random.Random(seed)
    files = 0
    for start in range(0, documents, per_file):
        numbers = range(start, min(start + per_file, documents))
        text = "---\n".join(realistic_document(rng, i) for i in numbers)
        sub = directory / f"team-{files % 40:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"job-{files:05d}.yaml").write_text(text)
        files += 1
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--docs-per-file", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", default="1,2,4,auto")
    parser.add_argument("--against", type=Path, help="another tree's jobguard package")
    args = parser.parse_args()
    jobguard = str(Path(sys.executable).parent / "jobguard")
    trees: dict[str, Path | None] = {"this tree": None}
    if args.against is not None:
        trees[f"against {args.against}"] = args.against.resolve()
    for where in trees.values():
        compile_tree(where)
    runs = [
        (w, tree)
        for w in args.jobs.split(",")
        for tree in trees
        if w != "auto" or trees[tree] is None
    ]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "repo"
        directory.mkdir()
        files = generate(directory, args.documents, args.docs_per_file)
        n = args.documents
        cpus = len(os.sched_getaffinity(0))
        print(f"{n} documents in {files} files; {cpus} CPUs usable")
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        walls: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
        cpu: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
        for _ in range(args.rounds):
            for w, tree in runs:
                command = [jobguard, "check", "--output", "json", "--jobs", w, str(directory)]
                wall, used = timed_with_cpu(command, trees[tree])
                walls[w, tree].append(wall)
                cpu[w, tree].append(used)
        print(f"load average after:  {os.getloadavg()[0]:.2f}")
        for tree in trees:
            one = statistics.median(walls[runs[0][0], tree])
            print(f"{tree}:")
            print(
                f"  {'--jobs':8} {'median s':>9} {'docs/s':>8} {'vs first':>9} {'CPU s':>7}"
                f" {'docs/CPU s':>10}  runs"
            )
            for w, label in runs:
                if label != tree:
                    continue
                median = statistics.median(walls[w, tree])
                used = statistics.median(cpu[w, tree])
                shown = " ".join(f"{s:.2f}" for s in walls[w, tree])
                print(
                    f"  {w:8} {median:9.2f} {n / median:8.0f} {one / median:8.2f}x"
                    f" {used:7.2f} {n / used:10.0f}  {shown}"
                )


if __name__ == "__main__":
    main()
