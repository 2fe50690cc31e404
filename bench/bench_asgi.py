"""The webhook's own cost around the judgement, in-process: the ASGI app driven with a fake
receive and send (POST /validate, `?timeout=10s`, a content-length header, the body in one
message, as uvicorn hands over a small body), beside `handle_validate` alone and the floor app
(bench/floor.py), for the HTTP bench's reviews. Microseconds a request, best and median of
--runs runs of --requests requests each, the three alternating; what is loaded is frozen out of
the cyclic collector, as `jobguard serve` does.

Run: `.venv/bin/python -m bench.bench_asgi`; `--log-level info` logs every request as
`jobguard serve` does by default (to /dev/null). Another revision's package:
`git archive REF jobguard | tar -x -C DIR`, then `PYTHONPATH=DIR .venv/bin/python
bench/bench_asgi.py` (jobguard is imported before anything of this tree's).
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from jobguard.app.admission.review import handle_validate
from jobguard.app.server.app import create_app
from jobguard.app.server.observability import configure_logging

sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # this tree's bench package

from bench import floor
from bench.bench_http import reviews

Message = MutableMapping[str, Any]
App = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[Message]],
        Callable[[Message], Awaitable[None]],
    ],
    Awaitable[None],
]


def validate_call(
    body: bytes,
) -> tuple[
    MutableMapping[str, Any],
    Callable[[], Awaitable[Message]],
    Callable[[Message], Awaitable[None]],
]:
    """The scope, receive and send of a POST /validate as uvicorn hands over a small body
    (`?timeout=10s`, a content-length header, the body in one message), to call again and
    again; what the app sends is dropped."""
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/validate",
        "query_string": b"timeout=10s",
        "headers": [
            (b"host", b"jobguard"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    message = {"type": "http.request", "body": body, "more_body": False}

    async def receive() -> Message:
        return message

    async def send(_: Message) -> None:
        pass

    return scope, receive, send


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000, help="requests a run")
    parser.add_argument("--runs", type=int, default=9, help="runs of each, alternating")
    parser.add_argument("--only", nargs="*", help="review names (default: the three normal ones)")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    configure_logging(args.log_level)
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(Path("/dev/null").open("w"))  # noqa: SIM115 (open for the process)
    import jobguard

    print(f"jobguard from {Path(jobguard.__file__).parent}, log level {args.log_level}")
    names = args.only or ["job-update", "status-update-allowed", "status-update-denied"]
    app = create_app()
    settings = app.state.settings

    async def run(target: App, body: bytes) -> float:
        scope, receive, send = validate_call(body)
        started = time.perf_counter()
        for _ in range(args.requests):
            await target(scope, receive, send)
        return (time.perf_counter() - started) / float(args.requests) * 1e6

    async def measure() -> None:
        for name in names:
            body = reviews()[name]

            async def judge(scope: Any, receive: Any, send: Any, body: bytes = body) -> None:
                handle_validate(body, settings)

            targets: dict[str, App] = {"app": app, "handle_validate": judge, "floor": floor.app}
            times: dict[str, list[float]] = {target: [] for target in targets}
            for _ in range(args.runs):
                for target, call in targets.items():
                    times[target].append(await run(call, body))
            for target, runs in times.items():
                print(
                    f"{name:24} {target:16} best {min(runs):6.1f} us"
                    f"  median {statistics.median(runs):6.1f} us"
                )
            gap = [a - j for a, j in zip(times["app"], times["handle_validate"], strict=True)]
            print(f"{name:24} {'app - judgement':16} median {statistics.median(gap):6.1f} us")

    gc.collect()
    gc.freeze()
    import uvloop

    uvloop.run(measure())


if __name__ == "__main__":
    main()
