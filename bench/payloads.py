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


# --- realistic manifests, as people write them (text, not dumped) -------------------------------

_REALISTIC_JOB = """\
# training run {i}: {about}
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: ml-team
  labels:
    app.kubernetes.io/name: trainer
    app.kubernetes.io/part-of: "pipeline"
    kueue.x-k8s.io/queue-name: team-a
  annotations:
    owner: "data-platform"
    description: "nightly training, shard {i}"
spec:
{spec}  ttlSecondsAfterFinished: 3600
  template:
    metadata:
      labels:
        app.kubernetes.io/name: trainer
    spec:
{restart}      containers:
        - name: trainer
{image}          imagePullPolicy: IfNotPresent
          command: ["python", "-m", "train"]
          args: ["--epochs", "{epochs}", "--batch-size", "256", "--lr", "0.001"]
          env:
            - name: WORLD_SIZE
              value: "{completions}"
            - name: NCCL_DEBUG
              value: "INFO"
            - name: USE_GPU
              value: "true"
            - name: RETRIES
              value: '3'
          ports:
            - containerPort: 29500
              name: dist
          resources:
            requests:
              cpu: "{cpu}"
              memory: 4Gi
              nvidia.com/gpu: "1"
            limits:
              cpu: "{cpu}"
              memory: "8Gi"
              nvidia.com/gpu: "1"
          volumeMounts:
            - name: data
              mountPath: /data
              readOnly: true
            - name: scratch
              mountPath: /scratch
      volumes:
        - name: data
          persistentVolumeClaim:
            claimName: training-data
        - name: scratch
          emptyDir:
            sizeLimit: "10Gi"
      nodeSelector:
        node.kubernetes.io/instance-type: "g5.xlarge"
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
"""

_REALISTIC_CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: {name}
  namespace: ml-team
  labels:
    app.kubernetes.io/name: reports
spec:
  schedule: "{schedule}"
  timeZone: "Europe/Berlin"
  concurrencyPolicy: {policy}
  startingDeadlineSeconds: 300
  successfulJobsHistoryLimit: 3
  failedJobsHistoryLimit: 1
  jobTemplate:
    spec:
      backoffLimit: 2
      activeDeadlineSeconds: 1800
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: report
              image: "registry.example.com/reports:2.0.1"
              args: ["--since", "24h", "--limit", "{limit}"]
              env:
                - name: DRY_RUN
                  value: "false"
              resources:
                requests: {{cpu: "500m", memory: "256Mi"}}
                limits: {{cpu: "1", memory: "512Mi"}}
"""


def realistic_document(rng: random.Random, i: int) -> str:
    """One Job or CronJob as a person writes it: quoted numbers and strings, comments, flow
    lists; 60% Indexed Jobs with a successPolicy, 20% plain Jobs, 20% CronJobs; about a fifth
    of them invalid (the API server, or jobguard's rules, would refuse them)."""
    roll = rng.random()
    broken = rng.random() < 0.2
    if roll >= 0.8:
        schedule, policy = "30 2 * * *", "Forbid"
        if broken:
            schedule, policy = rng.choice([("every day", "Forbid"), ("0 3 * * *", "Sometimes")])
        return _REALISTIC_CRONJOB.format(
            name=f"report-{i}", schedule=schedule, policy=policy, limit=rng.randint(10, 999)
        )
    completions = rng.choice([4, 8, 16, 32])
    if roll < 0.6:
        spec = (
            "  completionMode: Indexed\n"
            f"  completions: {completions}\n"
            f"  parallelism: {completions // 2}\n"
            "  backoffLimitPerIndex: 1\n"
            "  maxFailedIndexes: 2\n"
            "  successPolicy:\n"
            "    rules:\n"
            f'      - succeededIndexes: "0-{completions // 2 - 1}"\n'
            "        succeededCount: 2\n"
        )
        about = "Indexed, done when the first half succeeds"
    else:
        spec = f"  completions: {completions}\n  parallelism: 2\n  backoffLimit: 3\n"
        about = "plain"
    fields = {
        "i": i,
        "about": about,
        "name": f"train-{i}",
        "spec": spec,
        "restart": "      restartPolicy: Never\n",
        "image": '          image: "registry.example.com/ml/trainer:1.4.2"\n',
        "epochs": rng.choice([5, 10, 20]),
        "completions": completions,
        "cpu": rng.choice([1, 2, 4]),
    }
    if broken:
        defect = rng.randrange(5)
        if defect == 0:
            fields["name"] = f"Train-{i}"  # OM-001: not a DNS subdomain
        elif defect == 1:
            fields["image"] = ""  # POD: image required
        elif defect == 2:
            fields["restart"] = ""  # JS-005
        elif defect == 3:
            fields["spec"] = spec.replace(
                f"completions: {completions}", f'completions: "{completions}"'
            )
        else:
            fields["spec"] = spec.replace("succeededCount: 2", "succeededCount: 99")
    return _REALISTIC_JOB.format(**fields)
