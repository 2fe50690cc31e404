"""Rolling stops: how many requests a SIGTERM loses, with API-server-like clients on loopback.

Each run starts `jobguard serve`, runs keep-alive clients (they reuse one connection until a
response says `Connection: close`, as an API server's pool does) and new-connection clients
(one connection per request, as the Service sends them), sends SIGTERM after 0.5 s, and lets
every client go on until the closed listener refuses it. A request is *lost* when its
connection was established and the request written, but no complete response came back (see
tests/loads.py). `--baseline REF` runs the same against the server of a git revision (only
flags both understand), for a before/after figure.

Run: `.venv/bin/python -m bench.bench_stop --runs 5` (add `--baseline bfc04b8` for the old
server, `--tls` for TLS, `--http h11 --loop asyncio` for the other stack; by default the
server picks its own, uvloop and httptools).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.builders import job  # noqa: E402
from tests.loads import StopReport, rolling_stop  # noqa: E402
from tests.reviews import review  # noqa: E402
from tests.servers import free_port, wait_ready  # noqa: E402


@contextlib.contextmanager
def source_tree(ref: str | None) -> Iterator[Path]:
    """The working tree, or the `jobguard` package of a git revision in a temporary directory."""
    if ref is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory() as tmp:
        top = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        archive = subprocess.run(
            ["git", "-C", top, "archive", ref, "jobguard"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield Path(tmp)


_WITHOUT_UVLOOP = (
    "import sys; sys.modules['uvloop'] = None; "
    "from jobguard.app.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def jobguard_command(tree: Path) -> list[str]:
    """How to run `jobguard` from `tree` (this one, or a revision's `jobguard` package)."""
    if "uvloop" not in (tree / "jobguard/app/server/uvicorn_server.py").read_text():
        # A revision from before uvloop was supported: uvicorn would pick it, as installed
        # now, and such a server cannot serve on it. Run it as it ran: on asyncio's loop.
        return [sys.executable, "-c", _WITHOUT_UVLOOP]
    return [sys.executable, "-m", "jobguard"]


def one_stop(
    tree: Path, args: argparse.Namespace, tls: tuple[str, str, str] | None
) -> tuple[StopReport, float]:
    import ssl

    port = free_port()
    command = [*jobguard_command(tree), "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--shutdown-delay", str(args.delay), "--grace-period", "10"]
    command += ["--log-level", "warning"]
    context = None
    if tls is not None:
        command += ["--tls-cert-file", tls[0], "--tls-private-key-file", tls[1]]
        context = ssl.create_default_context(cafile=tls[2])
    for option in ("http", "loop"):
        if getattr(args, option) != "auto":
            command += [f"--{option}", getattr(args, option)]
    env = {**os.environ, "JOBGUARD_CONFIG": ""}
    proc = subprocess.Popen(
        command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        scheme = "https" if tls else "http"
        wait_ready(f"{scheme}://127.0.0.1:{port}", context or True, proc)
        body = orjson.dumps(review(job()))
        report = rolling_stop(
            proc,
            ("127.0.0.1", port),
            body,
            keep_alive=args.keep_alive,
            new_connections=args.new_connections,
            tls=context,
        )
        assert report.signalled_at is not None
        proc.wait(timeout=30)
        return report, time.monotonic() - report.signalled_at
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()


def run(label: str, ref: str | None, args: argparse.Namespace) -> None:
    print(
        f"{label}: {args.keep_alive} keep-alive + {args.new_connections} new-connection clients,"
        f" shutdown delay {args.delay:g}s, loop {args.loop}, http {args.http}"
        f"{' over TLS' if args.tls else ''}"
    )
    print("  run  answered  after-SIGTERM  with-close  lost  refused  SIGTERM->exit")
    total_lost = 0
    with source_tree(ref) as tree, tempfile.TemporaryDirectory() as tmp:
        tls = None
        if args.tls:
            from jobguard.app.certs import generate

            certs = generate("jobguard", "bench", Path(tmp), dev=True)
            tls = (str(certs.tls_crt), str(certs.tls_key), str(certs.ca_crt))
        for i in range(args.runs):
            report, seconds = one_stop(tree, args, tls)
            total_lost += report.lost
            print(
                f"  {i + 1:3d}  {report.answered:8d}  {report.answered_after_signal:13d}"
                f"  {report.closed_by_header:10d}  {report.lost:4d}  {report.refused:7d}"
                f"  {seconds:12.2f}s"
            )
            if report.errors:
                print(f"       lost: {', '.join(sorted(set(report.errors)))}")
    print(f"  lost in {args.runs} stops: {total_lost}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep-alive", type=int, default=8)
    parser.add_argument("--new-connections", type=int, default=4)
    parser.add_argument("--delay", type=float, default=2.0, help="--shutdown-delay")
    parser.add_argument("--http", choices=["auto", "h11", "httptools"], default="auto")
    parser.add_argument("--loop", choices=["auto", "asyncio", "uvloop"], default="auto")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--baseline", metavar="REF", help="also run the server of this revision")
    args = parser.parse_args()
    if args.baseline:
        run(f"baseline {args.baseline}", args.baseline, args)
    run("this tree", None, args)


if __name__ == "__main__":
    main()
