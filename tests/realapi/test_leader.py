"""Two replicas against the real API server, as the chart runs them: one Lease, one leader. The
leader keeps the webhook registrations (`serve --register-webhooks`, reaching jobguard by URL as
`make cluster` does) and runs the background audit; the other does neither until the leader
stops. A configuration reload that widens the policy reaches the API server's scope within
seconds."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import ssl
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from jobguard.app import certs as certificates
from tests.controlplane import ControlPlane, Jobguard, create_namespace, free_port, wait_until
from tests.realapi.kube import (
    QUEUE_LABEL,
    metric_samples,
    queued_create_is_judged,
)

LEASE_NAMESPACE = "jobguard-system"


def config(prefixes: list[str]) -> dict[str, Any]:
    return {
        "kubernetesVersion": "auto",
        "exemptions": {"namespaces": ["kube-system", "kueue-system"]},
        "suspendPolicies": [
            {
                "name": "queued",
                "match": {
                    "namespaces": [f"{p}-*" for p in prefixes],
                    "labelSelector": {
                        "matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]
                    },
                },
                "forceSuspendOnCreate": True,
                "controllers": {"serviceAccounts": ["kueue-system:kueue-controller-manager"]},
            }
        ],
    }


def audits(guard: Jobguard) -> float:
    context = ssl.create_default_context(cafile=str(guard.ca))
    text = httpx.get(f"{guard.url}/metrics", verify=context, timeout=10).text
    return sum(
        value
        for labels, value in metric_samples(text, "jobguard_audit_runs_total")
        if labels.get("result") == "success"
    )


def holder(admin: httpx.Client, name: str) -> str:
    lease = admin.get(f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{name}")
    return str(lease.json().get("spec", {}).get("holderIdentity", "")) if lease.is_success else ""


def test_one_leader_registers_and_audits_and_a_reload_widens_the_scope(
    plane: ControlPlane, admin: httpx.Client, tmp_path: Path
) -> None:
    tag = secrets.token_hex(2)
    first, second = f"ha{tag}-a", f"ha{tag}-b"
    name = f"jobguard-ha{tag}"
    create_namespace(admin, LEASE_NAMESPACE)
    for prefix in (first, second):
        create_namespace(admin, f"{prefix}-team")
    replicas = [
        Jobguard(tmp_path / r, kubeconfig=plane.kubeconfig, env={"POD_NAME": r})
        for r in ("replica-0", "replica-1")
    ]
    # One certificate for both, as the chart's Secret gives them; the registrations reach
    # replica-0 by URL (the API server's choice among replicas is the Service's, out of scope).
    replicas[0].port = free_port()
    shared = tmp_path / "replica-0" / "certs"
    certificates.generate("jobguard", "jobguard", shared, days=30, dev=True)
    for replica in replicas[1:]:
        (replica.directory / "certs").mkdir(parents=True)
        for file in ("ca.crt", "tls.crt", "tls.key"):
            (replica.directory / "certs" / file).write_bytes((shared / file).read_bytes())
    args = (
        f"--register-webhooks={LEASE_NAMESPACE}/{name}",
        f"--webhook-url=https://127.0.0.1:{replicas[0].port}",
        f"--webhook-name={name}",
        f"--webhook-domain=ha{tag}.jobguard.io",
        "--audit-interval=0.05",  # minutes: every 3 s
    )
    with contextlib.ExitStack() as stack:
        for replica in replicas:
            stack.callback(replica.stop)
            replica.start(config([first]), args)
        stack.callback(
            lambda: [
                admin.delete(f"/apis/admissionregistration.k8s.io/v1/{kind}/{name}")
                for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
            ]
        )
        lease = f"{name}-leader"
        leader_name = wait_until(lambda: holder(admin, lease), 60, "a leader")
        leader = replicas[0] if leader_name == "replica-0" else replicas[1]
        follower = replicas[1] if leader is replicas[0] else replicas[0]
        # The leader's registrations are in effect: a queued running create is held.
        wait_until(queued_create_is_judged(plane, f"{first}-team"), 60, "the registrations")
        wait_until(lambda: audits(leader) >= 2, 30, "the leader's audits")
        assert audits(follower) == 0

        # A reload that widens the policy: the API server's scope follows.
        widened = config([first, second])
        started = time.monotonic()
        for replica in replicas:
            replica.config.write_text(yaml.safe_dump(widened, sort_keys=False))
            assert replica.process is not None
            os.kill(replica.process.popen.pid, signal.SIGHUP)
        wait_until(queued_create_is_judged(plane, f"{second}-team"), 60, "the widened scope")
        delay = time.monotonic() - started
        print(f"reload to scope: {delay:.1f} s")
        assert delay < 30

        # The leader stops: the other takes the Lease, registers and audits.
        leader.stop()
        wait_until(lambda: holder(admin, lease) == follower.env["POD_NAME"], 60, "a new leader")
        wait_until(lambda: audits(follower) >= 1, 30, "the new leader's audit")
