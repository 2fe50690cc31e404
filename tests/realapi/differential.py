"""The real API server as the judge of jobguard's fidelity (tests/realapi/test_differential.py).

Every Job and CronJob manifest the repository holds, and a bounded, seeded stream of generated
Jobs (a valid manifest with one field changed), goes to the real kube-apiserver as a dry run
(`dryRun=All`, `fieldValidation=Strict` as kubectl sends it) and through `jobguard check`'s own
path (`examine`, `--kubernetes-version` of that server). An UPDATE case creates its stored object
for real (its `/status` too, for a status case), then sends its change as a dry-run PUT pinned to
the stored resourceVersion, and jobguard judges the same pair (`--old` the stored object).

The verdicts (accepted or refused) must agree, but for the disagreements listed in
tests/realapi/disagreements.yaml; where both refuse, differing field paths are counted. RECORD
keeps every outcome for the terminal summary (tests/realapi/conftest.py).
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from jobguard.app.cli.check import CheckOptions, DocumentResult, examine, pair_key
from jobguard.app.cli.manifests import parse, read_manifests
from jobguard.app.config import parse_config
from jobguard.validators import RULES_BY_ID, Enforcement, Settings
from jobguard.validators.versions import VersionChoice, choose_version
from tests.cases import load_cases, read_object
from tests.corpus import DATA, realworld_files
from tests.realapi.kube import CRONJOBS, JOBS, apply_merge_patch, merge_patch

REPO = Path(__file__).resolve().parents[2]
DISAGREEMENTS = Path(__file__).with_name("disagreements.yaml")
POD_TABLES = (
    "containers",
    "dns",
    "ephemeral",
    "projections",
    "resources",
    "scheduling",
    "security",
    "tolerations_annotation",
    "volume_sources",
    "volumes",
)
GENERATED = 240
"""Generated Jobs per run: with the corpus, a few hundred dry runs (well under a minute)."""
DRY_RUN = {"dryRun": "All", "fieldValidation": "Strict"}


# --- the corpus -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One request: a CREATE of `body`; with `old`, an UPDATE of the stored `old` into `body`
    (the change between the two files, applied to the object as stored); with `change`, an
    UPDATE of `body` as stored (created once per run) with one field set (removed for None)."""

    source: str
    id: str
    body: dict[str, Any]
    old: dict[str, Any] | None = None
    subresource: str = ""
    change: tuple[str, Any] | None = None


def _is_batch(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("apiVersion") == "batch/v1"
        and data.get("kind") in ("Job", "CronJob")
    )


def case_items() -> list[Item]:
    """tests/data/cases.yaml's `check` cases (the AdmissionReviews are `review` cases)."""
    items = []
    for case in load_cases():
        if case.command != "check":
            continue
        old = read_object(case.old) if case.old else None
        items.append(Item("cases", case.id, read_object(case.file), old, case.subresource))
    return items


def file_items(source: str, files: list[Path]) -> list[Item]:
    items = []
    for path in files:
        for manifest in read_manifests(str(path)):
            if _is_batch(manifest.data):
                items.append(Item(source, f"{path.name}#{manifest.position}", manifest.data))
    if not items:
        raise AssertionError(f"{source}: no Job or CronJob in {[str(f) for f in files]}")
    return items


def table_items() -> list[Item]:
    """The pod-rule tables (VALID and INVALID of tests/test_rules_pod_*.py): whole Jobs."""
    import importlib

    items = []
    for area in POD_TABLES:
        module = importlib.import_module(f"tests.test_rules_pod_{area}")
        for name, obj in getattr(module, "VALID", []):
            items.append(Item(f"pod-{area}", f"valid/{name}", obj))
        for name, obj, _ in module.INVALID:
            items.append(Item(f"pod-{area}", f"invalid/{name}", obj))
    return items


@functools.cache
def corpus() -> tuple[Item, ...]:
    """The repository's manifests (read once; the items are not changed)."""
    return (
        *case_items(),
        *file_items("check", sorted((DATA / "check").glob("*.yaml"))),
        *file_items("realworld", realworld_files()),
        *file_items("examples", sorted((REPO / "examples" / "manifests").glob("*.yaml"))),
        *table_items(),
    )


# --- the generated stream: a valid Job, one field changed --------------------------------------

# Fields a user may add to a Job, with the values worth trying there.
ADDED: dict[str, list[Any]] = {
    "spec.parallelism": [-1, 0, 5, 100001],
    "spec.completions": [-1, 0, 3],
    "spec.backoffLimit": [-1, 0, 2147483647],
    "spec.activeDeadlineSeconds": [-1, 0, 1],
    "spec.ttlSecondsAfterFinished": [-1, 0, 100],
    "spec.completionMode": ["Indexed", "NonIndexed", "indexed", ""],
    "spec.suspend": [True, False],
    "spec.backoffLimitPerIndex": [-1, 0, 1],
    "spec.maxFailedIndexes": [-1, 0, 1],
    "spec.podReplacementPolicy": ["Failed", "TerminatingOrFailed", "Always", ""],
    "spec.managedBy": ["kubernetes.io/job-controller", "example.com/q", "Bad", ""],
    "spec.manualSelector": [True, False],
    "metadata.name": ["", "a", "A", "a_b", "-a", "a." * 40, "x" * 63, "x" * 64],
    "metadata.generateName": ["gen-", "Gen-", "x" * 70],
    "metadata.labels": [{"a": "b"}, {"-a": "b"}, {"a": "b c"}, {"x" * 64: "v"}, {"a": "x" * 64}],
    "metadata.annotations": [{"a/b": "c"}, {"a/b/c": "d"}, {"": "x"}],
    "metadata.finalizers": [["example.com/f"], ["bad finalizer"], ["f"]],
    "metadata.ownerReferences": [
        [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": ""}],
        [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "1", "controller": True}],
    ],
    "spec.template.metadata.labels": [{"a": "b"}, {"a": "-"}],
    "spec.template.spec.restartPolicy": ["Always", "OnFailure", "Never", ""],
    "spec.template.spec.activeDeadlineSeconds": [0, 1, -5],
    "spec.template.spec.terminationGracePeriodSeconds": [-1, 0, 30],
    "spec.template.spec.hostname": ["ok", "Not_ok", "x" * 64],
    "spec.template.spec.subdomain": ["ok", "a.b", "x" * 64],
    "spec.template.spec.dnsPolicy": ["ClusterFirst", "None", "Default", "bad"],
    "spec.template.spec.nodeSelector": [{"a": "b"}, {"a b": "c"}],
    "spec.template.spec.priority": [0, -1],
    "spec.template.spec.serviceAccountName": ["default", "Bad_Name"],
    "spec.template.spec.schedulerName": ["default-scheduler", "Bad Name"],
    "spec.template.spec.tolerations": [
        [{"key": "a", "operator": "Exists"}],
        [{"key": "a", "operator": "Exists", "value": "b"}],
        [{"operator": "Equal", "value": "b"}],
    ],
    "spec.template.spec.containers[0].imagePullPolicy": ["Always", "Never", "sometimes"],
    "spec.template.spec.containers[0].image": ["", " busybox", "busybox"],
    "spec.template.spec.containers[0].name": ["", "Main", "x" * 64, "a-b"],
    "spec.template.spec.containers[0].ports": [
        [{"containerPort": 0}],
        [{"containerPort": 80, "protocol": "TCP"}],
        [{"containerPort": 80, "name": "Bad_Name"}],
        [{"containerPort": 70000}],
    ],
    "spec.template.spec.containers[0].env": [
        [{"name": "A", "value": "1"}],
        [{"name": "", "value": "1"}],
        [{"name": "1A=", "value": "1"}],
    ],
    "spec.template.spec.containers[0].resources": [
        {"limits": {"cpu": "1"}},
        {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
        {"limits": {"memory": "1Gi", "cpu": "-1"}},
        {"limits": {"example.com/gpu": "1"}},
        {"requests": {"example.com/gpu": "1"}},
    ],
    "spec.template.spec.containers[0].workingDir": ["/x", ""],
    "spec.template.spec.containers[0].securityContext": [
        {"runAsUser": -1},
        {"privileged": True},
        {"capabilities": {"add": ["NET_ADMIN"]}},
        {"allowPrivilegeEscalation": False, "privileged": True},
    ],
}

# What any field may become.
ANY_VALUE: list[Any] = [None, "", "x", -1, 0, 1, 2147483648, True, [], {}, "1"]


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            if key in ("apiVersion", "kind"):
                continue
            name = key if key.replace("-", "").replace("_", "").isalnum() else None
            if name is None:
                continue  # keys that need quoting in a path (labels with dots): left as they are
            yield from _leaves(child, f"{path}.{name}" if path else name)
    elif isinstance(value, list) and value:
        for index, child in enumerate(value):
            yield from _leaves(child, f"{path}[{index}]")
    else:
        yield path, value


def _tokens(path: str) -> list[str | int]:
    tokens: list[str | int] = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        tokens.append(name)
        if rest:
            tokens.append(int(rest.rstrip("]")))
    return tokens


def with_field(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `obj` with the field at `path` set to `value` (removed for None)."""
    result = copy.deepcopy(obj)
    tokens = _tokens(path)
    node: Any = result
    for token, following in itertools.pairwise(tokens):
        child = node[token] if isinstance(token, int) else node.get(token)
        if child is None:
            child = [] if isinstance(following, int) else {}
            node[token] = child
        node = child
    last = tokens[-1]
    if value is None:
        if isinstance(node, dict):
            node.pop(last, None)
        elif isinstance(last, int) and last < len(node):
            del node[last]
    else:
        node[last] = value
    return result


def _alternatives(value: Any) -> list[Any]:
    """Values of the same type worth trying in place of `value`."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value - 1, -1, 0, value + 1, 2147483647, 2147483648]
    if isinstance(value, str):
        return ["", value.upper(), value + "_", "-" + value, value * 5, "1", "a b"]
    return []


def bases() -> list[Item]:
    """The Jobs mutated: the examples' and the vendored realworld corpus' (files that seldom
    change: the draw, and so the list of known disagreements, stays put as the rule tables
    grow)."""
    return [
        item
        for item in corpus()
        if item.body.get("kind") == "Job" and item.source in ("examples", "realworld")
    ]


def generated_items(count: int = GENERATED) -> list[Item]:
    """`count` Jobs, each a valid base with one field added, removed or changed; the same ones
    on every run (hypothesis, derandomized; only its generation phase runs)."""
    base_items = bases()

    @st.composite
    def mutated(draw: st.DrawFn) -> Item:
        base = draw(st.sampled_from(base_items))
        # (The namespace is the test's own.)
        leaves = [(p, v) for p, v in _leaves(base.body) if p and p != "metadata.namespace"]
        if draw(st.booleans()):
            path = draw(st.sampled_from(sorted(ADDED)))
            value = draw(st.sampled_from(ADDED[path]))
        else:
            path, current = draw(st.sampled_from(leaves))
            value = draw(st.sampled_from(_alternatives(current) + ANY_VALUE))
        body = with_field(base.body, path, value)
        name = f"{base.source}/{base.id}:{path}={json.dumps(value)}"
        return Item("generated", name, body)

    return draw_unique(mutated(), count)


# Fields changed on a stored Job (its spec, metadata, or /status), with the values to try:
# the update-time rules (immutability, what a suspended Job may change, status invariants).
UPDATED: dict[str, list[Any]] = {
    "spec.parallelism": [0, 1, 3, 10],
    "spec.completions": [1, 3, 8, None],
    "spec.suspend": [True, False],
    "spec.activeDeadlineSeconds": [10, None],
    "spec.backoffLimit": [0, 10],
    "spec.backoffLimitPerIndex": [1, None],
    "spec.maxFailedIndexes": [1, None],
    "spec.ttlSecondsAfterFinished": [0, None],
    "spec.completionMode": ["Indexed", "NonIndexed"],
    "spec.podReplacementPolicy": ["Failed", "TerminatingOrFailed"],
    "spec.managedBy": ["example.com/queue", None],
    "spec.manualSelector": [True, None],
    "spec.selector": [None, {"matchLabels": {"a": "b"}}],
    "spec.successPolicy": [{"rules": [{"succeededCount": 1}]}, None],
    "spec.podFailurePolicy": [
        {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
        None,
    ],
    "spec.template.metadata.labels": [{"a": "b"}],
    # The labels the API server generated (validateGeneratedSelector).
    "spec.template.metadata.labels.job-name": [None, "other"],
    "spec.template.metadata.labels.controller-uid": [None, "other"],
    "spec.template.metadata.annotations": [{"a": "b"}],
    "spec.template.spec.nodeSelector": [{"zone": "a"}, None],
    "spec.template.spec.tolerations": [[{"key": "a", "operator": "Exists"}]],
    "spec.template.spec.affinity": [
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}
                    ]
                }
            }
        }
    ],
    "spec.template.spec.schedulingGates": [[{"name": "example.com/gate"}], None],
    "spec.template.spec.containers[0].image": ["busybox:1.37", ""],
    "spec.template.spec.containers[0].resources": [
        {"requests": {"cpu": "200m"}},
        {"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}},
        {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}},
    ],
    "spec.template.spec.containers[0].env": [[{"name": "A", "value": "1"}]],
    "spec.template.spec.activeDeadlineSeconds": [100],
    "spec.template.spec.priorityClassName": ["high"],
    "metadata.labels": [{"a": "b"}, {"-a": "b"}],
    "metadata.annotations": [{"a": "b"}],
    "metadata.finalizers": [["example.com/f"], ["bad finalizer"]],
    "metadata.generation": [100],
}
STATUS: dict[str, list[Any]] = {
    "status.active": [-1, 0, 5],
    "status.succeeded": [-1, 1, 100],
    "status.failed": [-1, 1],
    "status.ready": [-1, 3],
    "status.terminating": [-1, 1],
    "status.startTime": [None, "2026-01-01T00:00:00Z"],
    "status.completionTime": ["2026-01-01T00:00:00Z"],
    "status.conditions": [
        [{"type": t, "status": "True"}]
        for t in ("Complete", "Failed", "Suspended", "SuccessCriteriaMet", "FailureTarget")
    ],
    "status.completedIndexes": ["0", "0-100", "x"],
    "status.failedIndexes": ["0"],
    "status.uncountedTerminatedPods": [{"succeeded": ["a"]}, {"failed": ["a", "a"]}],
}
CRONJOB: dict[str, list[Any]] = {
    "spec.schedule": ["*/5 * * * *", "bad", "CRON_TZ=UTC * * * * *", "@hourly"],
    "spec.timeZone": ["UTC", "Mars/Olympus", None],
    "spec.suspend": [True, False],
    "spec.concurrencyPolicy": ["Forbid", "Sometimes"],
    "spec.startingDeadlineSeconds": [-1, 10],
    "spec.successfulJobsHistoryLimit": [-1, 3],
    "spec.jobTemplate.spec.parallelism": [2, -1],
    "spec.jobTemplate.spec.completionMode": ["Indexed"],
    "spec.jobTemplate.spec.template.spec.containers[0].image": ["", "busybox:1.37"],
    "spec.jobTemplate.spec.template.spec.restartPolicy": ["Always", "OnFailure"],
    "spec.jobTemplate.metadata.labels": [{"a": "b"}, {"a": "-"}],
}
UPDATE_BASES = (
    "examples/job.yaml#0",
    "realworld/kubernetes__website__content_en_examples_application_job_indexed-job.yaml#0",
    "realworld/kubernetes__website__content_en_examples_controllers_job-success-policy.yaml#0",
    "realworld/kubernetes__website__content_en_examples_controllers_job-pod-failure-policy-example.yaml#0",
    "realworld/kubernetes-sigs__descheduler__kubernetes_cronjob_cronjob.yaml#0",
    "examples/cronjob.yaml#0",
)
UPDATES = 160
"""Generated UPDATEs per run (of a few stored objects, each created once)."""


def update_items(count: int = UPDATES) -> list[Item]:
    """`count` UPDATEs of a stored Job (suspended or running) or CronJob, one field set: of its
    spec or metadata, or (for a Job) of its /status; the same ones on every run."""
    by_key = {f"{i.source}/{i.id}": i for i in corpus()}
    stored = [by_key[key] for key in UPDATE_BASES]

    @st.composite
    def changed(draw: st.DrawFn) -> Item:
        base = draw(st.sampled_from(stored))
        body = copy.deepcopy(base.body)
        subresource = ""
        if body["kind"] == "CronJob":
            table, state = CRONJOB, ""
        else:
            suspended = draw(st.booleans())
            body["spec"]["suspend"] = suspended
            state = "/suspended" if suspended else "/running"
            subresource = draw(st.sampled_from(["", "", "status"]))
            table = STATUS if subresource else UPDATED
        path = draw(st.sampled_from(sorted(table)))
        value = draw(st.sampled_from(table[path]))
        name = f"{base.source}/{base.id}{state}{'/status' if subresource else ''}:{path}="
        source = "generated-status" if subresource else "generated-update"
        return Item(source, name + json.dumps(value), body, None, subresource, (path, value))

    return draw_unique(changed(), count)


# Every in-tree volume source, each in a form the API server refuses (and a few it takes), set
# as the only volume of examples/manifests/job.yaml: one request each.
_IQN = "iqn.2001-04.com.example:storage"
VOLUMES: list[dict[str, Any]] = [
    {"hostPath": {"path": "/x", "type": "bad"}},
    {"gitRepo": {"repository": "r", "directory": "../x"}},
    {"gcePersistentDisk": {"pdName": "p", "partition": -1}},
    {"awsElasticBlockStore": {"volumeID": "v", "partition": -1}},
    {"nfs": {"server": "", "path": "/x"}},
    {"iscsi": {"targetPortal": "p", "iqn": "bad", "lun": 0}},
    {"iscsi": {"targetPortal": "p", "iqn": "iqn.2001-04.com.example:storage", "lun": 300}},
    {"glusterfs": {"endpoints": "e", "path": "p"}},
    {"flocker": {}},
    {"flocker": {"datasetName": "a/b"}},
    {"rbd": {"monitors": ["m"], "image": "i"}},
    {"cinder": {"volumeID": "v", "secretRef": {"name": ""}}},
    {"cephfs": {"monitors": ["m"], "secretRef": {"name": "s"}}},
    {"quobyte": {"registry": "r", "volume": "v", "tenant": "x" * 70}},
    {"fc": {}},
    {"fc": {"targetWWNs": ["a"], "lun": 300}},
    {"flexVolume": {"driver": "d", "options": {"kubernetes.io/x": "y"}}},
    {"azureFile": {"secretName": "", "shareName": "s"}},
    {"vsphereVolume": {"volumePath": ""}},
    {"photonPersistentDisk": {"pdID": ""}},
    {"portworxVolume": {"volumeID": ""}},
    {"azureDisk": {"diskName": "d", "diskURI": "u", "cachingMode": "bad"}},
    {"storageos": {"volumeName": "Bad_"}},
    {"scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "n"}}},
    {"scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "n"}, "volumeName": "v"}},
    # validateVolumeSource's finer points: the initiator's name length (also when iscsi is not
    # the first source), an IQN matched anywhere after its prefix, azureDisk's defaulted kind,
    # Go's SplitHostPort, and reserved flexVolume option keys in any case.
    {
        "name": "v" * 50,
        "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": _IQN, "initiatorName": _IQN},
    },
    {
        "name": "v" * 51,
        "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": _IQN, "initiatorName": _IQN},
    },
    {
        "name": "v" * 60,
        "emptyDir": {},
        "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": _IQN, "initiatorName": ""},
    },
    {"iscsi": {"targetPortal": "p", "iqn": f"iqnX {_IQN}", "lun": 255}},
    {"iscsi": {"targetPortal": "p", "iqn": "eui.0123456789ABCDEF", "chapAuthSession": True}},
    {"gcePersistentDisk": {"pdName": "p", "partition": 0}},
    {"azureDisk": {"diskName": "d", "diskURI": "https://a/b.vhd"}},
    {"azureDisk": {"diskName": "d", "diskURI": "https://a/b.vhd", "kind": "Managed"}},
    {"quobyte": {"registry": "[::1]:7861,h:1", "volume": "v"}},
    {"quobyte": {"registry": "a:1,b,::1:80", "volume": ""}},
    {
        "flexVolume": {
            "driver": "d",
            "options": {"Alpha.K8S.io/x": "y", "myns.io/kubernetes.io": "z"},
        }
    },
    {"fc": {"targetWWNs": ["a"], "wwids": ["b"], "lun": 1}},
    {"storageos": {"volumeName": "v", "volumeNamespace": "Bad_", "secretRef": {"name": ""}}},
    # The projections whose gates are on from 1.37 (dropped before): an empty path, a missing
    # key type, and both in one source.
    {"projected": {"sources": [{"clusterTrustBundle": {"name": "a", "path": ""}}]}},
    {"projected": {"sources": [{"podCertificate": {"signerName": "a.io/b", "keyPath": "k"}}]}},
    {
        "projected": {
            "sources": [
                {
                    "clusterTrustBundle": {"signerName": "a.io/b", "path": "k"},
                    "podCertificate": {
                        "signerName": "a.io/b",
                        "keyType": "RSA4096",
                        "keyPath": "k",
                    },
                }
            ]
        }
    },
]


def volume_items() -> list[Item]:
    (base,) = (i for i in corpus() if i.source == "examples" and i.body["kind"] == "Job")
    items = []
    for source in VOLUMES:
        body = with_field(base.body, "spec.template.spec.volumes", [{"name": "v", **source}])
        items.append(Item("volumes", json.dumps(source), body))
    return items


# --- the two judges ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    paths: frozenset[str] = frozenset()
    rules: tuple[str, ...] = ()
    message: str = ""
    policy: tuple[str, ...] = ()
    """jobguard's policy rules that refused too (not enforced upstream, not in the verdict)."""


def server_version(api: httpx.Client) -> tuple[str, VersionChoice]:
    """The server's gitVersion and the supported version jobguard judges it with (its own
    major.minor once supported, else the nearest)."""
    info = api.get("/version").json()
    choice = choose_version(info["major"], info["minor"], info.get("gitVersion", ""))
    return str(info.get("gitVersion", "")), choice


def check_settings(version: str) -> Settings:
    """What `jobguard check --kubernetes-version VERSION` judges with (no configuration)."""
    return parse_config(f'kubernetesVersion: "{version}"\n', "--kubernetes-version").to_settings()


def judge(
    settings_: Settings, body: dict[str, Any], old: dict[str, Any] | None, subresource: str
) -> Verdict:
    """jobguard check's verdict on `body` (an UPDATE of `old` when given)."""
    (manifest,) = parse(json.dumps(body, ensure_ascii=False), "differential.json")
    key = pair_key(body)
    olds = {key: old} if old is not None and key is not None else {}
    result = examine(manifest, CheckOptions(settings_, subresource=subresource, old=olds))
    if not isinstance(result, DocumentResult):
        return Verdict(False, message=str(result))
    denied = [v for v in result.violations if v.enforcement == Enforcement.DENY.value]
    # jobguard's own policy rules on by default (NE-001, NE-002) refuse what the API server takes
    # by design: set apart, not part of the verdict compared.
    policy = [v for v in denied if not _upstream(v.rule)]
    upstream = [v for v in denied if _upstream(v.rule)]
    return Verdict(
        not upstream,
        frozenset(v.field for v in upstream),
        tuple(v.rule for v in upstream),
        "; ".join(v.message for v in upstream),
        tuple(v.rule for v in policy),
    )


def _upstream(rule: str) -> bool:
    info = RULES_BY_ID.get(rule)
    return info is None or info.upstream


NO_ANSWER = "no answer: the API server's handler panicked and dropped the connection"


def _answer(send: Callable[[], httpx.Response]) -> httpx.Response | Verdict:
    """The API server's answer, or its verdict when it gives none: kube-apiserver 1.37.2 panics
    on a Job whose successPolicy names rules while `spec.completions` is unset
    (validateSuccessPolicyRule dereferences it; recovered, the connection is dropped), and nothing
    is stored: a refusal."""
    try:
        return send()
    except httpx.RemoteProtocolError:
        return Verdict(False, message=NO_ANSWER)


def _server(response: httpx.Response | Verdict) -> Verdict:
    if isinstance(response, Verdict):
        return response
    if response.status_code in (200, 201):
        return Verdict(True)
    try:
        status = response.json()
    except ValueError:
        status = {}
    if response.status_code not in (400, 422) or status.get("kind") != "Status":
        raise AssertionError(f"not a verdict: HTTP {response.status_code} {response.text[:300]}")
    causes = (status.get("details") or {}).get("causes") or []
    paths = frozenset(str(c["field"]) for c in causes if c.get("field"))
    return Verdict(False, paths, message=str(status.get("message", "")))


def collection(body: dict[str, Any], namespace: str) -> str:
    return (JOBS if body.get("kind") == "Job" else CRONJOBS).format(namespace=namespace)


def in_namespace(body: dict[str, Any], namespace: str) -> dict[str, Any]:
    result = copy.deepcopy(body)
    if isinstance(result.get("metadata"), dict):
        result["metadata"]["namespace"] = namespace
    return result


SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


def creatable(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored object (a test file's `old`) as a client creates it: without what the API server
    sets (uid, selector and template labels generated from it, status)."""
    body = copy.deepcopy(stored)
    body.pop("status", None)
    metadata = body.get("metadata", {})
    uid = metadata.get("uid")
    for key in SERVER_SET:
        metadata.pop(key, None)
    spec = body.get("spec", {})
    if body.get("kind") == "Job" and not spec.get("manualSelector"):
        spec.pop("selector", None)
        labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
        for label, value in list(labels.items()):
            if value in (uid, metadata.get("name")) and label.endswith(
                ("controller-uid", "job-name")
            ):
                del labels[label]
    return body


def _store(api: httpx.Client, item: Item, stored_file: dict[str, Any], namespace: str) -> str:
    """Create a stored object for real (its status too, for a status case); its path."""
    created = api.post(collection(stored_file, namespace), json=creatable(stored_file))
    if created.status_code != 201:
        raise AssertionError(f"{item.id}: the stored object was refused: {created.text[:300]}")
    stored = created.json()
    path = f"{collection(stored_file, namespace)}/{stored['metadata']['name']}"
    if item.subresource == "status" and "status" in stored_file:
        for _ in range(20):
            status = copy.deepcopy(stored_file["status"])
            started = (stored.get("status") or {}).get("startTime")
            if started and "startTime" in status:
                # The job controller may have started the Job first: its startTime is fixed
                # once set (unsuspended), so the stored status keeps it.
                status["startTime"] = started
            installed = api.put(f"{path}/status", json={**stored, "status": status})
            if installed.status_code != 409:
                break
            stored = api.get(path).json()
        if installed.status_code != 200:
            raise AssertionError(f"{item.id}: the stored status was refused: {installed.text}")
    return path


def _update(
    api: httpx.Client,
    settings_: Settings,
    item: Item,
    path: str,
    change: Callable[[dict[str, Any]], dict[str, Any]],
) -> Outcome:
    """A dry-run PUT of `change(stored)`, pinned to the stored resourceVersion (the controllers
    write the Jobs they run: read again on a conflict), and jobguard's verdict on the same pair."""
    target = f"{path}/{item.subresource}" if item.subresource else path
    for _ in range(20):
        stored = api.get(path).json()
        body = change(stored)
        if isinstance(body.get("metadata"), dict):
            body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        response = _answer(functools.partial(api.put, target, params=DRY_RUN, json=body))
        if isinstance(response, Verdict) or response.status_code != 409:
            break
    return Outcome(item, _server(response), judge(settings_, body, stored, item.subresource))


def judge_both(
    api: httpx.Client, settings_: Settings, item: Item, namespace: str, stores: dict[str, str]
) -> Outcome:
    """Both verdicts on one item; `stores` keeps the stored objects of generated UPDATEs (the
    path of each base, created on first use)."""
    if item.change is not None:
        key = json.dumps(item.body, sort_keys=True)
        if key not in stores:
            stored = in_namespace(item.body, namespace)
            stored["metadata"]["name"] = f"stored-{len(stores)}"
            stores[key] = _store(api, item, stored, namespace)
        field_path, value = item.change
        return _update(
            api, settings_, item, stores[key], lambda o: with_field(o, field_path, value)
        )
    if item.old is None:
        body = in_namespace(item.body, namespace)
        response = _answer(lambda: api.post(collection(body, namespace), params=DRY_RUN, json=body))
        return Outcome(item, _server(response), judge(settings_, body, None, ""))
    old_file = in_namespace(item.old, namespace)
    path = _store(api, item, old_file, namespace)
    patch = merge_patch(old_file, in_namespace(item.body, namespace))
    return _update(api, settings_, item, path, lambda o: apply_merge_patch(o, patch))


# --- outcomes and the list of known disagreements ----------------------------------------------

# The area of a refusal only the API server makes, by where it points.
PATH_AREAS = (
    ("metadata.", "OM"),
    ("spec.template.metadata", "TM"),
    ("spec.selector", "TM"),
    ("spec.template.spec", "POD"),
    ("spec.successPolicy", "SP"),
    ("spec.jobTemplate.spec.template.spec", "POD"),
    ("spec.jobTemplate", "CJ"),
    ("status", "ST"),
    ("spec.", "JS"),
)


@dataclass(frozen=True)
class Outcome:
    item: Item
    server: Verdict
    guard: Verdict

    @property
    def agree(self) -> bool:
        return self.server.allowed == self.guard.allowed

    @property
    def paths_differ(self) -> bool:
        both_refuse = not self.server.allowed and not self.guard.allowed
        return both_refuse and bool(self.server.paths) and self.server.paths != self.guard.paths

    @property
    def area(self) -> str:
        """The rule area of a refusal (jobguard's first rule, else where the API server points;
        SC for a body the API server cannot decode); "-" when both accept."""
        if self.guard.rules:
            return self.guard.rules[0].split("-")[0]
        if self.server.allowed:
            return "-"
        for path in sorted(self.server.paths):
            for prefix, area in PATH_AREAS:
                if path.startswith(prefix):
                    return (
                        "CS" if area == "JS" and self.item.body.get("kind") == "CronJob" else area
                    )
        return "SC"

    def describe(self) -> str:
        def side(verdict: Verdict) -> str:
            if verdict.allowed:
                return "accepts"
            return f"refuses ({', '.join(sorted(verdict.paths)) or '-'}: {verdict.message[:240]})"

        return (
            f"{self.item.source}/{self.item.id}: API server {side(self.server)}; "
            f"jobguard {side(self.guard)}"
        )


@dataclass(frozen=True)
class Listed:
    ids: tuple[str, ...]
    """fnmatch patterns over `source/id`."""
    versions: tuple[str, ...]
    """The server releases (major.minor) it is known on; empty for every one."""
    reason: str

    def covers(self, outcome: Outcome, version: str) -> bool:
        key = f"{outcome.item.source}/{outcome.item.id}"
        return (not self.versions or version in self.versions) and any(
            fnmatch.fnmatchcase(key, pattern) for pattern in self.ids
        )


def listed() -> list[Listed]:
    entries = yaml.safe_load(DISAGREEMENTS.read_text()) or []
    found = []
    for entry in entries:
        unknown = set(entry) - {"id", "versions", "reason"}
        if unknown or not entry.get("reason") or not entry.get("id"):
            raise AssertionError(f"{DISAGREEMENTS.name}: an entry needs id and reason: {entry}")
        versions = tuple(str(v) for v in entry.get("versions") or ())
        ids = entry["id"] if isinstance(entry["id"], list) else [entry["id"]]
        found.append(Listed(tuple(str(i) for i in ids), versions, str(entry["reason"])))
    return found


@dataclass
class Run:
    """One release's outcomes."""

    server: str
    judged_as: str
    outcomes: list[Outcome] = field(default_factory=list)
    listed: list[tuple[Outcome, Listed]] = field(default_factory=list)
    seconds: float = 0.0

    def table(self) -> list[str]:
        """Agreement per corpus source and per rule area of the refusals."""
        lines = [
            f"differential: API server {self.server}, jobguard check --kubernetes-version "
            f"{self.judged_as}: {len(self.outcomes)} requests in {self.seconds:.0f} s",
            f"  {'area':<22}{'requests':>9}{'agree':>7}{'%':>7}{'listed':>8}"
            f"{'both refuse':>13}{'paths differ':>14}{'policy':>8}",
        ]
        covered = {id(o) for o, _ in self.listed}
        for title, key in (("source", lambda o: o.item.source), ("rule area", lambda o: o.area)):
            lines.append(f"  by {title}:")
            groups: dict[str, list[Outcome]] = {}
            for outcome in self.outcomes:
                groups.setdefault(key(outcome), []).append(outcome)
            for name in sorted(groups):
                group = groups[name]
                agree = sum(o.agree for o in group)
                refused = sum(not o.server.allowed and not o.guard.allowed for o in group)
                lines.append(
                    f"  {name:<22}{len(group):>9}{agree:>7}{100 * agree / len(group):>7.1f}"
                    f"{sum(id(o) in covered for o in group):>8}{refused:>13}"
                    f"{sum(o.paths_differ for o in group):>14}"
                    f"{sum(bool(o.guard.policy) for o in group):>8}"
                )
        verdicts = Counter(
            ("accept" if o.server.allowed else "refuse", "accept" if o.guard.allowed else "refuse")
            for o in self.outcomes
        )
        lines.append(
            "  (API server, jobguard): "
            + ", ".join(f"{a}/{b} {n}" for (a, b), n in sorted(verdicts.items()))
        )
        return lines


RECORD: list[Run] = []


def draw_unique(strategy: st.SearchStrategy[Item], count: int) -> list[Item]:
    """`count` draws of `strategy`, seeded (the same on every run), once each by id."""
    drawn: list[Item] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(strategy)
    def collect(item: Item) -> None:
        drawn.append(item)

    collect()
    unique: dict[str, Item] = {}
    for item in drawn:
        unique.setdefault(item.id, item)
    return list(unique.values())
