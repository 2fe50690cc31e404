"""The canonical helpers for tests that run a real `jobguard serve` process on loopback:
`loopback_args()` for its arguments, `serving()` to run it, `wait_ready()` until it serves."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def loopback_args(port: int, *extra: str, tls: tuple[Path, Path] | None = None) -> list[str]:
    """`serve` arguments for 127.0.0.1:PORT, over TLS with (certificate, key) when given."""
    args = ["--host", "127.0.0.1", "--port", str(port)]
    if tls is not None:
        cert, key = tls
        args += ["--tls-cert-file", str(cert), "--tls-private-key-file", str(key)]
    return [*args, *extra]


def serve_command(args: list[str]) -> list[str]:
    """The command line of `jobguard serve ARGS` in this interpreter, logging warnings only."""
    return [sys.executable, "-m", "jobguard", "serve", "--log-level", "warning", *args]


SERVE_ENV = {**os.environ, "JOBGUARD_CONFIG": ""}
"""The environment for a server under test: no configuration file from the caller's shell."""


def wait_ready(
    url: str,
    verify: ssl.SSLContext | bool = True,
    proc: subprocess.Popen[bytes] | None = None,
    seconds: float = 20,
) -> None:
    """Poll `url`/readyz until it answers 200; fail if the process dies or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", verify=verify, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        time.sleep(0.05)
    raise AssertionError(f"{url} did not become ready")


@contextlib.contextmanager
def serving(
    args: list[str],
    log_path: Path | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """`jobguard serve ARGS` as a child process, stopped (and reaped) on exit.

    Its logs go to a file (`log_path` to read them), never a pipe: a pipe nobody reads fills up
    and stalls the server.
    """
    log = open(log_path, "wb") if log_path else tempfile.TemporaryFile()  # noqa: SIM115
    proc = subprocess.Popen(
        serve_command(args),
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=SERVE_ENV,
        preexec_fn=preexec_fn,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """A process's resident memory (VmRSS) or its peak (VmHWM), in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for process {pid}")
