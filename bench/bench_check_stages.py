"""Where `jobguard check`'s time goes: the CPU time per realistic document of each stage of a
run, in one process, measured on the documents of `bench_check.py` (seeded, the same 10,000).

Stages, in the order a run meets them (each timed on its own, best of `--rounds` passes, the
cyclic collector off as `check` runs with it off):
- read: the files' text (`read_text`);
- split: the text cut at document markers;
- shape scan: whether a document may nest too deep or hold aliases (the pre-scan that keeps
  deep documents from the C parsers);
- ryaml: the YAML parser itself;
- YAML 1.1 check: whether ryaml's reading may differ from kubectl's (YAML 1.1), on ryaml's
  result;
- judge: `examine` of every document (prepare, decode, every rule, records with lines), with
  the settings' caches empty at the start, as in a run;
- report: the JSON output of the whole run;
- start-up: `jobguard check --output json` of one small document, a process of its own, best
  of five, spread over the documents of a 10,000-document run;
and `check` itself (read to judge, as one pass), to show the stages add up. They do not: the
same work costs more interleaved, file by file, than stage by stage. Three more lines show
where: every file parsed then every document judged; each file parsed and judged in turn
(as `check` runs); the same with every file's documents kept to the end of the pass (not
freed, so never reused: memory `check` cannot keep, for a run's memory stays bounded).

The last lines: documents a second a run of 10,000 would make at these costs, and how much
less a document must cost for 5,000 a second in one process.

`--parsers` also times the other YAML parsers for Python that are installed (not the
project's dependencies: `pip install yaml-rs rapidyaml` into the virtualenv first) on the same
documents: yaml-rs's `loads`, and rapidyaml's parse with its JSON emitter read back by orjson.
Their readings differ from ryaml's (see bench/README.md); only their cost is measured here.

Run: `.venv/bin/python -m bench.bench_check_stages [--documents N] [--rounds R] [--parsers]`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ryaml

from bench.bench_check import UNREADABLE_JOB, generate, start_up
from bench.payloads import realistic_document
from jobguard.app.cli import manifests
from jobguard.app.cli.check import CheckOptions, check, examine
from jobguard.app.cli.check_report import json as json_report
from jobguard.validators import Settings

ryaml_loads: Callable[[str], Any] = ryaml.loads  # type: ignore[attr-defined]

GOAL = 5_000
"""Documents a second in one process (issue 30, item 7)."""


def best_seconds(work: Callable[[], object], rounds: int) -> float:
    """The least CPU time of `rounds` calls of `work`, the cyclic collector off."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def interleaving(texts: list[str], paths: list[str], rounds: int) -> dict[str, float]:
    """Seconds for parsing and judging every document in three orders (see the docstring)."""
    pairs = list(zip(texts, paths, strict=True))

    def stage_by_stage() -> None:
        options = CheckOptions(Settings())
        files = [manifests.parse_all(text, path).manifests for text, path in pairs]
        for documents in files:
            for document in documents:
                examine(document, options)

    def file_by_file(kept: list[object] | None = None) -> None:
        options = CheckOptions(Settings())
        for text, path in pairs:
            documents = manifests.parse_all(text, path).manifests
            if kept is not None:
                kept.append(documents)
            for document in documents:
                examine(document, options)

    return {
        "parse every file, then judge every document": best_seconds(stage_by_stage, rounds),
        "each file parsed, then judged (as check)": best_seconds(file_by_file, rounds),
        "the same, every document kept to the end": best_seconds(lambda: file_by_file([]), rounds),
    }


def other_parsers(chunks: list[str], rounds: int) -> dict[str, float | None]:
    """Seconds for each other parser over every document (None: not installed)."""
    import orjson

    found: dict[str, float | None] = {}
    try:
        yaml_rs: Any = importlib.import_module("yaml_rs")
        found["yaml-rs loads"] = best_seconds(
            lambda: [yaml_rs.loads(c, parse_datetime=False) for c in chunks], rounds
        )
    except ImportError:
        found["yaml-rs loads"] = None
    try:
        ryml: Any = importlib.import_module("ryml")

        def via_json(chunk: str) -> Any:
            tree = ryml.parse_in_arena(chunk.encode())
            return orjson.loads(ryml.emit_json_malloc(tree, tree.root_id()))

        found["rapidyaml parse"] = best_seconds(
            lambda: [ryml.parse_in_arena(c.encode()) for c in chunks], rounds
        )
        found["rapidyaml + JSON + orjson"] = best_seconds(
            lambda: [via_json(c) for c in chunks], rounds
        )
    except ImportError:
        found["rapidyaml parse"] = found["rapidyaml + JSON + orjson"] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parsers", action="store_true", help="time other YAML parsers too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "manifests"
        directory.mkdir()
        paths = [str(p) for p in generate(directory, args.documents)]
        small = Path(tmp) / "small.yaml"
        small.write_text(realistic_document(random.Random(1), 0))
        warm_up = Path(tmp) / "warm-up.yaml"
        warm_up.write_text(small.read_text() + UNREADABLE_JOB)
        options = CheckOptions(Settings())
        check([str(warm_up)], options)  # schemas compiled, decode errors' models made

        texts = [manifests.read_text(p) for p in paths]
        chunks = [chunk for text in texts for _, chunk in manifests._documents(text)]
        parsed = [manifests.parse_all(text, path) for text, path in zip(texts, paths, strict=True)]
        documents = [m for p in parsed for m in p.manifests]
        readings = [ryaml_loads(chunk) for chunk in chunks]
        n = len(documents)
        report = check(paths, options)

        def judge_all() -> None:
            # Fresh settings: their caches (names, label values, quantities) start empty, as
            # in a run; a second pass over the same documents would find every entry kept.
            fresh = CheckOptions(Settings())
            for document in documents:
                examine(document, fresh)

        stages: dict[str, float] = {
            "read": best_seconds(lambda: [manifests.read_text(p) for p in paths], args.rounds),
            "split": best_seconds(lambda: [manifests._documents(t) for t in texts], args.rounds),
            "shape scan": best_seconds(
                lambda: [manifests._needs_shape_scan(c) for c in chunks], args.rounds
            ),
            "ryaml": best_seconds(lambda: [ryaml_loads(c) for c in chunks], args.rounds),
            "YAML 1.1 check": best_seconds(
                lambda: [
                    manifests._yaml11_differs(r, c) for r, c in zip(readings, chunks, strict=True)
                ],
                args.rounds,
            ),
            "judge": best_seconds(judge_all, args.rounds),
            "report": best_seconds(lambda: json_report(report), args.rounds),
        }
        # Fresh settings, as for the judge: the warm-up and `report` filled `options`' caches.
        whole = best_seconds(lambda: check(paths, CheckOptions(Settings())), args.rounds)
        others = other_parsers(chunks, args.rounds) if args.parsers else {}
        orders = interleaving(texts, paths, args.rounds)
        jobguard = str(Path(sys.executable).parent / "jobguard")
        launch = start_up([jobguard, "check", "--output", "json", str(small)], None)
    per_document = {stage: seconds / n * 1e6 for stage, seconds in stages.items()}
    per_document["start-up"] = launch / 10_000 * 1e6
    total = sum(per_document.values())
    print(f"realistic: {n} documents; CPU time a document (best of {args.rounds})")
    for stage, micros in per_document.items():
        print(f"  {stage:16} {micros:7.1f} us  {micros / total:6.1%}")
    print(f"  {'sum':16} {total:7.1f} us  -> {1e6 / total:,.0f} documents/s")
    read_to_judge = total - per_document["report"] - per_document["start-up"]
    print(f"  {'read to judge':16} {read_to_judge:7.1f} us  (the stages above, summed)")
    print(f"  {'check (one pass)':16} {whole / n * 1e6:7.1f} us  (read to judge, measured whole)")
    for name, seconds in orders.items():
        print(f"  {name:48} {seconds / n * 1e6:7.1f} us")
    for name, other in others.items():
        figure = "not installed" if other is None else f"{other / n * 1e6:7.1f} us"
        print(f"  {name:28} {figure}  (against ryaml {per_document['ryaml']:.1f} us)")
    budget = 1e6 / GOAL
    print(
        f"for {GOAL:,} documents/s: {budget:.0f} us a document in all, {total - budget:.0f} us less"
    )


if __name__ == "__main__":
    main()
