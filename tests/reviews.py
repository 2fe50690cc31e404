"""AdmissionReview bodies for tests."""

from __future__ import annotations

from typing import Any

GVR = {"jobs": ("batch", "v1", "Job"), "cronjobs": ("batch", "v1", "CronJob")}


def _namespace(obj: Any, old: Any) -> str:
    for candidate in (obj, old):
        if isinstance(candidate, dict) and isinstance(candidate.get("metadata"), dict):
            namespace = candidate["metadata"].get("namespace")
            if isinstance(namespace, str) and namespace:
                return namespace
    return "default"


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
        "namespace": _namespace(obj, old),
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
