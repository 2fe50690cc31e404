"""Configuration reload: ConfigMap-style symlink swaps, SIGHUP, bad versions kept out."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from fastapi.testclient import TestClient

from jobguard.app.main import create_app
from jobguard.app.reload import ConfigReloader
from jobguard.validators import Settings
from tests.builders import job
from tests.reviews import review

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
