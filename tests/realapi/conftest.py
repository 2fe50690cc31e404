"""The real-control-plane suite: one etcd, kube-apiserver and kube-controller-manager (built by
controlplane/build.sh, Kubernetes 1.37.2 unless KUBERNETES_VERSION says otherwise) for the whole
run, on loopback. `make test` runs it on its own, serially (`make realapi`): its tests register
cluster-wide webhooks and remove them when they end.

Nothing is skipped: when the control plane cannot be built or started, every test fails with the
one line saying why (and the logs are kept under pytest's temporary directory).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jobguard.validators.registrations import RegistrationOptions
from tests.controlplane import (
    ControlPlane,
    ControlPlaneError,
    Jobguard,
    build,
    create_namespace,
    register,
    registrations,
    unregister,
    wait_until,
)
from tests.realapi.kube import queued_create_is_judged

_failure: list[str] = []


@pytest.fixture(scope="session")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    if _failure:
        pytest.fail(_failure[0], pytrace=False)
    try:
        control_plane = ControlPlane(tmp_path_factory.mktemp("controlplane"), build())
        control_plane.start()
    except ControlPlaneError as error:
        _failure.append(str(error))
        pytest.fail(str(error), pytrace=False)
    try:
        yield control_plane
    finally:
        control_plane.stop()


@pytest.fixture
def admin(plane: ControlPlane) -> Iterator[httpx.Client]:
    with plane.http("admin") as client:
        yield client


@pytest.fixture
def namespace(admin: httpx.Client) -> Callable[[str], str]:
    """Makes a fresh namespace `<prefix>-<random>` (team-* ones fall under the Kueue policy)."""

    def make(prefix: str = "team") -> str:
        name = f"{prefix}-{secrets.token_hex(3)}"
        create_namespace(admin, name)
        return name

    return make


class Registered:
    """jobguard serving a configuration and registered as a cluster install registers it."""

    def __init__(self, plane: ControlPlane, directory: Path) -> None:
        self.plane = plane
        self.guard = Jobguard(directory, kubeconfig=plane.kubeconfig)
        self.objects: list[dict[str, Any]] = []

    def start(
        self,
        config: dict[str, Any],
        options: RegistrationOptions | None = None,
        serve_args: tuple[str, ...] = (),
        canary: str | None = None,
    ) -> list[dict[str, Any]]:
        """Serve `config`, register it, and, given a `canary` namespace of a Kueue-like policy,
        return once the registrations are in effect there (the API server picks up new webhook
        configurations asynchronously)."""
        self.guard.start(config, serve_args)
        self.objects = registrations(
            config,
            self.guard.url,
            self.guard.ca.read_bytes(),
            options,
            self.plane.release(),
        )
        with self.plane.http() as api:
            register(api, self.objects)
        if canary is not None:
            judged = queued_create_is_judged(self.plane, canary, self.guard.url, str(self.guard.ca))
            wait_until(judged, 30, "the webhook registrations to take effect")
        return self.objects

    def stop(self) -> None:
        with self.plane.http() as api:
            unregister(api, self.objects)
        self.guard.stop()


@pytest.fixture
def jobguard(plane: ControlPlane, tmp_path: Path) -> Iterator[Registered]:
    registered = Registered(plane, tmp_path / "jobguard")
    try:
        yield registered
    finally:
        registered.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The differential test's agreement figures, per corpus source and rule area."""
    from tests.realapi.differential import RECORD

    for run in RECORD:
        terminalreporter.section("differential: jobguard check against the API server")
        for line in run.table():
            terminalreporter.write_line(line)
        for outcome, entry in run.listed:
            terminalreporter.write_line(f"  listed: {outcome.describe()} [{entry.reason}]")
        for outcome in run.outcomes:
            if outcome.paths_differ:
                terminalreporter.write_line(
                    f"  paths differ: {outcome.item.source}/{outcome.item.id}: API server "
                    f"{sorted(outcome.server.paths)}, jobguard {sorted(outcome.guard.paths)}"
                )
