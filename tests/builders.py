"""The canonical test helpers: one builder or judge per concept.

Objects:
- `job()`: a Job as the API server stores it (defaulted, generated uid labels and selector);
  `with_status()` and `cond()` add status. `generated_labels()` are the labels it generates.
- `manifest()`: a Job as a person writes it (no uid, selector, generated labels or defaults).
- `cronjob()`: a CronJob as the API server stores it (no Job defaults on its jobTemplate).
- AdmissionReview bodies: `tests.reviews.review()`; a server on loopback: `tests.servers`.
- `jobguard` run in-process: `tests.commands.run()`, its manifest files `write_manifests()`.
- Files under tests/data: `tests.cases` (the replayable cases of cases.yaml, `read_object()`,
  `read_update()`, `read_review()`), `tests.corpus` (the real-world manifests); the
  index-interval grammar rows: `tests.grammar`.

Judging through the library (`jobguard.validators.evaluate`):
- `settings()`/`enable()` build Settings; `create()`, `update()` and `status_update()` judge.
- `causes()`, `detailed_causes()` (with the message bodies) and `messages()` read a Verdict;
  `clean()` says it was judged, allowed and no rule fired at any enforcement (warn and dryrun
  included).
"""

from __future__ import annotations

import copy
from typing import Any

from jobguard.validators import Operation, Request, Requester, Settings, Verdict, evaluate
from jobguard.validators.catalog import Enforcement
from jobguard.validators.settings import RuleOverride

UID = "8a7a1f3c-0000-4000-8000-000000000001"
START = "2026-01-01T10:00:00Z"
LATER = "2026-01-01T11:00:00Z"


def generated_labels(name: str, uid: str = UID) -> dict[str, str]:
    """The pod template labels the API server generates for a Job (legacy and prefixed)."""
    return {
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
        "job-name": name,
        "batch.kubernetes.io/job-name": name,
    }


def job(
    name: str = "pi", uid: str = UID, namespace: str = "default", **spec: Any
) -> dict[str, Any]:
    """A defaulted Job with the generated uid, labels and selector, as the server stores it."""
    labels = generated_labels(name, uid)
    base: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "creationTimestamp": "2026-01-01T09:00:00Z",
        },
        "spec": {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
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


def manifest(name: str = "x", **spec: Any) -> dict[str, Any]:
    """A Job as written by a person: no uid, no selector, no generated labels, no defaults."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
            },
            **spec,
        },
    }


def cronjob(
    name: str = "nightly", namespace: str = "default", **template_spec: Any
) -> dict[str, Any]:
    """A CronJob as the API server stores it: CronJob and pod defaults, no Job defaults.

    Keyword arguments are fields of `spec.jobTemplate.spec` (`template` replaces the pod
    template).
    """
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"app": "nightly"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox"}],
            },
        },
    }
    spec.update(template_spec)
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": namespace, "uid": "c0ffee00-0000-4000-8000-1"},
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Allow",
            "suspend": False,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {"metadata": {}, "spec": spec},
        },
    }


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


def detailed_causes(verdict: Verdict) -> list[tuple[str, str, str, str]]:
    """(rule, field path, cause reason, message body) of every unique violation, in order."""
    assert verdict.decode_error is None, verdict.decode_error
    return [
        (v.error.rule, v.error.path, v.error.type.reason, v.error.body()) for v in verdict.unique()
    ]


def messages(verdict: Verdict) -> list[str]:
    return [v.error.message() for v in verdict.unique()]


def clean(verdict: Verdict) -> bool:
    """Judged, allowed, and no rule fired at any enforcement (warn and dryrun included)."""
    return verdict.judged and verdict.allowed and verdict.violations == []
