"""Instructions `jobguard check` spends a document, counted by valgrind (callgrind), not timed:
the same figure on a busy machine as on an idle one, where bench_check's times move by a fifth
between rounds of the same tree.

The realistic documents of bench_check (seeded), checked in one process as
`bench_check`'s in-process figure checks them: after a warm-up, one pass. Each tree runs twice
under callgrind, with the warm-up alone and with the documents too; the difference divided by
the number of documents is the figure (start-up and imports cancel out). Python's string
hashes are seeded (`--seeds`, PYTHONHASHSEED): with random ones the count moves by about 0.5%
between runs of the same tree. `--against DIR` (repeatable) counts the `jobguard` package under DIR as well
(e.g. a `git archive` of an earlier commit). Needs valgrind (`apt-get install -y valgrind`).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
from pathlib import Path

from bench.bench_check import UNREADABLE_JOB, compiled_trees, generate, tree_env
from bench.bench_instructions import callgrind_instructions
from bench.payloads import realistic_document

CHILD = """
import sys
try:
    from jobguard.app.cli.check import CheckOptions, check
except ImportError:  # a tree from before the app's modules were grouped by role
    from jobguard.app.check import CheckOptions, check
from jobguard.validators import Settings

warm_up, paths = sys.argv[1], sys.argv[2:]
options = CheckOptions(Settings())
check([warm_up], options)
if paths:
    check(paths, options)
"""


def instructions(tree: Path | None, seed: int, warm_up: Path, paths: list[str]) -> int:
    """Instructions of one process checking `paths` after the warm-up, under `tree`."""
    env = {**tree_env(tree), "PYTHONHASHSEED": str(seed)}
    return callgrind_instructions(["-P", "-c", CHILD, str(warm_up), *paths], env)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        help="a directory holding another tree's jobguard package (repeatable)",
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install -y valgrind)")
    trees = compiled_trees(args.against)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "manifests"
        directory.mkdir()
        paths = [str(f) for f in generate(directory, args.documents, "realistic")]
        warm_up = Path(tmp) / "warm-up.yaml"
        warm_up.write_text(realistic_document(random.Random(1), 0) + UNREADABLE_JOB)
        print(f"realistic: {args.documents} documents; load average {os.getloadavg()[0]:.2f}")
        for seed in args.seeds:
            for name, tree in trees.items():
                alone = instructions(tree, seed, warm_up, [])
                full = instructions(tree, seed, warm_up, paths)
                per_document = (full - alone) / args.documents
                print(f"  PYTHONHASHSEED={seed}: {per_document:,.0f} instructions/doc  {name}")


if __name__ == "__main__":
    main()
