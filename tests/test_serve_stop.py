"""How `jobguard serve` starts and stops as an operator sees it: SIGTERM logged when it arrives
(the stop itself waits --shutdown-delay), Ctrl-C stops at once and cleanly, and a port that is in
use is named with its address and exit code 3."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from jobguard.app.exits import ExitCode
from tests.servers import SERVE_ENV, free_port, loopback_args, serve_command, wait_ready

pytestmark = pytest.mark.slow  # real `jobguard serve` processes


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            serve_command([*args, "--log-level", "info"]),
            stdout=subprocess.DEVNULL,
            stderr=out,
            env=SERVE_ENV,
        )


def _lines(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def _wait_for(log: Path, text: str, seconds: float) -> float:
    """Seconds until a log line's message contains `text`."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if any(text in str(line["msg"]) for line in _lines(log)):
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"no {text!r} line within {seconds}s: {log.read_text()}")


def test_sigterm_is_logged_when_it_arrives(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    proc = _start(loopback_args(port, "--shutdown-delay", "4"), log)
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc=proc)
        proc.send_signal(signal.SIGTERM)
        # Logged at once, not when the 4 s delay ends (bounds loose for a busy machine).
        assert _wait_for(log, "SIGTERM: not ready", 3.0) < 3.0
        assert proc.poll() is None  # still serving through the delay
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text and "stopping: closing the listener" in text


def test_ctrl_c_stops_at_once_without_a_traceback(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    # The default 5 s shutdown delay is for the kubelet's SIGTERM, not for someone at a terminal.
    proc = _start(loopback_args(port), log)
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc=proc)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
        assert time.monotonic() - started < 4.5  # not after the 5 s shutdown delay
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert "SIGINT: stopping now" in text


@pytest.mark.parametrize("which", ["webhook", "health"])
def test_a_busy_port_is_named_and_exits_3(which: str, tmp_path: Path) -> None:
    port, health, log = free_port(), free_port(), tmp_path / "serve.log"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port if which == "webhook" else health))
        taken.listen()
        proc = _start(loopback_args(port, "--health-port", str(health)), log)
        assert proc.wait(timeout=20) == ExitCode.UNAVAILABLE
    assert int(ExitCode.UNAVAILABLE) == 3  # the documented code
    busy = port if which == "webhook" else health
    errors = [line for line in _lines(log) if line["level"] == "error"]
    assert [str(e["msg"]) for e in errors] == [
        f"cannot listen on 127.0.0.1:{busy} (the {which} port): Address already in use"
    ]
    assert "Traceback" not in log.read_text()
