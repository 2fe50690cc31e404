"""Builders for Jobs as the API server stores them, and helpers to judge requests."""

from __future__ import annotations

import copy
from typing import Any

from jobguard.validators import Operation, Request, Requester, Settings, Verdict, evaluate
from jobguard.validators.catalog import Enforcement
from jobguard.validators.settings import RuleOverride

UID = "8a7a1f3c-0000-4000-8000-000000000001"
START = "2026-01-01T10:00:00Z"
LATER = "2026-01-01T11:00:00Z"


def job(name: str = "pi", **spec: Any) -> dict[str, Any]:
    """A defaulted Job with the generated uid, labels and selector, as the server stores it."""
    labels = {
        "controller-uid": UID,
        "batch.kubernetes.io/controller-uid": UID,
        "job-name": name,
        "batch.kubernetes.io/job-name": name,
    }
    base: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": UID,
            "creationTimestamp": "2026-01-01T09:00:00Z",
        },
        "spec": {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "100m"}},
                        }
                    ],
                },
            },
        },
        "status": {},
    }
    base["spec"].update(spec)
    return base


def with_status(obj: dict[str, Any], **status: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["status"] = {**out.get("status", {}), **status}
    return out


def cond(type_: str, status: str = "True") -> dict[str, str]:
    return {"type": type_, "status": status}


def settings(version: str = "1.35", **rules: RuleOverride) -> Settings:
    from jobguard.validators import Semantics

    return Settings(
        semantics=Semantics.for_version(version),
        overrides=tuple((k.replace("_", "-"), v) for k, v in rules.items()),
    )


def enable(
    *rule_ids: str, version: str = "1.35", enforcement: Enforcement | None = None, **params: Any
) -> Settings:
    from jobguard.validators import Semantics

    return Settings(
        semantics=Semantics.for_version(version),
        overrides=tuple((r, RuleOverride(True, enforcement, params)) for r in rule_ids),
    )


def create(
    obj: dict[str, Any], s: Settings | None = None, kind: str = "Job", user: str = "alice"
) -> Verdict:
    return evaluate(
        Request(kind, Operation.CREATE, obj, requester=Requester(user)), s or Settings()
    )


def update(
    new: dict[str, Any],
    old: dict[str, Any],
    s: Settings | None = None,
    kind: str = "Job",
    user: str = "alice",
) -> Verdict:
    return evaluate(
        Request(kind, Operation.UPDATE, new, old, requester=Requester(user)), s or Settings()
    )


def status_update(new: dict[str, Any], old: dict[str, Any], s: Settings | None = None) -> Verdict:
    return evaluate(
        Request(
            "Job",
            Operation.UPDATE,
            new,
            old,
            subresource="status",
            requester=Requester("system:serviceaccount:kube-system:job-controller"),
        ),
        s or Settings(),
    )


def causes(verdict: Verdict) -> list[tuple[str, str, str]]:
    """(rule, field path, cause reason) of every unique violation, in order."""
    assert verdict.decode_error is None, verdict.decode_error
    return [(v.error.rule, v.error.path, v.error.type.reason) for v in verdict.unique()]


def messages(verdict: Verdict) -> list[str]:
    return [v.error.message() for v in verdict.unique()]
