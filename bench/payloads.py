"""What the benchmarks send: Jobs, CronJobs and AdmissionReview bodies, built on the tests'
canonical builders (tests.builders, tests.reviews) so that bench and tests speak of the same
objects. Run the benchmarks as modules from the repository root (`python -m bench.NAME`)."""

from __future__ import annotations

import random
from typing import Any

import orjson

from tests.builders import cronjob, generated_labels, job, manifest
from tests.reviews import review

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def kueue_job(
    name: str, uid: str, pod_spec: dict[str, Any], *, suspend: bool, **spec: Any
) -> dict[str, Any]:
    """A stored Job in namespace team-a with a queue label on the Job and its pod template."""
    obj = job(name, uid=uid, namespace="team-a", suspend=suspend, **spec)
    labels = {**generated_labels(name, uid), QUEUE_LABEL: "team-a"}
    obj["metadata"]["labels"] = labels
    obj["spec"]["template"] = {"metadata": {"labels": dict(labels)}, "spec": pod_spec}
    return obj


def review_bytes(
    new: Any, old: Any, operation: str = "UPDATE", sub: str = "", user: str = "u"
) -> bytes:
    """An AdmissionReview body for jobs (`sub`: the subresource, "" or "status")."""
    return orjson.dumps(review(new, old, operation, sub=sub, user=user))


def _pod(rng: random.Random, restart: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": f"registry.example/app:{rng.randint(1, 9)}",
                "command": ["sh", "-c", "echo $JOB_COMPLETION_INDEX && sleep 5"],
                "env": [{"name": "MODE", "value": "batch"}],
                "resources": {
                    "requests": {"cpu": "500m", "memory": "256Mi"},
                    "limits": {"memory": "512Mi"},
                },
            }
        ],
    }
    if restart:
        spec["restartPolicy"] = rng.choice(["Never", "OnFailure"])
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"pool": "batch"}
        spec["tolerations"] = [{"key": "batch", "operator": "Exists", "effect": "NoSchedule"}]
    return {"metadata": {"labels": {"app": "bench"}}, "spec": spec}


def _indexes(rng: random.Random, completions: int, long: bool) -> str:
    if not long:
        return f"0-{completions // 2}"
    # A long, valid interval list: every other index (thousands of fragments).
    return ",".join(str(i) for i in range(0, completions, 2))


def random_manifest(rng: random.Random, i: int) -> dict[str, Any]:
    """A Job manifest as people write them; about 15% are invalid."""
    kind = rng.random()
    spec: dict[str, Any] = {"template": _pod(rng)}
    if kind < 0.4:
        completions = rng.choice([4, 16, 64])
        spec.update(completionMode="Indexed", completions=completions, parallelism=completions)
        spec["successPolicy"] = {
            "rules": [{"succeededIndexes": _indexes(rng, completions, False), "succeededCount": 1}]
        }
    elif kind < 0.42:
        completions = 4000
        spec.update(completionMode="Indexed", completions=completions, parallelism=100)
        spec["successPolicy"] = {"rules": [{"succeededIndexes": _indexes(rng, completions, True)}]}
    elif kind < 0.6:
        spec.update(suspend=True, parallelism=3, completions=3)
    else:
        spec.update(backoffLimit=3, activeDeadlineSeconds=600)
    doc = manifest(f"job-{i}", **spec)
    doc["metadata"].update(namespace="team-a", labels={QUEUE_LABEL: "q"})
    if rng.random() < 0.15:  # invalid: a broken success policy or no restartPolicy
        if "successPolicy" in doc["spec"]:
            doc["spec"]["successPolicy"]["rules"][0]["succeededIndexes"] = "3,1"
        else:
            doc["spec"]["template"] = _pod(rng, restart=False)
    return doc


def random_cronjob(rng: random.Random, i: int) -> dict[str, Any]:
    """A stored CronJob whose jobTemplate has a random pod template."""
    return cronjob(f"cron-{i}", namespace="team-a", backoffLimit=2, template=_pod(rng))
