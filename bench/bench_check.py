"""`jobguard check` throughput on generated Job and CronJob documents.

Scenarios (seeded, so runs compare):
- `realistic` (default): manifests as people write them (`bench.payloads.realistic_document`):
  quoted numbers and strings, comments, flow lists; 60% Indexed Jobs with a successPolicy,
  20% plain Jobs, 20% CronJobs; about a fifth invalid.
- `generated`: the earlier scenario (`random_manifest`, `random_cronjob`), dumped by PyYAML.

The commands timed, in alternating rounds so that drift in the machine's speed hits each alike:
`jobguard check --output json DIR` in one process, the same with every rule switched on, and
with `--jobs 2`. Each figure is the median of the rounds, with the spread, and the median CPU
time of the command's processes (user and system; the sum of the processes with `--jobs 2`).
Then the start-up (a run on one small file, best of five) and the check's own CPU time per
document in a process of its own (no start-up; one pass, as a run makes it; best of three
processes), for a quarter, half and all of the files, to show the cost is linear. `--baseline` adds kubernetes-validate (schema only; slow). `--against
DIR` runs every command and measurement on the `jobguard` package under DIR as well (another
tree, e.g. a `git archive` of an earlier commit), interleaved with this one's, so both see the
same machine.

jobguard's modules are compiled to bytecode first, as an install compiles them: an editable
checkout run with PYTHONDONTWRITEBYTECODE set would otherwise compile every module again on
every run (about 0.13 s of each command).

Run: `.venv/bin/python -m bench.bench_check [--documents N] [--rounds R] [--scenario S]
[--against DIR] [--in-process-only]`.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import resource
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
UNREADABLE_JOB = """---
apiVersion: batch/v1
kind: Job
metadata: {name: warm-up}
spec:
  completions: "3"
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"""
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


def timed(command: list[str], tree: Path | None = None) -> float:
    return timed_with_cpu(command, tree)[0]


def timed_with_cpu(command: list[str], tree: Path | None = None) -> tuple[float, float]:
    """Wall-clock seconds, and CPU seconds (user and system) of the command's processes (the
    processes it waited for, `--jobs` workers included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env=tree_env(tree),
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


# Run in a process of its own (argv: a file to warm up on, then the files), so that a tree
# under --against is measured alike; prints the CPU time per document in seconds of one check
# of the files, as `jobguard check` makes it: the first, after a warm-up on a document not
# among them (checked again in the same process, a tree that keeps results per Job spec would
# find them kept, which a run never does).
IN_PROCESS = """
import sys, time
try:
    from jobguard.app.cli.check import CheckOptions, check
except ImportError:  # a tree from before the app's modules were grouped by role
    from jobguard.app.check import CheckOptions, check
from jobguard.validators import Settings

warm_up, paths = sys.argv[1], sys.argv[2:]
options = CheckOptions(Settings())
check([warm_up], options)  # schemas compiled, decode errors' models made
start = time.process_time()
report = check(paths, options)
print((time.process_time() - start) / sum(o.documents for o in report.outcomes))
"""


THIS_TREE = Path(__file__).resolve().parents[1]


def tree_env(tree: Path | None) -> dict[str, str]:
    """The environment that runs the `jobguard` package under `tree` (None: this checkout's,
    not whichever the virtualenv's editable install points to)."""
    return {**os.environ, "PYTHONPATH": str(tree or THIS_TREE)}


def compile_tree(tree: Path | None) -> None:
    """Bytecode for the tree's modules, as an install writes it (see the docstring)."""
    if tree is None:
        import jobguard

        tree = Path(jobguard.__file__).parent.parent
    compileall.compile_dir(tree / "jobguard", quiet=1)


def compiled_trees(against: list[Path] | None) -> dict[str, Path | None]:
    """This tree (None) and, with `--against DIR` (repeatable), each DIR's, by name, their
    bytecode compiled."""
    trees: dict[str, Path | None] = {"this tree": None}
    for other in against or []:
        trees[f"against {other}"] = other.resolve()
    for where in trees.values():
        compile_tree(where)
    return trees


def cpu_per_document(warm_up: Path, paths: list[str], tree: Path | None) -> float:
    """The check's CPU time per document, each time in a process of its own (best of three)."""
    # -P: `-c` would put the working directory first on sys.path, and run from a checkout the
    # check measured that checkout's package instead of the tree's.
    command = [sys.executable, "-P", "-c", IN_PROCESS, str(warm_up), *paths]
    best = float("inf")
    for _ in range(3):
        out = subprocess.run(
            command, env=tree_env(tree), capture_output=True, text=True, check=True
        )
        best = min(best, float(out.stdout))
    return best


def start_up(command: list[str], tree: Path | None) -> float:
    """Seconds for a run on one small file (best of five): interpreter, imports, output."""
    return min(timed(command, tree) for _ in range(5))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scenario", choices=["realistic", "generated"], default="realistic")
    parser.add_argument("--baseline", action="store_true", help="also time kubernetes-validate")
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        help="a directory holding another tree's jobguard package (repeatable)",
    )
    parser.add_argument(
        "--in-process-only",
        action="store_true",
        help="only the in-process figures (a tree from before `jobguard.app.cli` has no"
        " console script this checkout can run)",
    )
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    jobguard = str(bindir / "jobguard")
    trees = compiled_trees(args.against)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "manifests"
        directory.mkdir()
        files = generate(directory, args.documents, args.scenario)
        config = Path(tmp) / "all-rules.yaml"
        config.write_text(ALL_RULES)
        small = Path(tmp) / "small.yaml"
        small.write_text(realistic_document(random.Random(1), 0))
        # The warm-up of the in-process figure: a valid document and one that cannot be read
        # (the models that word decode errors are made at the first such document, once a
        # process, as importing them was before).
        warm_up = Path(tmp) / "warm-up.yaml"
        warm_up.write_text(small.read_text() + UNREADABLE_JOB)
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
        seconds: dict[tuple[str, str], list[float]] = {
            (label, tree): [] for label in commands for tree in trees
        }
        cpu_seconds: dict[tuple[str, str], list[float]] = {key: [] for key in seconds}
        for _ in range(0 if args.in_process_only else args.rounds):
            for label, command in commands.items():
                for tree, where in trees.items():
                    wall, cpu = timed_with_cpu(command, where)
                    seconds[label, tree].append(wall)
                    cpu_seconds[label, tree].append(cpu)
        print(f"load average after:  {os.getloadavg()[0]:.2f}")
        for tree, where in () if args.in_process_only else trees.items():
            print(f"{tree}:")
            print(
                f"  {'':32} {'median s':>9} {'docs/s':>8}   {'spread (min-max s)':20}"
                f" {'CPU s':>6} {'docs/CPU s':>10}"
            )
            for label in commands:
                runs = seconds[label, tree]
                median = statistics.median(runs)
                cpu = statistics.median(cpu_seconds[label, tree])
                spread = f"{min(runs):.2f}-{max(runs):.2f} ({len(runs)} runs)"
                print(
                    f"  {label:32} {median:9.2f} {n / median:8.0f}   {spread:20}"
                    f" {cpu:6.2f} {n / cpu:10.0f}"
                )
            small_run = [jobguard, "check", "--output", "json", str(small)]
            print(f"  {'start-up (one document)':32} {start_up(small_run, where):9.2f}")
        baseline = shutil.which("kubernetes-validate", path=str(bindir))
        if args.baseline and baseline:
            reference = timed([baseline, "--quiet", "--no-warn", *map(str, files)])
            print(f"{'kubernetes-validate (schema only)':32} {reference:9.2f} {n / reference:8.0f}")
        print("in-process CPU time per document (no start-up, one pass), best of three:")
        for fraction in (0.25, 0.5, 1.0):
            subset = [str(f) for f in files[: max(1, int(len(files) * fraction))]]
            for tree, where in trees.items():
                per_document = cpu_per_document(warm_up, subset, where)
                print(
                    f"  {len(subset) * DOCS_PER_FILE:6d} documents: {per_document * 1e6:6.1f}"
                    f" us/doc ({1 / per_document:,.0f} docs/s)  {tree}"
                )


if __name__ == "__main__":
    main()
