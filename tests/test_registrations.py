"""The registrations jobguard builds (`jobguard.validators.registrations`), evaluated as the API
server evaluates them (rules, namespaceSelector, objectSelector on the old or the new object,
matchConditions in CEL on cel-cpp), against jobguard's own judgement of the same request, over a
grid of requesters x namespaces x labels x operations (CREATE, UPDATE, relabels, status writes)
for configurations that used to read differently in the chart: bracket globs, a policy on every
namespace, empty label values, overlapping policies, rule globs.

The guarantees: a webhook that fails closed receives exactly the requests a suspend policy
judges, so nothing else waits for jobguard; every request a SUS rule denies reaches one, so no
outage lets it through; and every CREATE /mutate would suspend reaches the mutating webhook.
"""

from __future__ import annotations

import base64
import copy
import functools
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from jobguard.app.config import parse_config
from jobguard.validators import (
    SUPPORTED_VERSIONS,
    Operation,
    Request,
    Requester,
    Settings,
    Stage,
    admit,
)
from jobguard.validators.pipeline import mutate
from jobguard.validators.policy import present_labels
from jobguard.validators.registrations import (
    ClientConfig,
    FailurePolicy,
    Profile,
    RegistrationOptions,
    webhook_configurations,
)
from tests.builders import job
from tests.commands import run
from tests.corpus import KUEUE_SETUP
from tests.vap_eval import _selects, defaulted, evaluate

QUEUE = "kueue.x-k8s.io/queue-name"
GPU = "example.com/gpu-queue"
SKIP = "example.com/skip"
KUEUE_SA = "system:serviceaccount:kueue-system:kueue-controller-manager"
GPU_SA = "system:serviceaccount:gpu-system:scheduler"
CRONJOB_CONTROLLER = "system:serviceaccount:kube-system:cronjob-controller"
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
CLIENT = ClientConfig(service_namespace="jobguard-system", service_name="jobguard")

KUEUE: dict[str, Any] = yaml.safe_load(KUEUE_SETUP.read_text())
GPU_POLICY: dict[str, Any] = {
    "name": "gpu",
    "match": {
        "namespaces": ["ml-train", "ml-eval"],
        "labelSelector": {"matchLabels": {GPU: "a100"}},
    },
    "controllers": {"serviceAccounts": ["gpu-system:scheduler"]},
}
_QUEUED = KUEUE["suspendPolicies"][0]


def _with(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(KUEUE)
    out.update(changes)
    return out


def _queued(**match: Any) -> dict[str, Any]:
    policy: dict[str, Any] = copy.deepcopy(_QUEUED)
    policy["match"].update(match)
    return policy


CONFIGS: dict[str, dict[str, Any]] = {
    "kueue": KUEUE,
    # GPU Jobs in team-a too: a relabel moves a Job between the two policies there.
    "two-policies": _with(
        suspendPolicies=[
            _QUEUED,
            {**GPU_POLICY, "match": {**GPU_POLICY["match"], "namespaces": ["ml-train", "team-a"]}},
        ]
    ),
    "bracket-globs": _with(
        suspendPolicies=[_queued(namespaces=["team-[!x]*"])],
        exemptions={"namespaces": ["kube-system", "kueue-[a-z]*"], "groups": ["system:masters"]},
    ),
    "all-namespaces": _with(suspendPolicies=[_queued(namespaces=["*"])], exemptions={}),
    "empty-labels": _with(
        suspendPolicies=[
            _queued(
                labelSelector={
                    "matchExpressions": [
                        {"key": QUEUE, "operator": "Exists"},
                        {"key": SKIP, "operator": "DoesNotExist"},
                    ]
                }
            )
        ]
    ),
    "overlapping": _with(
        suspendPolicies=[
            {
                **GPU_POLICY,
                "name": "plain",
                "match": {
                    "namespaces": ["team-a"],
                    **{"labelSelector": _QUEUED["match"]["labelSelector"]},
                },
            },
            _QUEUED,
        ]
    ),
    "rule-globs": _with(
        rules={"SUS-00[2-6]": {"enforcement": "warn"}, "SUS-00?": {"enabled": True}}
    ),
}


@dataclass(frozen=True)
class Call:
    operation: str
    resource: str
    namespace: str
    labels: dict[str, str]
    old_labels: dict[str, str] | None = None
    user: str = "alice"
    groups: tuple[str, ...] = ("system:authenticated",)
    suspend: bool = False

    def objects(self) -> tuple[Any, Any]:
        # Built once per call (the grid asks three times): objects are never modified.
        return self._objects

    @functools.cached_property
    def _objects(self) -> tuple[Any, Any]:
        def make(labels: dict[str, str], suspend: bool) -> Any:
            obj = job("pi", suspend=suspend)
            obj["metadata"] = {"name": "pi", "namespace": self.namespace, "labels": labels}
            return defaulted(obj)

        if self.old_labels is None:
            return make(self.labels, self.suspend), None
        old = make(self.old_labels, False)
        new = make(self.labels, False)
        return new, old


def delivered(objects: list[dict[str, Any]], call: Call) -> list[tuple[str, str]]:
    """(webhook, failurePolicy) of each webhook the API server sends `call` to."""
    new, old = call.objects()
    subresource = call.resource.partition("/")[2]
    request: dict[str, Any] = {
        "operation": call.operation,
        "namespace": call.namespace,
        "userInfo": {"username": call.user, "groups": list(call.groups)},
    }
    if subresource:  # the API server leaves an empty subResource out of `request`
        request["subResource"] = subresource
    activation = {"request": request, "object": new, "oldObject": old}
    out = []
    for configuration in objects:
        for hook in configuration["webhooks"]:
            if not any(
                call.resource in rule["resources"] and call.operation in rule["operations"]
                for rule in hook["rules"]
            ):
                continue
            if not _selects(
                hook["namespaceSelector"], {"kubernetes.io/metadata.name": call.namespace}
            ):
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


def _request(call: Call) -> Request:
    new, old = call.objects()
    return Request(
        "Job",
        Operation(call.operation),
        new,
        old,
        subresource=call.resource.partition("/")[2],
        namespace=call.namespace,
        name="pi",
        requester=Requester(call.user, call.groups),
    )


def judged_by_policy(settings: Settings, call: Call) -> set[str]:
    """The policy whose rules judge the request, by jobguard's own reading: the first whose
    match fits (for an UPDATE the stored Job's, else the new one's), unless the requester is its
    controller or exempt (for a CREATE the built-in controllers only where SUS-008 holds them);
    of a status write only a relabel."""
    new, old = call.objects()
    policies = settings.policies
    labels = present_labels(new["metadata"].get("labels") or {})
    if old is None:
        policy = policies.policy_for(call.namespace, labels)
    else:
        old_labels = present_labels(old["metadata"].get("labels") or {})
        policy = policies.policy_for(call.namespace, old_labels) or policies.policy_for(
            call.namespace, labels
        )
        if call.resource == "jobs/status" and (new["metadata"].get("labels") or {}) == (
            old["metadata"].get("labels") or {}
        ):
            return set()
    requester = Requester(call.user, call.groups)
    if policy is None or policy.controllers.includes(requester):
        return set()
    exemptions = policies.exemptions
    if exemptions.exempt(call.namespace, requester):
        forced = (
            call.operation == "CREATE"
            and policy.force_suspend_on_create
            and settings.enabled("SUS-008")
        )
        if not forced or exemptions.exempt_beyond_controllers(call.namespace, requester):
            return set()
    return {policy.name}


_USERS = [
    ("alice", ("system:authenticated",)),
    (KUEUE_SA, ("system:serviceaccounts",)),
    (GPU_SA, ("system:serviceaccounts",)),
    (CRONJOB_CONTROLLER, ("system:serviceaccounts",)),
    (JOB_CONTROLLER, ("system:serviceaccounts",)),
    ("root", ("system:masters",)),
]
_NAMESPACES = ["team-a", "team-x1", "batch", "kube-system", "kueue-system", "ml-train"]
_LABELS = [
    {},
    {QUEUE: "q"},
    {QUEUE: ""},
    {GPU: "a100"},
    {QUEUE: "q", SKIP: ""},
    {QUEUE: "q", GPU: "a100"},
]
_OLD_LABELS = [{}, {QUEUE: "q"}, {GPU: "a100"}]


def calls() -> list[Call]:
    out = []
    for (user, groups), namespace, labels in itertools.product(_USERS, _NAMESPACES, _LABELS):
        for suspend in (False, True):
            out.append(Call("CREATE", "jobs", namespace, labels, None, user, groups, suspend))
        for old_labels in _OLD_LABELS:
            for resource in ("jobs", "jobs/status"):
                out.append(Call("UPDATE", resource, namespace, labels, old_labels, user, groups))
    return out


def _sus_denials(settings: Settings, call: Call) -> list[str]:
    verdict = admit(_request(call), settings, Stage.VALIDATING).verdict
    assert verdict is not None
    return [v.error.rule for v in verdict.denials if v.error.rule.startswith("SUS-")]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_fail_closed_webhooks_receive_exactly_what_a_policy_judges(name: str) -> None:
    settings = parse_config(yaml.safe_dump(CONFIGS[name])).to_settings()
    objects = webhook_configurations(settings, CLIENT, b"ca")
    checked = denied = mutated = 0
    for call in calls():
        hooks = delivered(objects, call)
        closed = {n.split(".")[0] for n, failure in hooks if failure == "Fail"}
        assert closed == judged_by_policy(settings, call), (call, hooks)
        if _sus_denials(settings, call):
            # Whatever fails, a request a SUS rule denies never gets in unjudged.
            assert closed, (call, hooks)
            denied += 1
        if call.operation == "CREATE":
            patch = mutate(_request(call), settings).patch
            mutating = {n for n, _ in hooks if ".mutate." in n}
            if patch:
                assert mutating, (call, hooks)
                mutated += 1
        checked += 1
    assert checked == len(_USERS) * len(_NAMESPACES) * len(_LABELS) * (2 + 2 * len(_OLD_LABELS))
    assert denied > 0 and mutated > 0


def _objects(config: dict[str, Any], **options: Any) -> list[dict[str, Any]]:
    settings = parse_config(yaml.safe_dump(config)).to_settings()
    return webhook_configurations(settings, CLIENT, b"PEM", RegistrationOptions(**options))


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_objects_are_valid_for_every_supported_version(version: str) -> None:
    for config in CONFIGS.values():
        for obj in _objects(config):
            kubernetes_validate.validate(obj, f"{version}.0", strict=True)


def test_every_webhook_states_what_the_api_server_needs() -> None:
    validating, mutating = _objects(KUEUE, timeout_seconds=7)
    assert [h["name"] for h in validating["webhooks"]] == [
        "queued.jobs.jobguard.io",
        "jobs.jobguard.io",
        "cronjobs.jobguard.io",
        "jobs-status.jobguard.io",
    ]
    assert [(h["name"], h["failurePolicy"]) for h in mutating["webhooks"]] == [
        ("queued.jobs.mutate.jobguard.io", "Ignore")
    ]
    for hook in validating["webhooks"] + mutating["webhooks"]:
        assert hook["sideEffects"] == "None" and hook["timeoutSeconds"] == 7
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["clientConfig"]["caBundle"] == base64.b64encode(b"PEM").decode()
    queued = validating["webhooks"][0]
    assert queued["failurePolicy"] == "Fail"
    assert [(r["resources"], r["operations"]) for r in queued["rules"]] == [
        (["jobs"], ["CREATE", "UPDATE"]),
        (["jobs/status"], ["UPDATE"]),
    ]
    # Exact names as the namespaceSelector, nothing left out implicitly.
    assert queued["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", "kueue-system"],
            }
        ]
    }
    assert {h["failurePolicy"] for h in validating["webhooks"][1:]} == {"Ignore"}
    everywhere = _objects(CONFIGS["all-namespaces"])[0]["webhooks"][0]
    assert everywhere["namespaceSelector"] == {}


def test_nothing_fails_closed_without_a_suspend_policy_and_status_never_does() -> None:
    for config in ({}, {"rules": {"NE-*": {"enabled": True}}}):
        validating, mutating = _objects(config)
        assert {h["failurePolicy"] for h in validating["webhooks"]} == {"Ignore"}
        assert mutating["webhooks"] == []
    for options in ({"failure_policy": FailurePolicy.FAIL}, {"profile": Profile.FULL}):
        hooks = _objects(KUEUE, **options)[0]["webhooks"]
        shared_status = [h for h in hooks if h["name"].startswith("jobs-status.")]
        assert [h["failurePolicy"] for h in shared_status] == ["Ignore"]


def test_a_url_client_and_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = ClientConfig(url="https://127.0.0.1:8443/")
    assert url.for_path("/validate", None) == {"url": "https://127.0.0.1:8443/validate"}
    with pytest.raises(ValueError, match="https only"):
        ClientConfig(url="http://127.0.0.1:8443")
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    config = tmp_path / "config.yaml"
    config.write_text(KUEUE_SETUP.read_text())
    args = ["registrations", "--config", str(config), "--service", "ns/jobguard"]
    code, out, err = run([*args, "--ca-bundle", str(ca)], capsys)
    assert code == 0, err
    settings = parse_config(KUEUE_SETUP.read_text()).to_settings()
    client = ClientConfig(service_namespace="ns", service_name="jobguard")
    assert list(yaml.safe_load_all(out)) == webhook_configurations(
        settings, client, ca.read_bytes()
    )
    assert run([*args[:-1], "nonsense"], capsys) == (
        2,
        "",
        "jobguard: --service 'nonsense' is not NAMESPACE/NAME\n",
    )
    assert run([*args, "--ca-bundle", str(config)], capsys)[2].endswith("no PEM certificate\n")


# README's table of where the Kueue set-up's requests go.
KUEUE_TABLE: list[tuple[str, Call, list[tuple[str, str]]]] = [
    (
        "a user creates a queued Job in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: "q"}),
        [("queued.jobs.jobguard.io", "Fail"), ("queued.jobs.mutate.jobguard.io", "Ignore")],
    ),
    ("a user creates a Job without a queue in team-a", Call("CREATE", "jobs", "team-a", {}), []),
    ("an empty queue label", Call("CREATE", "jobs", "team-a", {QUEUE: ""}), []),
    ("a queued Job in batch", Call("CREATE", "jobs", "batch", {QUEUE: "q"}), []),
    (
        "the cronjob-controller creates a queued Job in team-a",
        Call("CREATE", "jobs", "team-a", {QUEUE: "q"}, user=CRONJOB_CONTROLLER),
        [("queued.jobs.jobguard.io", "Fail"), ("queued.jobs.mutate.jobguard.io", "Ignore")],
    ),
    (
        "Kueue resumes a queued Job",
        Call("UPDATE", "jobs", "team-a", {QUEUE: "q"}, {QUEUE: "q"}, user=KUEUE_SA),
        [("jobs.jobguard.io", "Ignore")],
    ),
    (
        "a user relabels a queued Job out of the queue",
        Call("UPDATE", "jobs", "team-a", {}, {QUEUE: "q"}),
        [("queued.jobs.jobguard.io", "Fail"), ("jobs.jobguard.io", "Ignore")],
    ),
    (
        "an administrator updates a queued Job",
        Call("UPDATE", "jobs", "team-a", {QUEUE: "q"}, {QUEUE: "q"}, "root", ("system:masters",)),
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
        "a user removes a queued Job's queue label through jobs/status",
        Call("UPDATE", "jobs/status", "team-a", {}, {QUEUE: "q"}),
        [("queued.jobs.jobguard.io", "Fail"), ("jobs-status.jobguard.io", "Ignore")],
    ),
]


@pytest.mark.parametrize(("name", "call", "expected"), KUEUE_TABLE, ids=[t[0] for t in KUEUE_TABLE])
def test_kueue_requests_go_where_the_readme_says(
    name: str, call: Call, expected: list[tuple[str, str]]
) -> None:
    settings = parse_config(KUEUE_SETUP.read_text()).to_settings()
    assert sorted(delivered(webhook_configurations(settings, CLIENT, None), call)) == sorted(
        expected
    )
