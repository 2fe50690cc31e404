"""Configuration reload: ConfigMap-style symlink swaps, SIGHUP, bad versions kept out."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from jobguard.app import config as config_module
from jobguard.app.server import reload as reload_module
from jobguard.app.server.app import create_app
from jobguard.app.server.reload import ConfigReloader
from jobguard.validators import Settings
from tests.builders import job
from tests.reviews import review
from tests.servers import free_port, loopback_args, serving, wait_ready

V135 = "kubernetesVersion: '1.35'\n"
V136 = "kubernetesVersion: '1.36'\n"


def configmap_dir(root: Path, text: str) -> Path:
    """The layout kubelet writes: config.yaml -> ..data/config.yaml, ..data -> ..<timestamp>."""
    version = root / "..2026_01_01_00_00_00.000000001"
    version.mkdir()
    (version / "config.yaml").write_text(text)
    (root / "..data").symlink_to(version.name)
    (root / "config.yaml").symlink_to("..data/config.yaml")
    return root / "config.yaml"


def swap(root: Path, text: str, stamp: str) -> None:
    """Kubelet's atomic update: a new timestamped dir, then rename a new ..data link over it."""
    version = root / f"..2026_01_01_00_00_00.{stamp}"
    version.mkdir()
    (version / "config.yaml").write_text(text)
    tmp = root / "..data_tmp"
    tmp.symlink_to(version.name)
    os.replace(tmp, root / "..data")


def test_symlink_swap_is_picked_up(tmp_path: Path) -> None:
    path = configmap_dir(tmp_path, V135)
    applied: list[Settings] = []
    reloader = ConfigReloader(str(path), applied.append)
    assert reloader.check() is False  # unchanged
    swap(tmp_path, V136, "2")
    assert reloader.check() is True
    assert applied[-1].semantics.version == "1.36"
    assert reloader.reloads == 1 and reloader.failures == 0


def test_bad_new_version_is_rejected_and_counted(tmp_path: Path) -> None:
    path = configmap_dir(tmp_path, V135)
    applied: list[Settings] = []
    reloader = ConfigReloader(str(path), applied.append)
    swap(tmp_path, "kubernetesVersion: '1.99'\n", "2")
    assert reloader.check() is False
    assert applied == [] and reloader.failures == 1
    assert reloader.last_error is not None and "accepted values" in reloader.last_error
    swap(tmp_path, "rules: [\n", "3")
    assert reloader.check() is False and reloader.failures == 2
    swap(tmp_path, V136, "4")
    assert reloader.check() is True and applied[-1].semantics.version == "1.36"
    assert reloader.last_error is None


def test_sighup_forces_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(V135)
    applied: list[Settings] = []
    reloader = ConfigReloader(str(path), applied.append, interval=3600)

    async def scenario() -> None:
        task = asyncio.create_task(reloader.run())
        await asyncio.sleep(0)  # let run() install its handler
        os.kill(os.getpid(), signal.SIGHUP)
        for _ in range(200):
            if applied:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert len(applied) == 1 and applied[0].semantics.version == "1.35"


def test_running_app_switches_settings_without_restart(tmp_path: Path) -> None:
    path = configmap_dir(tmp_path, V135)
    ran = job(suspend=True)
    ran["status"] = {
        "startTime": "2026-01-01T10:00:00Z",
        "active": 0,
        "conditions": [{"type": "Suspended", "status": "True"}],
    }
    moved = job(suspend=True)
    moved["status"] = ran["status"]
    moved["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    body = review(moved, ran, "UPDATE")
    app = create_app(config_path=str(path), reload_interval=0.02)
    with TestClient(app) as client:
        assert client.post("/validate", json=body).json()["response"]["allowed"] is False
        swap(tmp_path, V136, "2")
        deadline = time.monotonic() + 10
        while app.state.reloader.reloads == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert app.state.reloader.reloads == 1
        # KEP-5440 on 1.36: a Job that ran and is fully suspended may be re-placed.
        assert client.post("/validate", json=body).json()["response"]["allowed"] is True
        swap(tmp_path, "kubernetesVersion: nope\n", "3")
        deadline = time.monotonic() + 10
        while app.state.reloader.failures == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert app.state.reloader.failures == 1
        assert client.post("/validate", json=body).json()["response"]["allowed"] is True


# --- fail safe: whatever a new version holds, the last good settings stay ------------------------

POLICY = (
    "suspendPolicies:\n"
    "  - name: queued\n"
    "    match: {namespaces: ['*']}\n"
    "    controllers: {serviceAccounts: ['kueue-system:kueue']}\n"
)

BAD_VERSIONS = {
    "emptied": "",
    "comment-only": "# being rewritten\n\n# nothing yet\n",
    "nested-20000-deep": "rules: " + "[" * 20_000 + "]" * 20_000 + "\n",
    "oversized": "# padding\n" * 120_000 + V136,
}


@pytest.mark.parametrize("bad", list(BAD_VERSIONS))
def test_a_bad_version_keeps_the_last_good_settings(
    bad: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = configmap_dir(tmp_path, V135 + POLICY)
    applied: list[Settings] = []
    results: list[bool] = []
    reloader = ConfigReloader(str(path), applied.append, observer=results.append)
    swap(tmp_path, BAD_VERSIONS[bad], "2")
    with caplog.at_level(logging.ERROR, "jobguard.config"):
        assert reloader.check() is False
    assert applied == [] and results == [False] and reloader.failures == 1
    assert reloader.last_error is not None and reloader.last_error.startswith(f"{path}")
    assert caplog.messages == [
        f"new configuration rejected, keeping the current one: {reloader.last_error}"
    ]
    swap(tmp_path, V136 + POLICY, "3")
    assert reloader.check() is True and results == [False, True]
    assert applied[-1].semantics.version == "1.36" and len(applied[-1].policies.policies) == 1


def test_a_loader_that_fails_unexpectedly_is_a_rejected_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = configmap_dir(tmp_path, V135)
    applied: list[Settings] = []
    results: list[bool] = []
    reloader = ConfigReloader(str(path), applied.append, observer=results.append)

    def broken(name: str) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(reload_module, "read_config_text", broken)
    swap(tmp_path, V136, "2")
    with caplog.at_level(logging.ERROR, "jobguard.config"):
        assert reloader.check() is False
    assert applied == [] and results == [False] and reloader.failures == 1
    assert reloader.last_error == f"{path}: RecursionError('maximum recursion depth exceeded')"
    assert caplog.messages == [
        f"new configuration rejected, keeping the current one: {reloader.last_error}"
    ]
    assert caplog.records[0].exc_info is not None
    monkeypatch.undo()
    swap(tmp_path, V136 + POLICY, "3")
    assert reloader.check() is True and applied[-1].semantics.version == "1.36"


def test_sighup_on_a_bad_version_is_a_rejected_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(V135)
    applied: list[Settings] = []
    # Neither settled nor coalesced: each SIGHUP reads the file (the defaults: test below).
    reloader = ConfigReloader(str(path), applied.append, interval=3600, settle=0, min_gap=0)

    def broken(name: str) -> Any:
        raise KeyError("a bug")

    async def scenario() -> None:
        task = asyncio.create_task(reloader.run())
        await asyncio.sleep(0)  # let run() install its handler

        async def rejected(count: int) -> None:  # read in a worker thread: waited for
            for _ in range(500):
                if reloader.failures == count:
                    return
                await asyncio.sleep(0.01)

        for count, bad in enumerate(("", "[" * 20_000), start=1):
            path.write_text(bad)
            os.kill(os.getpid(), signal.SIGHUP)
            await rejected(count)
        monkeypatch.setattr(reload_module, "read_config_text", broken)
        os.kill(os.getpid(), signal.SIGHUP)
        await rejected(3)
        monkeypatch.undo()
        path.write_text(V136)
        os.kill(os.getpid(), signal.SIGHUP)
        for _ in range(200):
            if applied:
                break
            await asyncio.sleep(0.01)
        assert not task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert reloader.failures == 3
    assert len(applied) == 1 and applied[0].semantics.version == "1.36"


def test_running_app_counts_a_bad_version_and_takes_the_next_good_one(tmp_path: Path) -> None:
    path = configmap_dir(tmp_path, V135 + POLICY)
    app = create_app(config_path=str(path), reload_interval=0.02)

    def wait(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 10
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.02)

    def failures(count: int) -> Callable[[], bool]:
        return lambda: bool(app.state.reloader.failures == count)

    with TestClient(app) as client:
        reloader = app.state.reloader
        for stamp, bad in enumerate(BAD_VERSIONS.values(), start=2):
            swap(tmp_path, bad, str(stamp))
            wait(failures(stamp - 1))
        assert (reloader.reloads, reloader.failures) == (0, len(BAD_VERSIONS))
        metrics = client.get("/metrics").text
        failed = f'jobguard_config_reloads_total{{result="failure"}} {len(BAD_VERSIONS)}.0'
        assert failed in metrics
        assert len(app.state.settings.policies.policies) == 1
        swap(tmp_path, V136 + POLICY, "9")
        wait(lambda: reloader.reloads == 1)
        assert reloader.reloads == 1 and app.state.settings.semantics.version == "1.36"


@pytest.mark.slow  # a real `jobguard serve` process
def test_sighup_to_a_serving_process_never_stops_it(tmp_path: Path) -> None:
    """A real `jobguard serve` on loopback: SIGHUP after each bad version, then a good one."""
    config = tmp_path / "config.yaml"
    config.write_text(V135 + POLICY)
    log_path = tmp_path / "serve.log"
    port = free_port()
    with serving(loopback_args(port, "--config", str(config)), log_path) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, proc=proc)
        for count, bad in enumerate(BAD_VERSIONS.values(), start=1):
            config.write_text(bad)
            proc.send_signal(signal.SIGHUP)
            # Read once settled, at most once a second: each version waited for.
            failed = f'jobguard_config_reloads_total{{result="failure"}} {count}.0'
            deadline = time.monotonic() + 10
            while failed not in httpx.get(f"{url}/metrics", timeout=5).text:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)
            assert httpx.get(f"{url}/readyz", timeout=5).status_code == 200
        config.write_text(V136 + POLICY)
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        metrics = ""
        while 'jobguard_config_reloads_total{result="success"} 1.0' not in metrics:
            assert time.monotonic() < deadline, metrics
            time.sleep(0.1)
            metrics = httpx.get(f"{url}/metrics", timeout=5).text
        failed = f'jobguard_config_reloads_total{{result="failure"}} {len(BAD_VERSIONS)}.0'
        assert failed in metrics
        assert proc.poll() is None
    logged = log_path.read_text()
    assert logged.count("new configuration rejected, keeping the current one") == len(BAD_VERSIONS)
    assert "Traceback" not in logged


def test_a_sighup_storm_is_read_once_per_gap_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(V135)
    applied: list[Settings] = []
    threads: list[str] = []
    read = config_module.read_config_text

    def counted(name: str) -> str:
        threads.append(threading.current_thread().name)
        return read(name)

    monkeypatch.setattr(reload_module, "read_config_text", counted)
    reloader = ConfigReloader(str(path), applied.append, interval=3600, settle=0, min_gap=1.5)

    async def scenario() -> None:
        task = asyncio.create_task(reloader.run())
        await asyncio.sleep(0)  # let run() install its handler
        for _ in range(50):
            os.kill(os.getpid(), signal.SIGHUP)
            await asyncio.sleep(0.004)
        await asyncio.sleep(1.8)  # the gap, and the one read the storm's tail asked for
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    # The first SIGHUP read at once, the other 49 (within the gap) coalesced into one more read,
    # which found the text already applied: parsed and applied once.
    assert len(threads) == 2 and len(applied) == 1
    assert threading.main_thread().name not in threads


def test_a_file_rewritten_in_place_is_read_once_it_has_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(V135 + POLICY)
    applied: list[Settings] = []
    reloader = ConfigReloader(str(path), applied.append, interval=0.02, settle=0.3, min_gap=0)

    async def scenario() -> None:
        task = asyncio.create_task(reloader.run())
        final = V136 + POLICY
        # Written in place in pieces: the first is valid YAML (a version without the policy).
        with path.open("w") as handle:
            for piece in (final[: len(V136)], final[len(V136) :]):
                handle.write(piece)
                handle.flush()
                await asyncio.sleep(0.1)
        for _ in range(200):
            if applied:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    # Only the finished file was taken: the policy never dropped.
    assert [len(s.policies.policies) for s in applied] == [1]
    assert applied[0].semantics.version == "1.36"


def test_a_sighup_over_an_unchanged_file_applies_nothing_new(tmp_path: Path) -> None:
    path = configmap_dir(tmp_path, V135)
    applied: list[Settings] = []
    reloader = ConfigReloader(str(path), applied.append)
    assert reloader.check(force=True) is True and len(applied) == 1
    assert reloader.check(force=True) is True and len(applied) == 1  # same text: not parsed
    swap(tmp_path, V136, "2")
    assert reloader.check() is True and applied[-1].semantics.version == "1.36"
    swap(tmp_path, V135, "3")  # back to the first text: a change from what is applied
    assert reloader.check(force=True) is True and applied[-1].semantics.version == "1.35"
    assert len(applied) == 3 and reloader.failures == 0
