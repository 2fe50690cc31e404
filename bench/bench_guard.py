"""What the server's request tracking (`uvicorn_server._Guard`, the outermost ASGI middleware)
adds to each request: microseconds per request of a minimal app called bare and through
`_Guard` on a `_Connection`, one request at a time, alternating, best of `--rounds`.

Run: `.venv/bin/python -m bench.bench_guard`. Timings move with the machine; instructions do
not: `--only bare` and `--only guarded` run one target once, so the difference of their
instruction counts under callgrind, divided by `--requests`, is what `_Guard` adds (imports and
set-up are the same in both):
`valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python -m bench.bench_guard
--requests 20000 --only guarded` (and `--only bare`).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from types import SimpleNamespace
from typing import Any

from jobguard.app.server.uvicorn_server import CONNECTION, _Connection, _Guard


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def _send(message: Any) -> None:
    pass


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"{}", "more_body": False}


async def measure(requests: int, rounds: int, only: str | None = None) -> dict[str, float]:
    server = SimpleNamespace(draining=False, stopping=False, requests=set())
    connection = _Connection(server)  # type: ignore[arg-type]
    scope = {
        "type": "http",
        "headers": [(b"host", b"x"), (b"content-length", b"2")],
        "state": {CONNECTION: connection},
    }
    guard = _Guard(_app, server)  # type: ignore[arg-type]
    targets = [
        (name, t) for name, t in (("bare", _app), ("guarded", guard)) if only in (None, name)
    ]
    best = {name: float("inf") for name, _ in targets}
    for _ in range(rounds):
        for name, target in targets:
            started = time.perf_counter()
            for _ in range(requests):
                await target(scope, _receive, _send)
            best[name] = min(best[name], (time.perf_counter() - started) / requests * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["bare", "guarded"], help="one target, one round")
    args = parser.parse_args()
    if args.only:
        asyncio.run(measure(args.requests, 1, args.only))
        return
    best = asyncio.run(measure(args.requests, args.rounds))
    print(
        f"bare app {best['bare']:.2f} us, through _Guard {best['guarded']:.2f} us: "
        f"+{best['guarded'] - best['bare']:.2f} us a request"
    )


if __name__ == "__main__":
    main()
