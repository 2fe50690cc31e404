"""Helpers for tests that run a real server process on loopback."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
def serving(args: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    """`jobguard serve ARGS` as a child process, stopped (and reaped) on exit.

    Its logs go to a file, never a pipe: a pipe nobody reads fills up and stalls the server.
    """
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed below, after the process)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jobguard", "serve", "--log-level", "warning", *args],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "JOBGUARD_CONFIG": ""},
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
