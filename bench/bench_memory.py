"""In-process memory and time of the pathological bodies, where bench_hostile measures the server.

For each body (bench_hostile's 250,000-UID status update and its 980,000-index list), the
`tracemalloc` peak and the time of one `handle_validate` (timed in a second run without
tracemalloc, which slows allocation); then the two JSON decoders on the UID body (peak and best
time of five) and the exact index parser on a 425,000-fragment list whose last fragment breaks
the order (the fast path refuses it, so the exact one finds the error). Each tree runs in a
process of its own; `--against DIR` runs another tree's `jobguard` package (unpacked with
`git archive REF jobguard | tar -x -C DIR`) beside this one.

`--paths`: instead, each decoder path's cost per body byte (the `tracemalloc` peak of one call
of the server's handler, divided by the body's size) on the worst shapes known to take it:
orjson (bodies up to 1 MiB), the standard library's decoder (over 1 MiB), the exact decoder
(values orjson refuses: zeros ending in `1e400` or `NaN`, a Job of small
containers ending in `NaN`), and /mutate's envelope; against DECODED_COST, what the server's
memory budget charges a body byte.

Run: `.venv/bin/python -m bench.bench_memory [--against DIR] [--paths]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = """
import gc, json, sys, time, tracemalloc
import orjson
from jobguard.app.admission.review import handle_validate
from jobguard.app.config import FileConfig
from jobguard.validators import intervals
from bench.bench_hostile import long_index_list, status_update  # after: it puts ROOT first

settings = FileConfig().to_settings()
handle_validate(orjson.dumps({"apiVersion": "admission.k8s.io/v1"}), settings)  # warm imports


def peak(call):
    gc.collect()
    tracemalloc.start()
    call()
    result = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result


def best(call, times=5):
    out = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        call()
        out = min(out, time.perf_counter() - started)
    return out


figures = {}
uids = status_update()
for name, body in (("250,000 UIDs", uids), ("980,000 indexes", long_index_list())):
    figures[f"handle_validate, {name}: peak MiB"] = peak(lambda: handle_validate(body, settings))
    figures[f"handle_validate, {name}: seconds"] = best(
        lambda: handle_validate(body, settings), 1
    )
figures["orjson.loads, 250,000 UIDs: peak MiB"] = peak(lambda: orjson.loads(uids))
figures["orjson.loads, 250,000 UIDs: seconds"] = best(lambda: orjson.loads(uids))
figures["json.loads, 250,000 UIDs: peak MiB"] = peak(lambda: json.loads(uids.decode()))
figures["json.loads, 250,000 UIDs: seconds"] = best(lambda: json.loads(uids.decode()))
broken = ",".join(str(i) for i in range(0, 850_000, 2)) + ",1"
try:
    parse = intervals._exact_intervals
    exact = lambda: parse(broken, 10**7, "i")
except AttributeError:  # a tree before the exact parser took plain numbers directly
    exact = lambda: intervals.parse_intervals(broken, 10**7)


def exact_error():
    try:
        exact()
    except intervals.IndexParseError:
        return
    raise AssertionError("the broken list parsed")


figures["exact index parser, 425,000 fragments: seconds"] = best(exact_error, 3)
print(json.dumps(figures))
"""


PATHS = """
import gc, json, sys, tracemalloc
import orjson
from jobguard.app.admission.review import handle_mutate, handle_validate
from jobguard.validators import Settings
from bench.bench_hostile import costly_job, costly_job_ending_in, options_numbers

settings = Settings()
handle_validate(orjson.dumps({"apiVersion": "admission.k8s.io/v1"}), settings)  # warm imports
MIB = 1024 * 1024


shapes = [
    ("orjson: Job of small containers, 1 MiB", "/validate", costly_job(MIB - 4096)),
    ("orjson refused, exact: zeros ending in 1e400, 1 MiB", "/validate", options_numbers(b"1e400", MIB - 4096)),
    ("stdlib: Job of small containers, 6.9 MiB", "/validate", costly_job()),
    ("exact: zeros ending in 1e400, 7 MiB", "/validate", options_numbers(b"1e400")),
    ("exact: zeros ending in NaN, 7 MiB", "/validate", options_numbers(b"NaN")),
    ("exact: Job of small containers ending in NaN, 6.9 MiB", "/validate", costly_job_ending_in(b"NaN")),
    ("mutate envelope: Job of small containers, 6.9 MiB", "/mutate", costly_job()),
    ("mutate whole: zeros ending in NaN, 7 MiB", "/mutate", options_numbers(b"NaN")),
    ("mutate whole: small containers ending in NaN, 6.9 MiB", "/mutate", costly_job_ending_in(b"NaN")),
]
figures = {}
for name, endpoint, body in shapes:
    handler = handle_validate if endpoint == "/validate" else handle_mutate
    gc.collect()
    tracemalloc.start()
    handler(body, settings)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    figures[f"{name}: bytes per body byte"] = peak / len(body)
print(json.dumps(figures))
"""


def measure(tree: Path | None, script: str = MEASURE) -> dict[str, float]:
    path = [str(ROOT)] if tree is None else [str(tree), str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tree or ROOT, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", type=Path, help="a directory holding another tree's package")
    parser.add_argument("--paths", action="store_true", help="each decoder path's cost")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"this tree": None}
    if args.against is not None:
        trees[f"against {args.against}"] = args.against.resolve()
    script = PATHS if args.paths else MEASURE
    results = {name: measure(tree, script) for name, tree in trees.items()}
    print(f"{'':56}" + "".join(f"{name:>24}" for name in results))
    for key in results["this tree"]:
        print(f"{key:56}" + "".join(f"{figures[key]:24.3f}" for figures in results.values()))


if __name__ == "__main__":
    main()
