"""Small helpers for requests to the real API server: manifests, identities, pods driven through
the API (no kubelet runs), metrics."""

from __future__ import annotations

import copy
import ssl
from collections.abc import Callable
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.controlplane import USERS, ControlPlane

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOBS = "/apis/batch/v1/namespaces/{namespace}/jobs"
CRONJOBS = "/apis/batch/v1/namespaces/{namespace}/cronjobs"
PODS = "/api/v1/namespaces/{namespace}/pods"


def job_manifest(
    name: str,
    queue: str | None = None,
    suspend: bool | None = None,
    parallelism: int | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Job as a user writes it (no uid, selector or defaults)."""
    metadata: dict[str, Any] = {"name": name}
    if queue is not None:
        metadata["labels"] = {QUEUE_LABEL: queue}
    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36"}],
                }
            },
            **spec,
        },
    }
    if suspend is not None:
        body["spec"]["suspend"] = suspend
    if parallelism is not None:
        body["spec"]["parallelism"] = parallelism
    return body


def identity(plane: ControlPlane, username: str, groups: list[str]) -> httpx.Client:
    """A client acting as any identity: a test user's own token, or the administrator
    impersonating the user and groups (the API server authorizes and admits as them)."""
    for user in USERS.values():
        if user.username == username:
            return plane.http(user.name)
    headers = [("Impersonate-User", username)]
    headers += [("Impersonate-Group", g) for g in groups if g != "system:authenticated"]
    return plane.http("admin", headers=tuple(headers))


def merge_patch(old: Any, new: Any) -> Any:
    """RFC 7386 merge patch turning old into new."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, Any] = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            patch[key] = merge_patch(old[key], value)
    return patch


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: `patch` applied to `target` (neither is changed)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def get_job(client: httpx.Client, namespace: str, name: str) -> dict[str, Any]:
    response = client.get(JOBS.format(namespace=namespace) + f"/{name}")
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


def metric_samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    samples: list[tuple[dict[str, str], float]] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                samples.append((dict(sample.labels), sample.value))
    return samples


def jobguard_requests(guard_url: str, ca: str) -> dict[tuple[str, ...], float]:
    """jobguard_requests_total by (endpoint, operation, resource, subresource, verdict)."""
    context = ssl.create_default_context(cafile=ca)
    text = httpx.get(f"{guard_url}/metrics", verify=context, timeout=10).text
    counts: dict[tuple[str, ...], float] = {}
    for labels, value in metric_samples(text, "jobguard_requests_total"):
        key = tuple(
            labels.get(k, "")
            for k in ("endpoint", "operation", "resource", "subresource", "verdict")
        )
        counts[key] = counts.get(key, 0) + value
    return counts


def message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("message", ""))
    except ValueError:
        return response.text


def queued_create_is_judged(
    plane: ControlPlane, namespace: str, guard_url: str = "", guard_ca: str = ""
) -> Callable[[], bool]:
    """A canary for a Kueue-like policy on `namespace`: a dry-run create of a queued, unsuspended
    Job by alice, answered differently once the registrations are in effect (suspended by
    /mutate, or refused by the validating webhook). The API server loads each webhook
    configuration object on its own, so with `guard_url` the canary also waits until that
    jobguard's /validate received the create (the validating configuration is in effect too)."""

    def validated() -> float:
        counts = jobguard_requests(guard_url, guard_ca)
        return sum(v for k, v in counts.items() if k[0] == "validate")

    def judged() -> bool:
        before = validated() if guard_url else 0.0
        with plane.http("alice") as alice:
            response = alice.post(
                JOBS.format(namespace=namespace),
                params={"dryRun": "All"},
                json=job_manifest("canary", queue="user-queue", suspend=False),
            )
        if response.status_code == 201:
            answered = bool(response.json()["spec"].get("suspend"))
        else:
            answered = response.status_code == 403
        return answered and (not guard_url or validated() > before)

    return judged
