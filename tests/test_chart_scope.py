"""Which registrations the API server sends each request to, for the chart's rendered webhooks:
rules, namespaceSelector, objectSelector (old or new object on UPDATE) and matchConditions
evaluated as the API server evaluates them (CEL on cel-cpp, `tests.vap_eval`).

The guarantees: a registration that fails closed receives exactly the requests a suspend policy
judges (its namespaces, its labels, not its controllers, not exempt requesters but for the
built-in controllers' CREATEs SUS-008 judges), so a Job outside every policy never waits for
jobguard; and every request a SUS rule denies reaches a registration that fails closed, so no
outage lets it through.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from jobguard.app.config import parse_config
from jobguard.validators import Operation, Request, Requester, Settings, Stage, admit
from jobguard.validators.policy import present_labels
from tests.builders import job
from tests.corpus import KUEUE_SETUP
from tests.test_chart import NAMESPACE, render
from tests.vap_eval import _selects, defaulted, evaluate

QUEUE = "kueue.x-k8s.io/queue-name"
GPU = "example.com/gpu-queue"
KUEUE_SA = "system:serviceaccount:kueue-system:kueue-controller-manager"
GPU_SA = "system:serviceaccount:gpu-system:scheduler"
CRONJOB_CONTROLLER = "system:serviceaccount:kube-system:cronjob-controller"
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"

KUEUE_VALUES: dict[str, Any] = yaml.safe_load(KUEUE_SETUP.read_text())
TWO_POLICIES: dict[str, Any] = {
    **KUEUE_VALUES,
    "suspendPolicies": [
        *KUEUE_VALUES["suspendPolicies"],
        {
            "name": "gpu",
            "match": {
                "namespaces": ["ml-train", "ml-eval"],
                "labelSelector": {"matchLabels": {GPU: "a100"}},
            },
            "controllers": {"serviceAccounts": ["gpu-system:scheduler"]},
            "usersMaySuspend": True,
        },
    ],
}


@dataclass(frozen=True)
class Call:
    operation: str
    resource: str
    namespace: str
    labels: dict[str, str] | None
    """The Job's labels (None: no object, as for a CronJob call here)."""
    old_labels: dict[str, str] | None = None
    user: str = "alice"
    groups: tuple[str, ...] = ("system:authenticated",)
    suspend: bool = False

    def objects(self) -> tuple[Any, Any]:
        def make(labels: dict[str, str] | None, suspend: bool) -> Any:
            if labels is None:
                return None
            obj = job("pi", suspend=suspend)
            obj["metadata"] = {"name": "pi", "namespace": self.namespace, "labels": labels}
            return obj

        new = make(self.labels, self.suspend)
        old = make(self.old_labels, True) if self.operation == "UPDATE" else None
        return defaulted(new), defaulted(old)


def delivered(objects: dict[str, dict[str, Any]], call: Call) -> list[tuple[str, str]]:
    """(webhook name, failurePolicy) of each registration the API server sends `call` to."""
    new, old = call.objects()
    request = {
        "operation": call.operation,
        "namespace": call.namespace,
        "userInfo": {"username": call.user, "groups": list(call.groups)},
    }
    activation = {"request": request, "object": new, "oldObject": old}
    out = []
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for hook in (objects.get(f"{kind}/jobguard") or {}).get("webhooks", []):
            (rule,) = hook["rules"]
            if call.resource not in rule["resources"] or call.operation not in rule["operations"]:
                continue
            namespace_labels = {"kubernetes.io/metadata.name": call.namespace}
            if not _selects(hook.get("namespaceSelector"), namespace_labels):
                continue
            selector = hook.get("objectSelector")
            labelled = [o["metadata"].get("labels") or {} for o in (new, old) if o is not None]
            if selector and not any(_selects(selector, labels) for labels in labelled):
                continue
            if all(
                evaluate(c["expression"], activation) is True
                for c in hook.get("matchConditions", [])
            ):
                out.append((hook["name"], hook["failurePolicy"]))
    return out


KUEUE_TABLE: list[tuple[str, Call, list[tuple[str, str]]]] = [
    (
        "a user creates a queued Job in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: "q"}),
        [("queued.jobs.mutate.jobguard.io", "Ignore"), ("queued.jobs.jobguard.io", "Fail")],
    ),
    ("a user creates a Job without a queue in team-a", Call("CREATE", "jobs", "team-a", {}), []),
    (
        "a user creates a Job with an empty queue label in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: ""}),
        # The objectSelector's Exists reads "" as present; the webhook allows it (no queue).
        [("queued.jobs.mutate.jobguard.io", "Ignore"), ("queued.jobs.jobguard.io", "Fail")],
    ),
    ("a user creates a queued Job in batch", Call("CREATE", "jobs", "batch", {QUEUE: "q"}), []),
    (
        "the cronjob-controller creates a queued Job in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: "q"}, user=CRONJOB_CONTROLLER),
        [("queued.jobs.mutate.jobguard.io", "Ignore"), ("queued.jobs.jobguard.io", "Fail")],
    ),
    (
        "the cronjob-controller creates a Job in batch",
        Call("CREATE", "jobs", "batch", {QUEUE: "q"}, user=CRONJOB_CONTROLLER),
        [],
    ),
    (
        "Kueue creates a queued Job in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: "q"}, user=KUEUE_SA),
        [],
    ),
    (
        "a user updates a queued Job in team-a",
        Call("UPDATE", "jobs", "team-a", {QUEUE: "q"}, {QUEUE: "q"}),
        [("queued.jobs.jobguard.io", "Fail"), ("jobs.jobguard.io", "Ignore")],
    ),
    (
        "a user relabels a queued Job out of the queue",
        Call("UPDATE", "jobs", "team-a", {}, {QUEUE: "q"}),
        [("queued.jobs.jobguard.io", "Fail"), ("jobs.jobguard.io", "Ignore")],
    ),
    (
        "a user updates a Job without a queue in team-a",
        Call("UPDATE", "jobs", "team-a", {}, {}),
        [("jobs.jobguard.io", "Ignore")],
    ),
    (
        "a user updates a Job in batch",
        Call("UPDATE", "jobs", "batch", {QUEUE: "q"}, {QUEUE: "q"}),
        [("jobs.jobguard.io", "Ignore")],
    ),
    (
        "Kueue resumes a queued Job",
        Call("UPDATE", "jobs", "team-a", {QUEUE: "q"}, {QUEUE: "q"}, user=KUEUE_SA),
        [("jobs.jobguard.io", "Ignore")],
    ),
    (
        "the garbage collector orphans a queued Job",
        Call(
            "UPDATE",
            "jobs",
            "team-a",
            {QUEUE: "q"},
            {QUEUE: "q"},
            user="system:serviceaccount:kube-system:generic-garbage-collector",
        ),
        [],
    ),
    (
        "an administrator updates a queued Job",
        Call("UPDATE", "jobs", "team-a", {QUEUE: "q"}, {QUEUE: "q"}, "root", ("system:masters",)),
        [],
    ),
    (
        "a user in kueue-system (exempt)",
        Call("UPDATE", "jobs", "kueue-system", {QUEUE: "q"}, {QUEUE: "q"}),
        [],
    ),
    (
        "the job-controller writes a queued Job's status",
        Call("UPDATE", "jobs/status", "team-a", {QUEUE: "q"}, {QUEUE: "q"}, user=JOB_CONTROLLER),
        [],
    ),
    (
        "a user writes a queued Job's status",
        Call("UPDATE", "jobs/status", "team-a", {QUEUE: "q"}, {QUEUE: "q"}),
        [("jobs-status.jobguard.io", "Ignore")],
    ),
    (
        "a user creates a CronJob in team-a",
        Call("CREATE", "cronjobs", "team-a", None),
        [("cronjobs.jobguard.io", "Ignore")],
    ),
]

TWO_POLICY_TABLE: list[tuple[str, Call, list[tuple[str, str]]]] = [
    (
        "a user creates a queued Job in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: "q"}),
        [("queued.jobs.mutate.jobguard.io", "Ignore"), ("queued.jobs.jobguard.io", "Fail")],
    ),
    (
        "a user creates a GPU Job in ml-train",
        Call("CREATE", "jobs", "ml-train", {GPU: "a100"}),
        [("gpu.jobs.jobguard.io", "Fail")],
    ),
    (
        "a user creates a GPU Job in team-a (no policy there)",
        Call("CREATE", "jobs", "team-a", {GPU: "a100"}),
        [],
    ),
    (
        "a user creates another GPU's Job in ml-train",
        Call("CREATE", "jobs", "ml-train", {GPU: "t4"}),
        [],
    ),
    (
        "the GPU scheduler resumes a GPU Job",
        Call("UPDATE", "jobs", "ml-eval", {GPU: "a100"}, {GPU: "a100"}, user=GPU_SA),
        [("jobs.jobguard.io", "Ignore")],
    ),
    (
        "Kueue updates a GPU Job (not its controller)",
        Call("UPDATE", "jobs", "ml-eval", {GPU: "a100"}, {GPU: "a100"}, user=KUEUE_SA),
        [("gpu.jobs.jobguard.io", "Fail"), ("jobs.jobguard.io", "Ignore")],
    ),
    (
        "the cronjob-controller creates a GPU Job (no forced suspension)",
        Call("CREATE", "jobs", "ml-train", {GPU: "a100"}, user=CRONJOB_CONTROLLER),
        [],
    ),
]


def _values(config: dict[str, Any]) -> dict[str, Any]:
    return {"config": config}


@pytest.mark.parametrize(("name", "call", "expected"), KUEUE_TABLE, ids=[t[0] for t in KUEUE_TABLE])
def test_kueue_registrations_receive(
    name: str, call: Call, expected: list[tuple[str, str]]
) -> None:
    assert delivered(_kueue_objects(), call) == expected


@pytest.mark.parametrize(
    ("name", "call", "expected"), TWO_POLICY_TABLE, ids=[t[0] for t in TWO_POLICY_TABLE]
)
def test_two_policies_registrations_receive(
    name: str, call: Call, expected: list[tuple[str, str]]
) -> None:
    assert delivered(_two_policy_objects(), call) == expected


_RENDERED: dict[str, dict[str, dict[str, Any]]] = {}


def _kueue_objects() -> dict[str, dict[str, Any]]:
    if "kueue" not in _RENDERED:
        _RENDERED["kueue"] = render(_values(KUEUE_VALUES))
    return _RENDERED["kueue"]


def _two_policy_objects() -> dict[str, dict[str, Any]]:
    if "two" not in _RENDERED:
        _RENDERED["two"] = render(_values(TWO_POLICIES))
    return _RENDERED["two"]


def _judged_by_policy(settings: Settings, call: Call) -> set[str]:
    """The policies a request reaches through jobguard's own reading: the policy governing the
    old or the new Job, unless the requester is its controller or exempt (for a CREATE the
    built-in controllers only where SUS-008 holds them)."""
    if call.resource != "jobs" or call.labels is None:
        return set()
    requester = Requester(call.user, call.groups)
    exemptions = settings.policies.exemptions
    out = set()
    for labels in (call.labels, call.old_labels):
        if labels is None:
            continue
        policy = settings.policies.policy_for(call.namespace, present_labels(labels))
        if policy is None or policy.controllers.includes(requester):
            continue
        if exemptions.exempt(call.namespace, requester):
            forced = call.operation == "CREATE" and policy.force_suspend_on_create
            if not forced or exemptions.exempt_beyond_controllers(call.namespace, requester):
                continue
        out.add(policy.name)
    return out


def _sus_denials(settings: Settings, call: Call) -> list[str]:
    new, old = call.objects()
    request = Request(
        "Job",
        Operation(call.operation),
        new,
        old,
        subresource=call.resource.partition("/")[2],
        namespace=call.namespace,
        name="pi",
        requester=Requester(call.user, call.groups),
    )
    verdict = admit(request, settings, Stage.VALIDATING).verdict
    assert verdict is not None
    return [v.error.rule for v in verdict.denials if v.error.rule.startswith("SUS-")]


_USERS = [
    ("alice", ("system:authenticated",)),
    (KUEUE_SA, ("system:serviceaccounts",)),
    (GPU_SA, ("system:serviceaccounts",)),
    (CRONJOB_CONTROLLER, ("system:serviceaccounts",)),
    (JOB_CONTROLLER, ("system:serviceaccounts",)),
    ("root", ("system:masters",)),
]
_NAMESPACES = ["team-a", "batch", "kueue-system", "ml-train"]
_LABELS = [{}, {QUEUE: "q"}, {QUEUE: ""}, {GPU: "a100"}, {GPU: "t4"}, {QUEUE: "q", GPU: "a100"}]


def _calls() -> list[Call]:
    calls = []
    for (user, groups), namespace, labels in itertools.product(_USERS, _NAMESPACES, _LABELS):
        for suspend in (False, True):
            calls.append(Call("CREATE", "jobs", namespace, labels, None, user, groups, suspend))
        for old_labels in _LABELS:
            calls.append(Call("UPDATE", "jobs", namespace, labels, old_labels, user, groups))
    return calls


@pytest.mark.parametrize("config", [KUEUE_VALUES, TWO_POLICIES], ids=["kueue", "two-policies"])
def test_fail_closed_registrations_receive_exactly_what_a_policy_judges(
    config: dict[str, Any],
) -> None:
    settings = parse_config(yaml.safe_dump(config)).to_settings()
    objects = render(_values(config))
    checked = denied = 0
    for call in _calls():
        hooks = delivered(objects, call)
        closed = {name.split(".")[0] for name, failure in hooks if failure == "Fail"}
        judged = _judged_by_policy(settings, call)
        # The objectSelector reads an empty value as present: a superset, never fewer.
        over = {QUEUE: ""} in (call.labels, call.old_labels)
        if not over:
            assert closed == judged, (call, hooks)
        else:
            assert closed >= judged, (call, hooks)
        if _sus_denials(settings, call):
            # Whatever fails, a request a SUS rule denies never gets in unjudged.
            assert closed, (call, hooks)
            denied += 1
        checked += 1
    assert checked == len(_USERS) * len(_NAMESPACES) * len(_LABELS) * (2 + len(_LABELS))
    assert denied > 0


def test_nothing_fails_closed_without_a_suspend_policy() -> None:
    for values in ({}, {"config": {"rules": {"NE-*": {"enabled": True}}}}):
        hooks = render(values)["ValidatingWebhookConfiguration/jobguard"]["webhooks"]
        assert {h["failurePolicy"] for h in hooks} == {"Ignore"}


def test_status_writes_never_reach_a_closed_registration() -> None:
    for values in (
        _values(KUEUE_VALUES),
        {**_values(KUEUE_VALUES), "webhook": {"failurePolicy": "Fail"}},
        {"webhook": {"profile": "full", "failurePolicy": "Fail"}},
    ):
        hooks = render(values)["ValidatingWebhookConfiguration/jobguard"]["webhooks"]
        status = [h for h in hooks if "jobs/status" in h["rules"][0]["resources"]]
        assert [h["failurePolicy"] for h in status] == ["Ignore"]
    assert NAMESPACE == "jobguard-system"
