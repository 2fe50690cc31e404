"""AdmissionReview bodies for tests."""

from __future__ import annotations

from typing import Any

GVR = {"jobs": ("batch", "v1", "Job"), "cronjobs": ("batch", "v1", "CronJob")}


def review(
    obj: Any,
    old: Any = None,
    operation: str = "CREATE",
    resource: str = "jobs",
    sub: str = "",
    uid: str = "uid-1",
    version: str = "v1",
    user: str = "alice",
) -> dict[str, Any]:
    group, ver, kind = GVR.get(resource, ("apps", "v1", "Deployment"))
    request: dict[str, Any] = {
        "uid": uid,
        "kind": {"group": group, "version": ver, "kind": kind},
        "resource": {"group": group, "version": ver, "resource": resource},
        "requestKind": {"group": group, "version": ver, "kind": kind},
        "requestResource": {"group": group, "version": ver, "resource": resource},
        "name": "pi",
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": user, "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }
    if sub:
        request["subResource"] = sub
        request["requestSubResource"] = sub
    return {
        "apiVersion": f"admission.k8s.io/{version}",
        "kind": "AdmissionReview",
        "request": request,
    }
