"""Instructions a request, counted by valgrind (callgrind), not timed: the same figure on a busy
machine as on an idle one, for comparing builds and revisions where the HTTP bench's rounds
move by a fifth with the machine.

For each review: the ASGI app (`jobguard.app.server.app.create_app`, as bench_asgi drives it), the
floor app (bench/floor.py) and `handle_validate` alone; each target runs in a process of its
own twice, with 0 and with --requests requests after a warm-up, and the difference divided by
--requests is the figure (start-up and imports cancel out). Measures the tree it runs from (run it
from another checkout with PYTHONPATH set to it to compare revisions). Needs valgrind (`apt-get install -y valgrind`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import re
import shutil
import subprocess
import sys
from typing import Any

TARGETS = ("app", "floor", "handle_validate")
WARM_UP = 50


def run_target(name: str, target: str, requests: int) -> None:
    """The child: `requests` requests of review `name` through `target`."""
    import uvloop

    import jobguard.app.admission.review as admission
    from bench import floor
    from bench.bench_asgi import validate_call
    from bench.bench_http import reviews
    from jobguard.app.server.app import create_app

    logging.disable(logging.CRITICAL)
    body = reviews()[name]
    app = create_app()
    settings = app.state.settings
    scope, receive, send = validate_call(body)

    async def serve(asgi: Any) -> None:
        for _ in range(WARM_UP + requests):
            await asgi(scope, receive, send)

    gc.collect()
    gc.freeze()  # as `jobguard serve` does
    if target == "handle_validate":
        for _ in range(WARM_UP + requests):
            admission.handle_validate(body, settings)
    else:
        uvloop.run(serve(app if target == "app" else floor.app))


def callgrind_instructions(arguments: list[str], env: dict[str, str]) -> int:
    """The instructions callgrind counts for the Python process `arguments` (after the
    interpreter), run with `env`."""
    command = [
        *("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"),
        *(sys.executable, *arguments),
    ]
    ran = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", ran.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{ran.stderr[-2000:]}")
    return int(found.group(1))


def instructions(name: str, target: str, requests: int) -> int:
    # One hash seed for every child: string hashing decides dict and set layouts, which moved
    # the count by up to 4% between runs of the same code.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    arguments = ["-m", "bench.bench_instructions", "--child", name, target, str(requests)]
    return callgrind_instructions(arguments, env)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--only", nargs="*", help="review names (default: the three normal ones)")
    parser.add_argument(
        "--child", nargs=3, metavar=("REVIEW", "TARGET", "N"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        name, target, count = args.child
        run_target(name, target, int(count))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is missing: apt-get install -y valgrind")
    import jobguard

    print(f"jobguard from {os.path.dirname(jobguard.__file__)}")
    names = args.only or ["job-update", "status-update-allowed", "status-update-denied"]
    for name in names:
        counts = {}
        for target in TARGETS:
            empty = instructions(name, target, 0)
            counts[target] = (instructions(name, target, args.requests) - empty) / args.requests
        ratio = counts["floor"] / counts["app"]
        print(
            f"{name:24} app {counts['app']:9,.0f}  handle_validate {counts['handle_validate']:9,.0f}"
            f"  floor {counts['floor']:9,.0f} instructions/request; floor / app {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
