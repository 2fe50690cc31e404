"""The suspend-policy invariant (README "The guarantee, as an invariant"), judged by the real API
server with the real cronjob-controller: no Job the Kueue policy matches ever exists unsuspended
unless a controller of the policy (or an administrator) created it, whatever `/mutate` does:
answers, is absent, is slower than its timeoutSeconds, refuses connections, or answers 503 from
jobguard's memory budget. And no request outside the policy's scope reaches its registration
that fails closed (the API server's own webhook metrics count what it sent).

The five set-ups run side by side, each with its own jobguard, namespaces and webhook names, so
one minute boundary fires all their CronJobs.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from jobguard.validators.registrations import RegistrationOptions
from tests.controlplane import (
    CRONJOB_CONTROLLER,
    ControlPlane,
    Jobguard,
    create_namespace,
    register,
    registrations,
    unregister,
    wait_until,
)
from tests.realapi.faults import refusing_url, slow_webhook
from tests.realapi.kube import (
    CRONJOBS,
    JOBS,
    QUEUE_LABEL,
    job_manifest,
    message,
    metric_samples,
    queued_create_is_judged,
)
from tests.test_examples import EXAMPLES

KUEUE: dict[str, Any] = yaml.safe_load((EXAMPLES / "config" / "kueue.yaml").read_text())
TIMEOUT_SECONDS = 2  # the registrations' timeoutSeconds; the slow /mutate takes twice as long
MUTATE_FAULTS = ("answers", "absent", "slow", "refusing", "busy")


def scoped(prefix: str) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(yaml.safe_dump(KUEUE))
    config["suspendPolicies"][0]["match"]["namespaces"] = [f"{prefix}-*"]
    return config


@dataclass
class SetUp:
    fault: str
    namespace: str
    domain: str
    guards: list[Jobguard] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)


def webhook_calls(admin: httpx.Client, webhook: str) -> float:
    """How many requests the API server has sent to one webhook (by name), whatever the answer."""
    text = admin.get("/metrics").text
    return sum(
        value
        for labels, value in metric_samples(
            text, "apiserver_admission_webhook_admission_duration_seconds_count"
        )
        if labels.get("name") == webhook
    )


@contextlib.contextmanager
def set_up(plane: ControlPlane, directory: Path, fault: str) -> Iterator[SetUp]:
    prefix = f"inv-{fault}"
    setup = SetUp(fault, f"{prefix}-{secrets.token_hex(2)}", f"{fault}.jobguard.io")
    config = scoped(prefix)
    with contextlib.ExitStack() as stack:
        admin = stack.enter_context(plane.http())
        guard = Jobguard(directory / fault, kubeconfig=plane.kubeconfig)
        setup.guards.append(guard)
        stack.callback(guard.stop)
        guard.start(config)
        options = RegistrationOptions(
            name=f"jobguard-{fault}", domain=setup.domain, timeout_seconds=TIMEOUT_SECONDS
        )
        objects = registrations(config, guard.url, guard.ca.read_bytes(), options, plane.release())
        mutate_url: str | None = None
        if fault == "slow":
            certs = guard.directory / "certs"
            mutate_url = stack.enter_context(
                slow_webhook(certs / "tls.crt", certs / "tls.key", 2 * TIMEOUT_SECONDS)
            )
        elif fault == "refusing":
            mutate_url = refusing_url()
        elif fault == "busy":
            # A real jobguard whose memory budget admits no body: it answers 503.
            busy = Jobguard(directory / "busy", port=0)
            busy.directory.mkdir(parents=True, exist_ok=True)
            busy_certs = busy.directory / "certs"
            busy_certs.mkdir(exist_ok=True)
            for name in ("ca.crt", "tls.crt", "tls.key"):
                (busy_certs / name).write_bytes((guard.directory / "certs" / name).read_bytes())
            setup.guards.append(busy)
            stack.callback(busy.stop)
            busy.start(config, ("--memory-budget-bytes", "1"))
            mutate_url = busy.url
        kept = []
        for obj in objects:
            if obj["kind"] == "MutatingWebhookConfiguration":
                if fault == "absent":
                    continue
                if mutate_url is not None:
                    for webhook in obj["webhooks"]:
                        webhook["clientConfig"]["url"] = f"{mutate_url}/mutate"
            kept.append(obj)
        setup.objects = kept
        create_namespace(admin, setup.namespace)
        register(admin, kept)
        stack.callback(unregister, admin, kept)
        judged = queued_create_is_judged(plane, setup.namespace, guard.url, str(guard.ca))
        wait_until(judged, 30, f"{fault} in effect")
        yield setup


def cronjob_manifest(name: str) -> dict[str, Any]:
    job = job_manifest(name, queue="user-queue")
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"metadata": job["metadata"], "spec": job["spec"]},
        },
    }


def queued_running(jobs: list[dict[str, Any]]) -> list[str]:
    return [
        j["metadata"]["name"]
        for j in jobs
        if (j["metadata"].get("labels") or {}).get(QUEUE_LABEL) and not j["spec"].get("suspend")
    ]


def test_no_matched_job_runs_past_the_queue_whatever_mutate_does(
    plane: ControlPlane, tmp_path: Path
) -> None:
    with contextlib.ExitStack() as stack:
        setups = [stack.enter_context(set_up(plane, tmp_path, f)) for f in MUTATE_FAULTS]
        with plane.http("alice") as alice, plane.http("kueue") as kueue:
            for s in setups:
                jobs = JOBS.format(namespace=s.namespace)
                made = alice.post(
                    CRONJOBS.format(namespace=s.namespace), json=cronjob_manifest("cron")
                )
                assert made.status_code == 201, made.text
                # A user's running queued Job: suspended by /mutate, or refused (SUS-001).
                mine = alice.post(jobs, json=job_manifest("by-alice", queue="q", suspend=False))
                if s.fault == "answers":
                    assert mine.status_code == 201 and mine.json()["spec"]["suspend"] is True
                else:
                    assert mine.status_code == 403, mine.text
                    assert "SUS-001 spec.suspend: Forbidden" in message(mine)
                # The queue controller may create it running.
                theirs = kueue.post(jobs, json=job_manifest("by-kueue", queue="q", suspend=False))
                assert theirs.status_code == 201, theirs.text

        def fired(s: SetUp) -> bool:
            with plane.http() as admin:
                if s.fault == "answers":
                    listed = admin.get(JOBS.format(namespace=s.namespace)).json()["items"]
                    return any(
                        (j["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "CronJob"
                        for j in listed
                    )
                events = admin.get(f"/api/v1/namespaces/{s.namespace}/events").json()["items"]
                return any(
                    e["involvedObject"]["kind"] == "CronJob"
                    and e["reason"] == "FailedCreate"
                    and "SUS-008" in e["message"]
                    for e in events
                )

        for s in setups:
            wait_until(partial(fired, s), 100, f"the CronJob's run with /mutate {s.fault}")

        with plane.http() as admin:
            for s in setups:
                listed = admin.get(JOBS.format(namespace=s.namespace)).json()["items"]
                assert queued_running(listed) == ["by-kueue"], (s.fault, queued_running(listed))
                by_cron = [
                    j
                    for j in listed
                    if (j["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "CronJob"
                ]
                if s.fault == "answers":
                    assert by_cron and all(j["spec"]["suspend"] is True for j in by_cron)
                else:
                    assert by_cron == []
                    events = admin.get(f"/api/v1/namespaces/{s.namespace}/events").json()
                    failed = [
                        e["message"]
                        for e in events["items"]
                        if e["reason"] == "FailedCreate" and "SUS-008" in e["message"]
                    ]
                    assert CRONJOB_CONTROLLER in failed[0]


@pytest.fixture
def answering(plane: ControlPlane, tmp_path: Path) -> Iterator[SetUp]:
    with set_up(plane, tmp_path, "answers") as setup:
        yield setup


def test_requests_outside_the_scope_never_reach_the_registration_that_fails_closed(
    plane: ControlPlane, admin: httpx.Client, answering: SetUp
) -> None:
    webhook = f"queued.jobs.{answering.domain}"
    jobs = JOBS.format(namespace=answering.namespace)
    outside = f"elsewhere-{secrets.token_hex(2)}"
    create_namespace(admin, outside)
    before = webhook_calls(admin, webhook)
    with plane.http("alice") as alice, plane.http("kueue") as kueue:
        # No queue label; a queued Job in a namespace the policy does not name; the queue
        # controller's own writes; an administrator's.
        assert alice.post(jobs, json=job_manifest("plain")).status_code == 201
        other = JOBS.format(namespace=outside)
        assert (
            alice.post(other, json=job_manifest("q", queue="q", suspend=False)).status_code == 201
        )
        assert kueue.post(jobs, json=job_manifest("k", queue="q", suspend=False)).status_code == 201
        assert admin.post(jobs, json=job_manifest("a", queue="q", suspend=True)).status_code == 201
        patch = {"spec": {"suspend": True}}
        response = kueue.patch(
            f"{jobs}/k", json=patch, headers={"Content-Type": "application/merge-patch+json"}
        )
        assert response.status_code == 200, response.text
        assert webhook_calls(admin, webhook) == before
        # In scope: a user's queued Job is sent (and the metric does count).
        assert alice.post(jobs, json=job_manifest("in", queue="q")).status_code == 201
    assert webhook_calls(admin, webhook) == before + 1
