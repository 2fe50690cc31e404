"""The exported ValidatingAdmissionPolicies against the webhook, on the real API server: the same
requests (creates and updates by users, the queue controller and an administrator, in and out of
the policy's scope) are sent once with jobguard's validating webhook registered (no `/mutate`:
the exported policies have none either) and once with only the exported policies installed; the
verdicts, and the rule a denial names, must be the same."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from jobguard.app.config import parse_config
from jobguard.validators import export_vap
from tests.controlplane import (
    ControlPlane,
    Jobguard,
    apply,
    collection_path,
    register,
    registrations,
    unregister,
    wait_until,
)
from tests.realapi.kube import (
    JOBS,
    QUEUE_LABEL,
    job_manifest,
    message,
)
from tests.test_examples import EXAMPLES

MERGE = {"Content-Type": "application/merge-patch+json"}
RULES = ("SUS-001", "SUS-002", "SUS-003", "SUS-004", "SUS-005", "SUS-006", "SUS-008")


def policy_config(prefix: str) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((EXAMPLES / "config" / "kueue.yaml").read_text())
    config["kubernetesVersion"] = "auto"
    config["suspendPolicies"][0]["match"]["namespaces"] = [f"{prefix}-*"]
    return config


# (requester, what, how): each a create or an update of a Job that the requester or the queue
# controller created first.
Step = tuple[str, str, Callable[[httpx.Client, httpx.Client, str], httpx.Response]]


def create(name: str, **kwargs: Any) -> Callable[[httpx.Client, httpx.Client, str], httpx.Response]:
    def send(requester: httpx.Client, _queue: httpx.Client, ns: str) -> httpx.Response:
        return requester.post(JOBS.format(namespace=ns), json=job_manifest(name, **kwargs))

    return send


def update(
    name: str, patch: dict[str, Any], **created: Any
) -> Callable[[httpx.Client, httpx.Client, str], httpx.Response]:
    def send(requester: httpx.Client, queue: httpx.Client, ns: str) -> httpx.Response:
        made = queue.post(JOBS.format(namespace=ns), json=job_manifest(name, **created))
        assert made.status_code == 201, made.text
        return requester.patch(
            f"{JOBS.format(namespace=ns)}/{name}", content=json.dumps(patch), headers=MERGE
        )

    return send


STEPS: list[Step] = [
    ("alice", "creates a queued Job running", create("a1", queue="q", suspend=False)),
    ("alice", "creates a queued Job suspended", create("a2", queue="q", suspend=True)),
    ("alice", "creates a Job without a queue", create("a3", suspend=False)),
    ("alice", "creates a Job with an empty queue name", create("a4", queue="", suspend=False)),
    ("kueue", "creates a queued Job running", create("k1", queue="q", suspend=False)),
    ("admin", "creates a queued Job running", create("m1", queue="q", suspend=False)),
    ("alice", "resumes a queued Job", update("u1", {"spec": {"suspend": False}}, queue="q", suspend=True)),
    ("kueue", "resumes a queued Job", update("u2", {"spec": {"suspend": False}}, queue="q", suspend=True)),
    ("alice", "suspends a running queued Job", update("u3", {"spec": {"suspend": True}}, queue="q", suspend=False)),
    ("alice", "scales up a running queued Job", update("u4", {"spec": {"parallelism": 5}}, queue="q", suspend=False)),
    ("alice", "lowers parallelism of a running queued Job", update("u5", {"spec": {"parallelism": 1}}, queue="q", suspend=False, parallelism=3)),
    ("alice", "removes the queue label of a suspended Job", update("u6", {"metadata": {"labels": {QUEUE_LABEL: None}}}, queue="q", suspend=True)),
    ("alice", "changes the nodeSelector of a suspended Job", update("u7", {"spec": {"template": {"spec": {"nodeSelector": {"pool": "x"}}}}}, queue="q", suspend=True)),
    ("kueue", "changes the nodeSelector of a suspended Job", update("u8", {"spec": {"template": {"spec": {"nodeSelector": {"pool": "x"}}}}}, queue="q", suspend=True)),
]  # fmt: skip


def verdict(response: httpx.Response) -> str:
    if response.is_success:
        return "allowed"
    text = message(response)
    rules = [rule for rule in RULES if f"{rule}" in text]
    return f"denied {','.join(rules) or response.status_code}"


def run_steps(plane: ControlPlane, ns: str) -> dict[str, str]:
    seen: dict[str, str] = {}
    with plane.http("kueue") as queue:
        for user, what, send in STEPS:
            with plane.http(user) as requester:
                seen[f"{user} {what}"] = verdict(send(requester, queue, ns))
    return seen


def test_the_exported_policies_give_the_webhooks_verdicts(
    plane: ControlPlane, admin: httpx.Client, namespace: Callable[[str], str], tmp_path: Path
) -> None:
    new_namespace = namespace
    webhook_ns, vap_ns = namespace("vap"), namespace("vap")
    config = policy_config("vap")
    guard = Jobguard(tmp_path / "jobguard", kubeconfig=plane.kubeconfig)
    guard.start(config)
    objects = [
        o
        for o in registrations(config, guard.url, guard.ca.read_bytes(), release=plane.release())
        if o["kind"] == "ValidatingWebhookConfiguration"
    ]
    try:
        register(admin, objects)

        def judged() -> bool:
            with plane.http("alice") as alice:
                body = job_manifest("canary", queue="q", suspend=False)
                sent = alice.post(
                    JOBS.format(namespace=webhook_ns), params={"dryRun": "All"}, json=body
                )
            return sent.status_code == 403

        wait_until(judged, 30, "the webhook in effect")
        by_webhook = run_steps(plane, webhook_ns)
    finally:
        unregister(admin, objects)
        guard.stop()

    settings = parse_config(yaml.safe_dump(config)).to_settings(plane.release())
    exported = export_vap(settings).objects
    try:
        for obj in exported:
            apply(admin, obj)

        def enforced() -> bool:
            with plane.http("alice") as alice:
                body = job_manifest(f"canary-{secrets.token_hex(2)}", queue="q", suspend=False)
                sent = alice.post(
                    JOBS.format(namespace=vap_ns), params={"dryRun": "All"}, json=body
                )
            return sent.status_code == 403

        wait_until(enforced, 60, "the exported policies in effect")
        # Each policy and binding is loaded on its own: the table is sent again, in a fresh
        # namespace, until every policy answers (it never changes once they all do).
        deadline = time.monotonic() + 60
        while True:
            by_policy = run_steps(plane, vap_ns)
            if by_policy == by_webhook or time.monotonic() > deadline:
                break
            vap_ns = new_namespace("vap")
    finally:
        for obj in reversed(exported):
            admin.delete(f"{collection_path(obj)}/{obj['metadata']['name']}")

    assert by_policy == by_webhook
    # The table is not vacuous: both allow and deny, with several rules.
    denials = {v for v in by_webhook.values() if v.startswith("denied")}
    assert "allowed" in by_webhook.values()
    assert len(denials) >= 4, by_webhook
