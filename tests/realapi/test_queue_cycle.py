"""The queue cycle on the real control plane: a script acting as Kueue creates, admits (injects
placement and resumes), evicts, requeues and re-admits a Job; the real job controller creates its
pods and writes its status; pods are driven through the API as upstream's job integration tests
drive them (no kubelet runs). With the `full` profile (every rule registered, every ST and NE rule
on, the built-in controllers not exempt) none of the controllers' writes is ever denied.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import yaml

from jobguard.validators.registrations import Profile, RegistrationOptions
from tests.controlplane import KUEUE_SA, ControlPlane, wait_until
from tests.realapi.conftest import Registered
from tests.realapi.kube import (
    JOBS,
    PODS,
    get_job,
    job_manifest,
    jobguard_requests,
)
from tests.test_examples import EXAMPLES

MERGE = {"Content-Type": "application/merge-patch+json"}


def full_profile() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((EXAMPLES / "config" / "kueue.yaml").read_text())
    config["kubernetesVersion"] = "auto"
    config["exemptions"] = {"namespaces": ["kube-system", "kueue-system"], "builtIn": False}
    config["rules"] = {
        "NE-*": {"enabled": True},
        "ST-*": {"enabled": True},
        "NE-007": {"enabled": True, "params": {"users": [KUEUE_SA], "groups": []}},
    }
    return config


def pods_of(admin: httpx.Client, namespace: str, job: str) -> list[dict[str, Any]]:
    listed = admin.get(
        PODS.format(namespace=namespace), params={"labelSelector": f"job-name={job}"}
    ).json()["items"]
    return [p for p in listed if not p["metadata"].get("deletionTimestamp")]


def set_phase(admin: httpx.Client, namespace: str, pod: dict[str, Any], phase: str) -> None:
    """As a kubelet would report it (upstream's setJobPodsPhase / setJobPodsReady)."""
    ready = "True" if phase == "Running" else "False"
    status = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": None}],
    }
    name = pod["metadata"]["name"]
    response = admin.patch(
        f"{PODS.format(namespace=namespace)}/{name}/status",
        content=json.dumps({"status": status}),
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert response.status_code == 200, response.text


def condition(job: dict[str, Any], kind: str) -> str | None:
    for c in job.get("status", {}).get("conditions") or []:
        if c["type"] == kind:
            return str(c["status"])
    return None


def test_queue_cycle_with_the_full_profile(
    plane: ControlPlane,
    admin: httpx.Client,
    jobguard: Registered,
    namespace: Callable[[str], str],
) -> None:
    ns = namespace("team")
    jobguard.start(
        full_profile(),
        options=RegistrationOptions(profile=Profile.FULL),
        canary=ns,
    )
    jobs = JOBS.format(namespace=ns)
    with plane.http("alice") as alice, plane.http("kueue") as kueue:
        created = alice.post(
            jobs, json=job_manifest("train", queue="q", parallelism=2, completions=2)
        )
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["suspend"] is True  # held for the queue by /mutate

        def admit(pool: str) -> None:
            patch = {
                "spec": {
                    "suspend": False,
                    "template": {"spec": {"nodeSelector": {"pool": pool}}},
                }
            }
            response = kueue.patch(f"{jobs}/train", content=json.dumps(patch), headers=MERGE)
            assert response.status_code == 200, response.text

        admit("a")
        wait_until(lambda: len(pods_of(admin, ns, "train")) == 2, what="two pods")
        wait_until(lambda: get_job(admin, ns, "train")["status"].get("startTime"), what="startTime")

        # The pods never all get ready: Kueue evicts, clears startTime, re-places, re-admits.
        evict = {"spec": {"suspend": True}}
        response = kueue.patch(f"{jobs}/train", content=json.dumps(evict), headers=MERGE)
        assert response.status_code == 200, response.text
        wait_until(
            lambda: condition(get_job(admin, ns, "train"), "Suspended") == "True",
            what="Suspended=True from the job controller",
        )
        wait_until(lambda: not pods_of(admin, ns, "train"), what="pods removed on suspension")
        cleared = kueue.patch(
            f"{jobs}/train/status",
            content=json.dumps({"status": {"startTime": None}}),
            headers=MERGE,
        )
        assert cleared.status_code == 200, cleared.text
        admit("b")

        pods = wait_until(
            lambda: len(pods_of(admin, ns, "train")) == 2 and pods_of(admin, ns, "train")
        )
        assert {p["spec"]["nodeSelector"]["pool"] for p in pods} == {"b"}
        for pod in pods:
            set_phase(admin, ns, pod, "Running")
        wait_until(lambda: get_job(admin, ns, "train")["status"].get("ready") == 2, what="ready 2")
        for pod in pods:
            set_phase(admin, ns, pod, "Succeeded")
        done = wait_until(
            lambda: condition(job := get_job(admin, ns, "train"), "Complete") == "True" and job,
            what="Complete",
        )
    assert done["status"]["succeeded"] == 2
    assert condition(done, "SuccessCriteriaMet") == "True"
    assert condition(done, "Suspended") == "False"

    counts = jobguard_requests(jobguard.guard.url, str(jobguard.guard.ca))
    denied = {k: v for k, v in counts.items() if k[-1] != "allowed" and v}
    assert denied == {}
    status_writes = sum(
        v for k, v in counts.items() if k[2] == "jobs" and k[3] == "status" and k[-1] == "allowed"
    )
    # The job controller's status writes (startTime, active, ready, Suspended, succeeded,
    # Complete) and Kueue's one reached jobguard and were allowed.
    assert status_writes >= 6
