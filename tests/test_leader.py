"""The leader of the replicas keeps jobguard's webhook registrations (`app.cluster.lease`,
`app.cluster.registrar`), against the stand-in API server (real HTTPS on 127.0.0.1, the real
`kubernetes` client): one writer among candidates, takeover only after the holder's lease
expired on the candidate's own clock, the registrations written from the configuration in
force, again on reload and on a new CA, owned by the chart's ClusterRole, and the Lease released
on stop."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from jobguard.app.cluster.client import Cluster
from jobguard.app.cluster.lease import LeaseConfig, LeaseElector
from jobguard.app.cluster.registrar import Registrar, RegistrarOptions
from jobguard.app.config import parse_config
from jobguard.validators import Settings
from jobguard.validators.registrations import ClientConfig, webhook_configurations
from tests.apiserver import StandIn
from tests.corpus import KUEUE_SETUP

LEASE = ("coordination.k8s.io", "leases")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _elector(cluster: Cluster, identity: str, clock: Clock) -> LeaseElector:
    config = LeaseConfig("jobguard-system", "jobguard-leader", identity, 15, 10, 2)
    return LeaseElector(cluster, config, monotonic=clock)


def _lease(server: StandIn) -> dict[str, Any]:
    spec: dict[str, Any] = server.cluster.stored[("leases", "jobguard-system", "jobguard-leader")][
        "spec"
    ]
    return spec


def test_one_leader_and_a_takeover_only_after_expiry(server: StandIn, cluster: Cluster) -> None:
    clock_a, clock_b = Clock(), Clock()
    a, b = _elector(cluster, "pod-a", clock_a), _elector(cluster, "pod-b", clock_b)
    assert a.step() is True and b.step() is False
    assert _lease(server)["holderIdentity"] == "pod-a"
    # pod-a renews; pod-b sees each renewal and keeps waiting.
    for _ in range(3):
        clock_a.now += 2
        clock_b.now += 2
        assert a.step() is True and b.step() is False
    # pod-a stops renewing (partitioned): pod-b waits a full lease duration on its own clock.
    clock_b.now += 14
    assert b.step() is False
    clock_b.now += 1
    assert b.step() is True
    lease = _lease(server)
    assert (lease["holderIdentity"], lease["leaseTransitions"]) == ("pod-b", 1)
    # pod-a, back, cannot renew: it stops leading once its renew deadline has passed.
    clock_a.now += 4
    assert a.step() is True  # within its 10 s renew deadline it still counts itself leader
    clock_a.now += 6
    assert a.step() is False
    # Never two holders: the stored record names one, and pod-b renews it.
    clock_b.now += 2
    assert b.step() is True and _lease(server)["holderIdentity"] == "pod-b"
    b.release()
    assert _lease(server)["holderIdentity"] == ""
    # A released Lease is taken at once.
    clock_a.now += 2
    assert a.step() is True and _lease(server)["holderIdentity"] == "pod-a"


def test_a_candidate_losing_a_race_is_not_leader(server: StandIn, cluster: Cluster) -> None:
    a = _elector(cluster, "pod-a", Clock())
    assert a.step() is True
    # Someone else wrote the Lease between our read and our write: the API server's 409.
    stored = server.cluster.stored[("leases", "jobguard-system", "jobguard-leader")]
    b = _elector(cluster, "pod-b", Clock())
    stored["spec"]["leaseDurationSeconds"] = 0  # expired at once for pod-b
    original = b._read

    def stale_read() -> dict | None:
        lease = original()
        server.cluster.resource_version += 1
        stored["metadata"]["resourceVersion"] = str(server.cluster.resource_version)
        return lease

    b._read = stale_read  # type: ignore[method-assign]
    assert b.step() is False
    assert _lease(server)["holderIdentity"] == "pod-a"


def _settings(text: str) -> Settings:
    return parse_config(text).to_settings()


def test_the_leader_writes_the_registrations_and_follows_the_configuration(
    server: StandIn, cluster: Cluster, tmp_path: Path
) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nONE\n-----END CERTIFICATE-----\n")
    server.cluster.stored[("clusterroles", "", "jobguard")] = {
        "metadata": {"name": "jobguard", "uid": "role-uid", "resourceVersion": "1"}
    }
    current = {"settings": _settings("{}")}
    client = ClientConfig(service_namespace="jobguard-system", service_name="jobguard")
    options = RegistrarOptions(
        client,
        str(ca),
        LeaseConfig("jobguard-system", "jobguard-leader", "pod-a", 15, 10, 2),
        owner_cluster_role="jobguard",
    )
    leader = Registrar(lambda: cluster, lambda: current["settings"], options)
    follower_options = RegistrarOptions(
        client, str(ca), LeaseConfig("jobguard-system", "jobguard-leader", "pod-b", 15, 10, 2)
    )
    follower = Registrar(lambda: cluster, lambda: current["settings"], follower_options)

    def stored(kind: str) -> dict:
        return server.cluster.stored[(f"{kind}webhookconfigurations", "", "jobguard")]

    assert leader.step(0) is True and follower.step(0) is False
    validating = stored("validating")
    assert [h["name"] for h in validating["webhooks"]] == [
        "jobs.jobguard.io",
        "jobs-status.jobguard.io",
    ]
    assert validating["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "name": "jobguard",
            "uid": "role-uid",
        }
    ]
    assert stored("mutating")["webhooks"] == []
    assert leader.passes == 2
    # Nothing changed: nothing written.
    assert leader.step(2) is True and leader.passes == 2
    # A reload that adds a suspend policy: the scope follows on the next pass.
    current["settings"] = _settings(KUEUE_SETUP.read_text())
    leader.step(4)
    expected = webhook_configurations(current["settings"], client, ca.read_bytes())
    assert stored("validating")["webhooks"] == expected[0]["webhooks"]
    assert stored("mutating")["webhooks"] == expected[1]["webhooks"]
    assert leader.passes == 4
    # A new CA: patched into every webhook.
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nTWO\n-----END CERTIFICATE-----\n")
    leader.step(6)
    bundles = {h["clientConfig"]["caBundle"] for h in stored("validating")["webhooks"]}
    assert bundles == {base64.b64encode(ca.read_bytes()).decode()}
    # Someone edits the registrations: repaired at the next resync.
    stored("validating")["webhooks"] = []
    leader.step(7)
    assert stored("validating")["webhooks"] == []
    leader.step(70)
    assert stored("validating")["webhooks"] != []
    # The follower never wrote.
    writes = [
        r for r in server.cluster.requests if r.method in ("POST", "PUT") and "webhook" in r.path
    ]
    assert writes and all((r.body or {}).get("metadata", {}).get("ownerReferences") for r in writes)
    assert yaml.safe_dump(stored("validating"))  # plain data


def test_the_server_keeps_its_registrations_and_a_reload_widens_them(
    server: StandIn, cluster: Cluster, tmp_path: Path
) -> None:
    import time

    from fastapi.testclient import TestClient

    from jobguard.app.server.app import create_app

    config = tmp_path / "config.yaml"
    config.write_text("{}\n")
    client = ClientConfig(service_namespace="jobguard-system", service_name="jobguard")
    options = RegistrarOptions(
        client, None, LeaseConfig("jobguard-system", "jobguard-leader", "pod-a", 15, 10, 0.1)
    )
    app = create_app(
        config_path=str(config), reload_interval=0.1, registrar=(lambda: cluster, options)
    )
    key = ("validatingwebhookconfigurations", "", "jobguard")

    def names() -> list[str]:
        found = server.cluster.stored.get(key)
        return [h["name"] for h in found["webhooks"]] if found else []

    def wait_for(wanted: list[str]) -> float:
        start = time.monotonic()
        while names() != wanted and time.monotonic() - start < 10:
            time.sleep(0.02)
        assert names() == wanted
        return time.monotonic() - start

    with TestClient(app):
        wait_for(["jobs.jobguard.io", "jobs-status.jobguard.io"])
        config.write_text(KUEUE_SETUP.read_text())
        delay = wait_for(
            [
                "queued.jobs.jobguard.io",
                "jobs.jobguard.io",
                "cronjobs.jobguard.io",
                "jobs-status.jobguard.io",
            ]
        )
        assert delay < 10
    # Stopped: the Lease is released for the next leader.
    assert (
        server.cluster.stored[("leases", "jobguard-system", "jobguard-leader")]["spec"][
            "holderIdentity"
        ]
        == ""
    )


def test_nothing_is_registered_before_the_leader_serves(server: StandIn, cluster: Cluster) -> None:
    client = ClientConfig(service_namespace="jobguard-system", service_name="jobguard")
    options = RegistrarOptions(
        client, None, LeaseConfig("jobguard-system", "jobguard-leader", "pod-a", 15, 10, 2)
    )
    ready = {"now": False}
    leader = Registrar(
        lambda: cluster, lambda: _settings("{}"), options, ready=lambda: ready["now"]
    )
    assert leader.step(0) is True  # it leads ...
    assert ("validatingwebhookconfigurations", "", "jobguard") not in server.cluster.stored
    ready["now"] = True
    leader.step(2)  # ... and registers once it serves
    assert ("validatingwebhookconfigurations", "", "jobguard") in server.cluster.stored
