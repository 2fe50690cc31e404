"""tests/controlplane.py's failure paths, without building anything: a control plane that cannot
start fails with one line naming what and where its logs are, and leaves no process behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.controlplane import ControlPlane, ControlPlaneError, build


def fake_binaries(directory: Path, etcd: str) -> Path:
    directory.mkdir()
    for name in ("etcd", "kube-apiserver", "kube-controller-manager"):
        path = directory / name
        path.write_text(f"#!/bin/sh\n{etcd if name == 'etcd' else 'exit 3'}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return directory


def test_missing_binaries_fail_in_one_line(tmp_path: Path) -> None:
    plane = ControlPlane(tmp_path / "state", tmp_path / "nowhere")
    with pytest.raises(ControlPlaneError) as caught:
        plane.start(timeout=5)
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith("control plane did not start: ")
    assert "nowhere/etcd" in text and f"logs in {tmp_path / 'state' / 'logs'}" in text


def test_a_binary_that_exits_is_named_with_its_output(tmp_path: Path) -> None:
    bin_dir = fake_binaries(tmp_path / "bin", "echo 'etcdmain: address already in use' >&2; exit 1")
    plane = ControlPlane(tmp_path / "state", bin_dir)
    with pytest.raises(ControlPlaneError) as caught:
        plane.start(timeout=10)
    text = str(caught.value)
    assert "\n" not in text
    assert "etcd exited" in text and "address already in use" in text
    assert plane.processes == []


def test_a_binary_that_never_gets_ready_is_stopped(tmp_path: Path) -> None:
    bin_dir = fake_binaries(tmp_path / "bin", "exec sleep 613")
    plane = ControlPlane(tmp_path / "state", bin_dir)
    with pytest.raises(ControlPlaneError, match=r"etcd /health: not within 1 s"):
        plane.start(timeout=1)
    assert plane.processes == []
    # The sleeping etcd was killed with its process group.
    assert "sleep 613 " not in commands()


def commands() -> str:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue  # gone meanwhile
    return "\n".join(found)


def test_a_failed_build_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "build.sh"
    script.write_text(
        "echo compiling >&2\necho 'go: k8s.io/kubernetes@v9.9.9: not served' >&2\nexit 1\n"
    )
    monkeypatch.delenv("JOBGUARD_CONTROLPLANE_BIN", raising=False)
    monkeypatch.setattr("tests.controlplane.BUILD_SCRIPT", script)
    with pytest.raises(ControlPlaneError) as caught:
        build()
    assert str(caught.value) == (
        "controlplane/build.sh failed (1): go: k8s.io/kubernetes@v9.9.9: not served"
    )


def test_a_port_taken_meanwhile_costs_one_more_try(tmp_path: Path) -> None:
    # etcd fails to bind the first time (another process took the port), then starts.
    marker = tmp_path / "tried"
    script = f"if [ ! -e {marker} ]; then touch {marker}; echo 'bind: address already in use' >&2; exit 1; fi; exec sleep 617"
    bin_dir = fake_binaries(tmp_path / "bin", script)
    plane = ControlPlane(tmp_path / "state", bin_dir)
    with pytest.raises(ControlPlaneError, match=r"etcd /health: not within 1 s"):
        plane.start(timeout=1)
    assert marker.exists()  # the second try got past the bind and waited for /health
    assert "sleep 617 " not in commands()


def test_a_spawned_process_dies_with_a_test_run_killed_outright(tmp_path: Path) -> None:
    """A run ended by SIGKILL (no teardown runs) takes what it spawned with it."""
    spawner = (
        "import sys; from pathlib import Path; from tests.controlplane import spawn; "
        "p = spawn('sleeper', ['sleep', '60'], Path(sys.argv[1])); "
        "print(p.popen.pid, flush=True); sys.stdin.read()"
    )
    run = subprocess.Popen(
        [sys.executable, "-c", spawner, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert run.stdout is not None
    sleeper = int(run.stdout.readline())
    assert Path(f"/proc/{sleeper}").exists()
    run.kill()
    run.wait(10)
    for _ in range(100):
        # Gone, or a zombie until init reaps it.
        if not Path(f"/proc/{sleeper}").exists() or "Z" in _state(sleeper):
            break
        time.sleep(0.05)
    else:
        os.kill(sleeper, signal.SIGKILL)
        pytest.fail("the spawned process outlived the killed run")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"
