"""Suspend policies (SUS-001..SUS-009), their enforcement modes, /mutate and `review --mutate`.

Settings come from the Kueue set-up of tests/data/config/kueue.yaml (and variants of it) through
`app.config.parse_config`; Jobs from `tests.builders.job()` placed in a `team-*` namespace with
a queue-name label.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from fastapi.testclient import TestClient

from jobguard.app.cli.main import main
from jobguard.app.config import parse_config
from jobguard.app.server.app import create_app
from jobguard.validators import Operation, Request, Requester, Settings, Verdict, evaluate
from tests.builders import START, causes, clean, cronjob, job, with_status
from tests.cases import read_review
from tests.corpus import KUEUE_SETUP
from tests.reviews import review

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
USER = "alice"
KUEUE = "system:serviceaccount:kueue-system:kueue-controller-manager"
OTHER_CONTROLLER = "system:serviceaccount:batch-system:other-controller"
FORBIDDEN = "FieldValueForbidden"

STRICT_POLICY: dict[str, Any] = {
    "name": "strict",
    "match": {
        "namespaces": ["team-a"],
        "labelSelector": {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]},
    },
    "forceSuspendOnCreate": True,
    "controllers": {"serviceAccounts": ["batch-system:other-controller"]},
}

SUS_002_TEXT = (
    "only kueue-system:kueue-controller-manager may resume jobs matched by policy 'queued'"
)


# --- configuration and request helpers --------------------------------------------------------


def config_data() -> dict[str, Any]:
    """The Kueue set-up of README.md, as tests/data/config/kueue.yaml holds it."""
    data: dict[str, Any] = yaml.safe_load(KUEUE_SETUP.read_text())
    return data


def config_text(
    *,
    version: str = "1.35",
    users_may_suspend: bool = True,
    force_suspend: bool = True,
    all_namespaces: bool = False,
    rules: dict[str, Any] | None = None,
    policies_before: list[dict[str, Any]] | None = None,
    policies_after: list[dict[str, Any]] | None = None,
    exempt_users: list[str] | None = None,
    exempt_service_accounts: list[str] | None = None,
) -> str:
    """The Kueue configuration as YAML, with variants (by default users may suspend)."""
    data = config_data()
    data["kubernetesVersion"] = version
    queued = data["suspendPolicies"][0]
    queued["usersMaySuspend"] = users_may_suspend
    queued["forceSuspendOnCreate"] = force_suspend
    if all_namespaces:
        del queued["match"]["namespaces"]
    if rules is not None:
        data["rules"] = rules
    data["suspendPolicies"] = [*(policies_before or []), queued, *(policies_after or [])]
    if exempt_users is not None:
        data["exemptions"]["users"] = exempt_users
    if exempt_service_accounts is not None:
        data["exemptions"]["serviceAccounts"] = exempt_service_accounts
    return yaml.safe_dump(data, sort_keys=False)


# The variant most tests here start from: users may suspend their own Jobs.
KUEUE_CONFIG = config_text()


def settings_from(text: str = KUEUE_CONFIG) -> Settings:
    return parse_config(text).to_settings()


BASE = settings_from()


def queued_job(
    namespace: str = "team-a", queue: str | None = "q", name: str = "pi", **spec: Any
) -> dict[str, Any]:
    obj = job(name, **spec)
    obj["metadata"]["namespace"] = namespace
    if queue is not None:
        obj["metadata"]["labels"] = {QUEUE_LABEL: queue}
    return obj


def suspended_job(**kwargs: Any) -> dict[str, Any]:
    """Suspended and never started: upstream (1.35) lets scheduling directives change."""
    return queued_job(suspend=True, **kwargs)


def running_job(**kwargs: Any) -> dict[str, Any]:
    return with_status(queued_job(suspend=False, **kwargs), startTime=START, active=1)


def changed(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"].update(spec)
    return out


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return spec


def judge(
    s: Settings,
    new: Any,
    old: Any = None,
    user: str = USER,
    groups: tuple[str, ...] = ("system:authenticated",),
    sub: str = "",
    kind: str = "Job",
) -> Verdict:
    source = new if isinstance(new, dict) else old
    namespace = source["metadata"]["namespace"]
    operation = Operation.CREATE if old is None else Operation.UPDATE
    return evaluate(
        Request(
            kind,
            operation,
            new,
            old,
            subresource=sub,
            namespace=namespace,
            name=source["metadata"]["name"],
            requester=Requester(user, groups),
        ),
        s,
    )


def sus_rules(verdict: Verdict) -> list[str]:
    return [v.error.rule for v in verdict.unique() if v.error.rule.startswith("SUS-")]


def body_for(
    obj: Any,
    old: Any = None,
    operation: str | None = None,
    user: str = USER,
    groups: list[str] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    op = operation or ("CREATE" if old is None else "UPDATE")
    body = review(obj, old, op, user=user, **kwargs)
    if groups is not None:
        body["request"]["userInfo"]["groups"] = groups
    return body


def post(text: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    client = TestClient(create_app(parse_config(text)))
    r = (
        client.post(path, json=body)
        if not isinstance(body, bytes)
        else client.post(path, content=body)
    )
    payload: dict[str, Any] = r.json()
    return r.status_code, payload


def response_of(text: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    status, payload = post(text, path, body)
    assert status == 200
    assert payload["apiVersion"] == "admission.k8s.io/v1"
    assert payload["kind"] == "AdmissionReview"
    response: dict[str, Any] = payload["response"]
    assert response["uid"] == body["request"]["uid"]
    return response


def audited_rules(response: dict[str, Any]) -> list[str]:
    """Rule IDs named in auditAnnotations ("violations": "ID=mode,...")."""
    annotations = response["auditAnnotations"]
    assert list(annotations) == ["violations"]
    return [entry.split("=")[0] for entry in annotations["violations"].split(",")]


def apply_patch(obj: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 "add" operations (all the mutating webhook may send)."""
    out = copy.deepcopy(obj)
    for op in ops:
        assert op["op"] == "add", op
        keys = [k.replace("~1", "/").replace("~0", "~") for k in op["path"].split("/")[1:]]
        target = out
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = op["value"]
    return out


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(parse_config(KUEUE_CONFIG)))


# --- configuration ----------------------------------------------------------------------------


def test_kueue_config_becomes_the_policy() -> None:
    (policy,) = BASE.policies.policies
    assert policy.name == "queued"
    assert policy.namespaces == ("team-*",)
    assert policy.label_selector == {
        "matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]
    }
    assert policy.force_suspend_on_create is True
    assert policy.controllers.service_accounts == ("kueue-system:kueue-controller-manager",)
    assert policy.users_may_suspend is True
    assert BASE.policies.exemptions.namespaces == ("kube-system", "kueue-system")
    assert BASE.policies.exemptions.subjects.groups == ("system:masters",)
    assert all(BASE.enabled(f"SUS-00{i}") for i in range(1, 6))


# --- SUS-001: create -------------------------------------------------------------------------


@pytest.mark.parametrize("suspend", [False, None], ids=["false", "unset"])
def test_sus001_user_creates_unsuspended_denied(suspend: bool | None) -> None:
    obj = queued_job()
    if suspend is None:
        del obj["spec"]["suspend"]
    else:
        obj["spec"]["suspend"] = suspend
    verdict = judge(BASE, obj)
    assert causes(verdict) == [("SUS-001", "spec.suspend", FORBIDDEN)]
    assert not verdict.allowed
    assert verdict.unique()[0].error.message() == (
        "spec.suspend: Forbidden: jobs matched by policy 'queued' must be created suspended "
        "(spec.suspend: true); only kueue-system:kueue-controller-manager may create them running"
    )


def test_sus001_suspended_create_allowed() -> None:
    verdict = judge(BASE, queued_job(suspend=True))
    assert clean(verdict)


def test_sus001_controller_may_create_running() -> None:
    verdict = judge(BASE, queued_job(), user=KUEUE)
    assert clean(verdict)


@pytest.mark.parametrize(
    ("namespace", "user", "groups", "expected"),
    [
        ("default", USER, ("system:authenticated",), ["SUS-001"]),
        ("kube-system", USER, ("system:authenticated",), []),
        ("team-a", USER, ("system:authenticated",), ["SUS-001"]),
        ("team-a", USER, ("system:authenticated", "system:masters"), []),
        ("team-a", "root@example.com", (), []),
        ("team-a", "system:serviceaccount:ops:janitor", (), []),
        ("team-a", "system:serviceaccount:ops:other", (), ["SUS-001"]),
    ],
    ids=[
        "not-exempt-namespace",
        "exempt-namespace",
        "not-exempt-group",
        "exempt-group",
        "exempt-user",
        "exempt-service-account",
        "other-service-account",
    ],
)
def test_sus001_exemptions(
    namespace: str, user: str, groups: tuple[str, ...], expected: list[str]
) -> None:
    # A policy on every namespace, so that kube-system would be matched if it were not exempt.
    s = settings_from(
        config_text(
            all_namespaces=True,
            exempt_users=["root@example.com"],
            exempt_service_accounts=["ops:janitor"],
        )
    )
    verdict = judge(s, queued_job(namespace=namespace), user=user, groups=groups)
    assert sus_rules(verdict) == expected
    assert verdict.allowed is (expected == [])


@pytest.mark.parametrize(
    ("namespace", "queue"),
    [("team-a", None), ("default", "q"), ("my-team-a", "q"), ("teams", "q")],
    ids=["no-label", "other-namespace", "glob-is-anchored", "no-dash"],
)
def test_sus001_unmatched_jobs_are_not_judged(namespace: str, queue: str | None) -> None:
    verdict = judge(BASE, queued_job(namespace=namespace, queue=queue))
    assert clean(verdict)


def test_sus001_job_labels_default_from_template() -> None:
    # v1 defaulting: a Job without labels takes its template's labels, so they match too.
    obj = queued_job(queue=None)
    obj["spec"]["template"]["metadata"]["labels"][QUEUE_LABEL] = "q"
    assert causes(judge(BASE, obj)) == [("SUS-001", "spec.suspend", FORBIDDEN)]


# --- SUS-002 / SUS-003: resume and suspend -----------------------------------------------------


@pytest.mark.parametrize(("user", "expected"), [(USER, ["SUS-002"]), (KUEUE, [])])
def test_sus002_resume(user: str, expected: list[str]) -> None:
    old = suspended_job()
    verdict = judge(BASE, changed(old, suspend=False), old, user=user)
    assert sus_rules(verdict) == expected
    assert verdict.allowed is (expected == [])
    if expected:
        assert causes(verdict) == [("SUS-002", "spec.suspend", FORBIDDEN)]
        assert verdict.unique()[0].error.message() == f"spec.suspend: Forbidden: {SUS_002_TEXT}"


@pytest.mark.parametrize(
    ("user", "groups", "expected"),
    [
        ("ops@example.com", (), []),
        ("bob", ("kueue-admins",), []),
        (KUEUE, (), []),
        ("bob", ("system:authenticated",), ["SUS-002"]),
        ("system:serviceaccount:kueue-system:other", (), ["SUS-002"]),
    ],
)
def test_sus002_controllers_by_user_group_and_service_account(
    user: str, groups: tuple[str, ...], expected: list[str]
) -> None:
    data = config_data()
    data["suspendPolicies"][0]["controllers"].update(
        users=["ops@example.com"], groups=["kueue-admins"]
    )
    s = settings_from(yaml.safe_dump(data))
    old = suspended_job()
    verdict = judge(s, changed(old, suspend=False), old, user=user, groups=groups)
    assert sus_rules(verdict) == expected
    if expected:
        assert verdict.unique()[0].error.detail == (
            "only kueue-system:kueue-controller-manager, ops@example.com or group kueue-admins "
            "may resume jobs matched by policy 'queued'"
        )


@pytest.mark.parametrize(
    ("users_may_suspend", "user", "expected"),
    [(True, USER, []), (False, USER, ["SUS-003"]), (False, KUEUE, []), (True, KUEUE, [])],
)
def test_sus003_suspend_running_job(
    users_may_suspend: bool, user: str, expected: list[str]
) -> None:
    s = settings_from(config_text(users_may_suspend=users_may_suspend))
    old = running_job()
    verdict = judge(s, changed(old, suspend=True), old, user=user)
    assert causes(verdict) == [(r, "spec.suspend", FORBIDDEN) for r in expected]
    assert verdict.allowed is (expected == [])
    if expected:
        assert verdict.unique()[0].error.detail == (
            "only kueue-system:kueue-controller-manager may suspend jobs matched by policy 'queued'"
        )


# --- SUS-004: scheduling directives ------------------------------------------------------------


NODE_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            ]
        }
    }
}


def _with_directive(obj: dict[str, Any], directive: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    template = out["spec"]["template"]
    if directive == "nodeSelector":
        template["spec"]["nodeSelector"] = {"cloud.provider/zone": "zone-a"}
    elif directive == "tolerations":
        template["spec"]["tolerations"] = [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
    elif directive == "templateLabels":
        template["metadata"]["labels"]["kueue.x-k8s.io/podset"] = "main"
    elif directive == "templateAnnotations":
        template["metadata"]["annotations"] = {"kueue.x-k8s.io/workload": "w"}
    elif directive == "nodeAffinity":
        template["spec"]["affinity"] = copy.deepcopy(NODE_AFFINITY)
    else:
        raise AssertionError(directive)
    return out


DIRECTIVES = [
    "nodeSelector",
    "tolerations",
    "templateLabels",
    "templateAnnotations",
    "nodeAffinity",
]


@pytest.mark.parametrize("directive", DIRECTIVES)
def test_sus004_user_cannot_replace_even_where_upstream_allows(directive: str) -> None:
    old = suspended_job()
    new = _with_directive(old, directive)
    # Upstream alone allows it: the old Job is suspended and has never started (TM-002).
    assert judge(Settings(), new, old).violations == []
    verdict = judge(BASE, new, old)
    assert causes(verdict) == [("SUS-004", "spec.template", FORBIDDEN)]
    assert not verdict.allowed
    detail = verdict.unique()[0].error.detail
    assert detail.startswith("only kueue-system:kueue-controller-manager may change")
    assert detail.endswith("of jobs matched by policy 'queued'")


@pytest.mark.parametrize("directive", DIRECTIVES)
def test_sus004_controller_may_replace(directive: str) -> None:
    old = suspended_job()
    verdict = judge(BASE, _with_directive(old, directive), old, user=KUEUE)
    assert clean(verdict)


def test_sus004_other_template_changes_are_not_sus004() -> None:
    old = suspended_job()
    new = copy.deepcopy(old)
    pod_spec(new)["containers"][0]["image"] = "busybox:2"
    assert causes(judge(BASE, new, old)) == [("TM-001", "spec.template", "FieldValueInvalid")]


def test_sus004_where_kep5440_allows_a_job_that_ran() -> None:
    # 1.36: a suspended Job that ran, with Suspended=True and no active pods, may be re-placed
    # upstream; under the policy only by its controller.
    s = settings_from(config_text(version="1.36"))
    old = with_status(
        suspended_job(),
        startTime=START,
        active=0,
        conditions=[{"type": "Suspended", "status": "True"}],
    )
    new = _with_directive(old, "nodeSelector")
    assert judge(parse_config('kubernetesVersion: "1.36"').to_settings(), new, old).violations == []
    assert causes(judge(s, new, old)) == [("SUS-004", "spec.template", FORBIDDEN)]
    assert judge(s, new, old, user=KUEUE).violations == []


def test_controller_admits_in_one_update() -> None:
    old = suspended_job()
    new = changed(_with_directive(_with_directive(old, "nodeSelector"), "tolerations"))
    new["spec"]["suspend"] = False
    assert judge(BASE, new, old, user=KUEUE).violations == []
    assert sus_rules(judge(BASE, new, old)) == ["SUS-002", "SUS-004"]


# --- SUS-005: leaving the policy -----------------------------------------------------------------


def _relabelled(obj: dict[str, Any], queue: str | None) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    labels = out["metadata"]["labels"]
    if queue is None:
        del labels[QUEUE_LABEL]
        labels["team"] = "a"  # keep the Job's own labels non-empty
    else:
        labels[QUEUE_LABEL] = queue
    return out


@pytest.mark.parametrize("queue", [None, "other-queue"], ids=["removed", "changed"])
def test_sus005_suspended_job_cannot_leave_the_queue(queue: str | None) -> None:
    old = suspended_job()
    new = _relabelled(old, queue)
    verdict = judge(BASE, new, old)
    assert causes(verdict) == [("SUS-005", "metadata.labels", FORBIDDEN)]
    assert verdict.unique()[0].error.detail == (
        "a job matched by policy 'queued' cannot be relabelled out of it "
        "(kueue.x-k8s.io/queue-name); only kueue-system:kueue-controller-manager may do that"
    )
    assert judge(BASE, new, old, user=KUEUE).violations == []


def test_sus005_removing_the_label_with_all_job_labels() -> None:
    old = suspended_job()
    new = copy.deepcopy(old)
    del new["metadata"]["labels"]
    assert causes(judge(BASE, new, old)) == [("SUS-005", "metadata.labels", FORBIDDEN)]


def test_sus005_also_for_a_running_job() -> None:
    # Relabel while running, then suspend and resume freely: three steps out of the queue.
    old = running_job()
    verdict = judge(BASE, _relabelled(old, None), old)
    assert causes(verdict) == [("SUS-005", "metadata.labels", FORBIDDEN)]
    assert judge(BASE, _relabelled(old, None), old, user=KUEUE).violations == []


def test_sus005_not_for_a_finished_job() -> None:
    old = running_job()
    old["status"] = {
        "startTime": "2026-01-01T00:00:00Z",
        "completionTime": "2026-01-01T01:00:00Z",
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"},
        ],
    }
    verdict = judge(BASE, _relabelled(old, None), old)
    assert "SUS-005" not in sus_rules(verdict)


def test_sus005_suspending_and_relabelling_in_one_update() -> None:
    # Two steps out of the queue: pause a running Job and drop its queue label at once (the
    # Job ends suspended and unmatched), then resume it as an unmatched Job.
    old = running_job()
    paused = _relabelled(changed(old, suspend=True), None)
    resumed = changed(paused, suspend=False)
    assert judge(BASE, resumed, paused).violations == []  # step 2 is not judged any more
    assert causes(judge(BASE, paused, old)) == [("SUS-005", "metadata.labels", FORBIDDEN)]


def test_sus005_relabelling_into_an_earlier_policy() -> None:
    # Adding a label that an earlier policy selects hands the Job to other controllers: it
    # leaves 'queued' although its queue-name label is untouched.
    vip = {
        "name": "vip",
        "match": {"namespaces": ["team-*"], "labelSelector": {"matchLabels": {"tier": "vip"}}},
        "controllers": {"serviceAccounts": ["vip-system:vip-controller"]},
    }
    s = settings_from(config_text(policies_before=[vip]))
    old = suspended_job()
    new = copy.deepcopy(old)
    new["metadata"]["labels"]["tier"] = "vip"
    verdict = judge(s, new, old)
    assert causes(verdict) == [("SUS-005", "metadata.labels", FORBIDDEN)]
    assert "policy 'queued'" in verdict.unique()[0].error.detail
    assert judge(s, new, old, user=KUEUE).violations == []
    # Once there, vip's controller could resume it.
    resumed = changed(new, suspend=False)
    assert judge(s, resumed, new, user="system:serviceaccount:vip-system:vip-controller").allowed


def test_sus005_unrelated_label_change_allowed() -> None:
    old = suspended_job()
    new = copy.deepcopy(old)
    new["metadata"]["labels"]["team"] = "a"
    assert judge(BASE, new, old).violations == []


# --- which policy applies ------------------------------------------------------------------------


def test_first_matching_policy_applies() -> None:
    strict_first = settings_from(config_text(policies_before=[STRICT_POLICY]))
    queued_first = settings_from(config_text(policies_after=[STRICT_POLICY]))
    old = suspended_job(namespace="team-a")
    new = changed(old, suspend=False)

    verdict = judge(strict_first, new, old, user=KUEUE)
    assert causes(verdict) == [("SUS-002", "spec.suspend", FORBIDDEN)]
    assert verdict.unique()[0].error.detail == (
        "only batch-system:other-controller may resume jobs matched by policy 'strict'"
    )
    assert judge(strict_first, new, old, user=OTHER_CONTROLLER).violations == []

    assert judge(queued_first, new, old, user=KUEUE).violations == []
    verdict = judge(queued_first, new, old, user=OTHER_CONTROLLER)
    assert [v.error.detail for v in verdict.unique()] == [
        "only kueue-system:kueue-controller-manager may resume jobs matched by policy 'queued'"
    ]

    # Outside team-a only 'queued' matches, whatever the order.
    old_b = suspended_job(namespace="team-b")
    new_b = changed(old_b, suspend=False)
    for s in (strict_first, queued_first):
        assert judge(s, new_b, old_b, user=KUEUE).violations == []
        assert sus_rules(judge(s, new_b, old_b, user=OTHER_CONTROLLER)) == ["SUS-002"]


# --- the door through jobs/status, and relabelling in (SUS-005, SUS-009) ----------------------


def test_a_relabel_through_status_is_judged_like_one_through_the_main_resource() -> None:
    old = suspended_job()
    # Through the main resource this resumes and leaves the queue: SUS-002 and SUS-005.
    new = _relabelled(changed(old, suspend=False), None)
    assert sus_rules(judge(BASE, new, old)) == ["SUS-002", "SUS-005"]
    # Through jobs/status the spec is the stored one (the status strategy copies it), but the
    # new labels are stored: leaving the queue there, then resuming, was a way around it.
    verdict = judge(BASE, with_status(new, active=0), old, sub="status")
    assert causes(verdict) == [("SUS-005", "metadata.labels", FORBIDDEN)]
    assert judge(BASE, with_status(new, active=0), old, sub="status", user=KUEUE).allowed
    root = judge(BASE, new, old, user="root", groups=("system:masters",), sub="status")
    assert root.allowed
    # A status write that keeps the labels is not a SUS matter.
    assert sus_rules(judge(BASE, with_status(old, active=0), old, sub="status")) == []


def test_status_update_by_user_over_http(client: TestClient) -> None:
    old = suspended_job()
    new = _relabelled(changed(old, suspend=False), None)
    response = client.post("/validate", json=body_for(new, old, sub="status")).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert audited_rules(response) == ["SUS-005"]
    main_resource = client.post("/validate", json=body_for(new, old)).json()["response"]
    assert audited_rules(main_resource) == ["SUS-002", "SUS-005"]


@pytest.mark.parametrize("sub", ["", "status"], ids=["jobs", "jobs-status"])
def test_sus009_a_running_job_cannot_be_relabelled_into_a_policy(sub: str) -> None:
    old = running_job(queue=None)
    new = _relabelled(old, "q") if "labels" in old["metadata"] else copy.deepcopy(old)
    new["metadata"].setdefault("labels", {})[QUEUE_LABEL] = "q"
    verdict = judge(BASE, new, old, sub=sub)
    assert causes(verdict) == [("SUS-009", "metadata.labels", FORBIDDEN)]
    assert verdict.unique()[0].error.detail == (
        "a running job cannot be relabelled into policy 'queued' (kueue.x-k8s.io/queue-name): "
        "it would run without its controllers' admission; suspend it first, or only "
        "kueue-system:kueue-controller-manager may do that"
    )
    assert judge(BASE, new, old, sub=sub, user=KUEUE).allowed
    assert judge(BASE, new, old, sub=sub, user="root", groups=("system:masters",)).allowed


def test_sus009_a_suspended_or_finished_job_may_join_a_queue() -> None:
    old = suspended_job(queue=None)
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {QUEUE_LABEL: "q"}
    # Suspended, it waits for the queue's controllers like any other (SUS-002 guards resuming).
    assert judge(BASE, new, old).allowed
    assert sus_rules(judge(BASE, changed(new, suspend=False), old)) == ["SUS-002", "SUS-009"]
    finished = with_status(
        running_job(queue=None),
        conditions=[{"type": "Failed", "status": "True"}],
    )
    relabelled = copy.deepcopy(finished)
    relabelled["metadata"]["labels"] = {QUEUE_LABEL: "q"}
    assert "SUS-009" not in sus_rules(judge(BASE, relabelled, finished))


def test_delete_is_never_judged(client: TestClient) -> None:
    old = suspended_job()
    r = client.post("/validate", json=body_for(None, old, "DELETE"))
    assert r.status_code == 200
    assert r.json()["response"] == {"uid": "uid-1", "allowed": True}
    # The same Job is judged on UPDATE (resuming): DELETE differs only by being skipped.
    resumed = client.post("/validate", json=body_for(changed(old, suspend=False), old))
    assert resumed.json()["response"]["allowed"] is False


# --- enforcement and response shapes -----------------------------------------------------------


def test_deny_is_forbidden_403_naming_policy_rule_and_alternative(client: TestClient) -> None:
    body = read_review("cases/sus/user-resumes.json")
    r = client.post("/validate", json=body)
    assert r.status_code == 200
    assert r.json() == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": body["request"]["uid"],
            "allowed": False,
            "status": {
                "status": "Failure",
                "message": f'Job.batch "pi" is forbidden: SUS-002 spec.suspend: Forbidden: '
                f"{SUS_002_TEXT}",
                "reason": "Forbidden",
                "details": {
                    "name": "pi",
                    "group": "batch",
                    "kind": "Job",
                    "causes": [
                        {
                            "reason": FORBIDDEN,
                            "message": f"SUS-002: Forbidden: {SUS_002_TEXT}",
                            "field": "spec.suspend",
                        }
                    ],
                },
                "code": 403,
            },
            "auditAnnotations": {"violations": "SUS-002=deny"},
        },
    }


def test_deny_with_several_policy_rules_aggregates(client: TestClient) -> None:
    old = suspended_job()
    new = _with_directive(changed(old, suspend=False), "nodeSelector")
    response = client.post("/validate", json=body_for(new, old)).json()["response"]
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"]) == (403, "Forbidden")
    assert status["message"].startswith('Job.batch "pi" is forbidden: [SUS-002 spec.suspend: ')
    assert (
        "SUS-004 spec.template: Forbidden: only kueue-system:kueue-controller-manager"
        in (status["message"])
    )
    assert [(c["field"], c["message"][:8]) for c in status["details"]["causes"]] == [
        ("spec.suspend", "SUS-002:"),
        ("spec.template", "SUS-004:"),
    ]
    assert audited_rules(response) == ["SUS-002", "SUS-004"]
    assert "warnings" not in response


def test_create_denied_over_http_names_sus001(client: TestClient) -> None:
    body = read_review("cases/sus/user-creates-running.json")
    response = client.post("/validate", json=body).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["message"] == (
        'Job.batch "pi" is forbidden: SUS-001 spec.suspend: Forbidden: jobs matched by policy '
        "'queued' must be created suspended (spec.suspend: true); only "
        "kueue-system:kueue-controller-manager may create them running"
    )
    assert response["auditAnnotations"] == {"violations": "SUS-001=deny"}


def _resume_and_move() -> dict[str, Any]:
    old = suspended_job()
    new = _with_directive(changed(old, suspend=False), "nodeSelector")
    new = _relabelled(new, "other-queue")
    return body_for(new, old)


def test_warn_mode_allows_with_one_line_warnings() -> None:
    text = config_text(rules={"SUS-*": {"enforcement": "warn"}})
    response = response_of(text, "/validate", _resume_and_move())
    assert response["allowed"] is True
    assert "status" not in response
    warnings = response["warnings"]
    assert [w.split(" ")[0] for w in warnings] == ["SUS-002", "SUS-004", "SUS-005"]
    for warning in warnings:
        assert len(warning) <= 120
        assert "\n" not in warning and "\r" not in warning
    assert warnings[0] == f"SUS-002 spec.suspend: {SUS_002_TEXT}"
    assert audited_rules(response) == ["SUS-002", "SUS-004", "SUS-005"]
    assert response["auditAnnotations"]["violations"] == "SUS-002=warn,SUS-004=warn,SUS-005=warn"


def test_dryrun_mode_allows_silently_but_audits() -> None:
    text = config_text(rules={"SUS-*": {"enforcement": "dryrun"}})
    response = response_of(text, "/validate", _resume_and_move())
    assert response == {
        "uid": "uid-1",
        "allowed": True,
        "auditAnnotations": {"violations": "SUS-002=dryrun,SUS-004=dryrun,SUS-005=dryrun"},
    }


@pytest.mark.parametrize("mode", ["deny", "warn", "dryrun"])
def test_every_mode_audits_the_fired_rules(mode: str) -> None:
    text = config_text(rules={"SUS-*": {"enforcement": mode}})
    old = suspended_job()
    response = response_of(text, "/validate", body_for(changed(old, suspend=False), old))
    assert response["allowed"] is (mode != "deny")
    assert audited_rules(response) == ["SUS-002"]
    assert ("warnings" in response) is (mode == "warn")
    assert ("status" in response) is (mode == "deny")
    # Nothing fired: no annotations in any mode.
    quiet = response_of(text, "/validate", body_for(changed(old, suspend=False), old, user=KUEUE))
    assert quiet == {"uid": "uid-1", "allowed": True}


def test_upstream_and_policy_denials_answer_422_invalid(client: TestClient) -> None:
    old = running_job()
    new = _with_directive(old, "nodeSelector")
    response = client.post("/validate", json=body_for(new, old)).json()["response"]
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"], status["status"]) == (422, "Invalid", "Failure")
    assert status["message"].startswith('Job.batch "pi" is invalid: [spec.template: Invalid value')
    assert [(c["field"], c["reason"]) for c in status["details"]["causes"]] == [
        ("spec.template", "FieldValueInvalid"),
        ("spec.template", FORBIDDEN),
    ]
    assert status["details"]["causes"][1]["message"].startswith(
        "Forbidden: only kueue-system:kueue-controller-manager may change"
    )
    assert response["auditAnnotations"] == {"violations": "TM-001=deny,SUS-004=deny"}
    # The controller hits only the upstream rule.
    by_kueue = client.post("/validate", json=body_for(new, old, user=KUEUE)).json()["response"]
    assert by_kueue["status"]["code"] == 422
    assert by_kueue["auditAnnotations"] == {"violations": "TM-001=deny"}


def test_upstream_rule_in_warn_leaves_the_policy_denial_403() -> None:
    text = config_text(rules={"TM-*": {"enforcement": "warn"}})
    old = running_job()
    response = response_of(text, "/validate", body_for(_with_directive(old, "nodeSelector"), old))
    assert response["allowed"] is False
    assert (response["status"]["code"], response["status"]["reason"]) == (403, "Forbidden")
    assert [c["field"] for c in response["status"]["details"]["causes"]] == ["spec.template"]
    assert [w.split(" ")[0] for w in response["warnings"]] == ["TM-001"]
    assert response["auditAnnotations"] == {"violations": "TM-001=warn,SUS-004=deny"}


# --- /mutate -------------------------------------------------------------------------------------


SUSPEND_PATCH = [{"op": "add", "path": "/spec/suspend", "value": True}]


@pytest.mark.parametrize("suspend", [False, None], ids=["false", "unset"])
def test_mutate_suspends_a_user_create(client: TestClient, suspend: bool | None) -> None:
    obj = queued_job()
    if suspend is None:
        del obj["spec"]["suspend"]
    else:
        obj["spec"]["suspend"] = suspend
    r = client.post("/mutate", json=body_for(obj))
    assert r.status_code == 200
    payload = r.json()
    assert payload["apiVersion"] == "admission.k8s.io/v1"
    assert payload["kind"] == "AdmissionReview"
    response = payload["response"]
    assert response["uid"] == "uid-1"
    assert response["allowed"] is True
    assert response["patchType"] == "JSONPatch"
    assert "status" not in response
    patch = orjson.loads(base64.b64decode(response["patch"], validate=True))
    assert patch == SUSPEND_PATCH

    # Without the patch /validate refuses the object; with it, it allows it.
    unpatched = client.post("/validate", json=body_for(obj)).json()["response"]
    assert unpatched["allowed"] is False and audited_rules(unpatched) == ["SUS-001"]
    patched = apply_patch(obj, patch)
    assert patched["spec"]["suspend"] is True
    assert client.post("/validate", json=body_for(patched)).json()["response"] == {
        "uid": "uid-1",
        "allowed": True,
    }
    # ... and mutating it again changes nothing.
    assert client.post("/mutate", json=body_for(patched)).json()["response"] == {
        "uid": "uid-1",
        "allowed": True,
    }


def queued_cronjob() -> dict[str, Any]:
    """A CronJob in the queue: policies judge Jobs, never CronJobs or their templates."""
    obj = cronjob("pi", namespace="team-a")
    obj["metadata"]["labels"] = {QUEUE_LABEL: "q"}
    obj["spec"]["jobTemplate"]["metadata"] = {"labels": {QUEUE_LABEL: "q"}}
    return obj


def _unpatched_cases() -> list[Any]:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "pi", "namespace": "team-a", "labels": {QUEUE_LABEL: "q"}},
        "spec": {"suspend": False},
    }
    running = running_job()
    return [
        pytest.param(body_for(queued_job(suspend=True)), id="already-suspended"),
        pytest.param(body_for(queued_job(), user=KUEUE), id="controller"),
        pytest.param(body_for(queued_job(queue=None)), id="unmatched-no-label"),
        pytest.param(body_for(queued_job(namespace="default")), id="unmatched-namespace"),
        pytest.param(body_for(changed(running, parallelism=2), running), id="update"),
        pytest.param(body_for(deployment, resource="deployments"), id="deployment"),
        pytest.param(body_for(queued_cronjob(), resource="cronjobs"), id="cronjob"),
        pytest.param(body_for(None, running, "DELETE"), id="delete"),
    ]


@pytest.mark.parametrize("body", _unpatched_cases())
def test_mutate_leaves_other_requests_alone(client: TestClient, body: dict[str, Any]) -> None:
    r = client.post("/mutate", json=body)
    assert r.status_code == 200
    assert r.json() == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "uid-1", "allowed": True},
    }


@pytest.mark.parametrize(
    ("user", "groups"),
    [
        (USER, ["system:authenticated", "system:masters"]),
        ("kubernetes-admin", ["kubeadm:cluster-admins", "system:authenticated"]),
        ("system:serviceaccount:kube-system:cronjob-controller", ["system:serviceaccounts"]),
    ],
    ids=["configured-exempt-group", "built-in-admin-group", "built-in-cronjob-controller"],
)
def test_mutate_holds_matched_jobs_of_exempt_requesters(
    client: TestClient, user: str, groups: list[str]
) -> None:
    # Exemptions stop denials, not the suspension that holds a matched Job for its queue: the
    # Jobs a CronJob spawns wait for Kueue like any other, and the exempt requester may resume.
    body = body_for(queued_job(), user=user, groups=groups)
    response = client.post("/mutate", json=body).json()["response"]
    assert orjson.loads(base64.b64decode(response["patch"])) == SUSPEND_PATCH
    mutated = body_for(queued_job(suspend=True), user=user, groups=groups)
    assert client.post("/validate", json=mutated).json()["response"] == {
        "uid": "uid-1",
        "allowed": True,
    }
    old = suspended_job()
    resume = body_for(changed(old, suspend=False), old, user=user, groups=groups)
    assert client.post("/validate", json=resume).json()["response"]["allowed"] is True


def test_mutate_leaves_exempt_namespace_alone() -> None:
    text = config_text(all_namespaces=True)
    assert response_of(text, "/mutate", body_for(queued_job(namespace="kube-system"))) == {
        "uid": "uid-1",
        "allowed": True,
    }
    # The same Job elsewhere is patched under this configuration.
    patched = response_of(text, "/mutate", body_for(queued_job(namespace="default")))
    assert orjson.loads(base64.b64decode(patched["patch"])) == SUSPEND_PATCH


def test_mutate_only_with_force_suspend_on_create() -> None:
    text = config_text(force_suspend=False)
    assert response_of(text, "/mutate", body_for(queued_job())) == {
        "uid": "uid-1",
        "allowed": True,
    }


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        orjson.dumps({"kind": "Pod", "apiVersion": "v1"}),
        orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
        orjson.dumps({**body_for(queued_job()), "apiVersion": "admission.k8s.io/v2"}),
    ],
    ids=["not-json", "array", "pod", "no-request", "wrong-version"],
)
def test_mutate_rejects_bodies_that_are_not_reviews(client: TestClient, body: bytes) -> None:
    r = client.post("/mutate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    payload = r.json()
    assert list(payload) == ["error"] and payload["error"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(body_for(queued_job()), id="would-be-mutated"),
        pytest.param(body_for(queued_job(suspend=True)), id="suspended"),
        pytest.param(body_for(queued_job(), user=KUEUE), id="controller"),
    ],
)
def test_validate_never_patches(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/validate", json=body).json()["response"]
    assert "patch" not in response and "patchType" not in response


# --- jobguard review --mutate ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(body_for(queued_job()), id="patched"),
        pytest.param(body_for(queued_job(), user=KUEUE), id="controller"),
        pytest.param(body_for(queued_job(namespace="default")), id="unmatched"),
    ],
)
def test_review_mutate_prints_what_mutate_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], client: TestClient, body: dict[str, Any]
) -> None:
    config = tmp_path / "jobguard.yaml"
    config.write_text(KUEUE_CONFIG)
    request = tmp_path / "review.json"
    request.write_bytes(orjson.dumps(body))
    capsys.readouterr()
    assert main(["review", "--mutate", "--config", str(config), str(request)]) == 0
    printed = orjson.loads(capsys.readouterr().out)
    assert printed == client.post("/mutate", json=body).json()


def test_review_mutate_patch_matches_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "jobguard.yaml"
    config.write_text(KUEUE_CONFIG)
    request = tmp_path / "review.json"
    request.write_bytes(orjson.dumps(body_for(queued_job())))
    capsys.readouterr()
    assert main(["review", "--mutate", "--config", str(config), str(request)]) == 0
    response = orjson.loads(capsys.readouterr().out)["response"]
    assert response["patchType"] == "JSONPatch"
    assert orjson.loads(base64.b64decode(response["patch"])) == SUSPEND_PATCH
    # Without --mutate the same file is judged as /validate does: denied by SUS-001.
    assert main(["review", "--config", str(config), str(request)]) == 1
    judged = orjson.loads(capsys.readouterr().out)
    status, expected = post(KUEUE_CONFIG, "/validate", body_for(queued_job()))
    assert status == 200 and judged == expected
    assert judged["response"]["auditAnnotations"] == {"violations": "SUS-001=deny"}


# --- SUS-006: scaling a running Job past what the queue admitted ---------------------------------


def indexed_running_job(count: int = 2) -> dict[str, Any]:
    return running_job(completionMode="Indexed", completions=count, parallelism=count)


@pytest.mark.parametrize(
    ("old", "spec", "expected"),
    [
        (running_job(), {"parallelism": 100}, [("SUS-006", "spec.parallelism", FORBIDDEN)]),
        (
            indexed_running_job(),
            {"parallelism": 4, "completions": 4},
            [("SUS-006", "spec.parallelism", FORBIDDEN)],
        ),
        (running_job(parallelism=4, completions=8), {"parallelism": 2}, []),
        (indexed_running_job(4), {"parallelism": 2, "completions": 2}, []),
        (suspended_job(), {"parallelism": 100}, []),
    ],
    ids=["raise", "elastic-indexed-raise", "lower", "elastic-indexed-lower", "suspended"],
)
def test_sus006_only_controllers_scale_up_running_jobs(
    old: dict[str, Any], spec: dict[str, Any], expected: list[tuple[str, str, str]]
) -> None:
    new = changed(old, **spec)
    assert causes(judge(BASE, new, old)) == expected
    assert judge(BASE, new, old, user=KUEUE).violations == []


def test_sus006_message_names_the_change_and_who_may() -> None:
    old = running_job()
    verdict = judge(BASE, changed(old, parallelism=100), old)
    assert verdict.unique()[0].error.message() == (
        "spec.parallelism: Forbidden: only kueue-system:kueue-controller-manager may raise "
        "parallelism (1 -> 100) of running jobs matched by policy 'queued'"
    )


def test_sus006_indexed_completions_alone_is_sus006_and_im002() -> None:
    # Raising only completions of an Indexed Job is refused upstream (IM-002) and here.
    old = indexed_running_job()
    verdict = judge(BASE, changed(old, completions=4), old)
    assert [(r, p) for r, p, _ in causes(verdict)] == [
        ("IM-002", "spec.completions"),
        ("SUS-006", "spec.completions"),
    ]


def test_sus006_resuming_with_more_pods_is_two_violations() -> None:
    old = suspended_job()
    new = changed(old, suspend=False, parallelism=8)
    assert sus_rules(judge(BASE, new, old)) == ["SUS-002", "SUS-006"]
    assert judge(BASE, new, old, user=KUEUE).violations == []


def test_sus006_not_for_finished_or_unmatched_jobs() -> None:
    done = with_status(
        running_job(),
        active=0,
        completionTime="2026-01-01T11:00:00Z",
        conditions=[
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"},
        ],
    )
    assert "SUS-006" not in sus_rules(judge(BASE, changed(done, parallelism=9), done))
    plain = running_job(queue=None)
    assert judge(BASE, changed(plain, parallelism=9), plain).violations == []


# --- SUS-007: CronJobs whose Jobs a policy matches -----------------------------------------------


def test_sus007_warns_that_the_jobs_are_held(client: TestClient) -> None:
    response = client.post("/validate", json=body_for(queued_cronjob(), resource="cronjobs"))
    answer = response.json()["response"]
    assert answer["allowed"] is True
    assert answer["warnings"] == [
        "SUS-007 spec.jobTemplate: its Jobs match policy 'queued': created suspended, they run "
        "once its controllers resume them"
    ]
    assert answer["auditAnnotations"] == {"violations": "SUS-007=warn"}


@pytest.mark.parametrize(
    ("force_suspend", "template_suspended", "built_in", "detail"),
    [
        (True, False, True, "created suspended, they run once its controllers resume them"),
        (False, True, True, "created suspended, they run once its controllers resume them"),
        (False, False, True, "but start at once (the cronjob-controller is exempt)"),
        (False, False, False, "and start running: SUS-001 denies each one"),
    ],
    ids=["mutated", "template-suspended", "exempt-controller", "denied"],
)
def test_sus007_says_what_becomes_of_the_jobs(
    force_suspend: bool, template_suspended: bool, built_in: bool, detail: str
) -> None:
    data = yaml.safe_load(config_text(force_suspend=force_suspend))
    data["exemptions"]["builtIn"] = built_in
    s = settings_from(yaml.safe_dump(data))
    obj = queued_cronjob()
    obj["spec"]["jobTemplate"]["spec"]["suspend"] = template_suspended
    verdict = judge(s, obj, kind="CronJob")
    assert causes(verdict) == [("SUS-007", "spec.jobTemplate", FORBIDDEN)]
    assert verdict.allowed
    assert verdict.unique()[0].enforcement.value == "warn"
    assert verdict.unique()[0].error.detail.endswith(detail)


def test_sus007_on_update_too() -> None:
    # Adding the queue label to a CronJob's template brings its future Jobs into the policy.
    old = cronjob("pi", namespace="team-a")
    new = queued_cronjob()
    verdict = judge(BASE, new, old, kind="CronJob")
    assert causes(verdict) == [("SUS-007", "spec.jobTemplate", FORBIDDEN)] and verdict.allowed


def test_sus007_reads_the_pod_template_labels_when_the_job_template_has_none() -> None:
    obj = cronjob("pi", namespace="team-a")
    obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"][QUEUE_LABEL] = "q"
    assert [r for r, _, _ in causes(judge(BASE, obj, kind="CronJob"))] == ["SUS-007"]


@pytest.mark.parametrize("namespace", ["default", "kueue-system"], ids=["unmatched", "exempt"])
def test_sus007_silent_for_unmatched_or_exempt_namespaces(namespace: str) -> None:
    obj = queued_cronjob()
    obj["metadata"]["namespace"] = namespace
    assert clean(judge(settings_from(config_text(all_namespaces=True)), obj, kind="CronJob")) is (
        namespace == "kueue-system"
    )
    assert clean(judge(BASE, obj, kind="CronJob"))


# --- an empty queue label is no queue (as Kueue reads it) ----------------------------------------


def test_empty_queue_label_is_no_queue(client: TestClient) -> None:
    obj = queued_job(queue="")
    assert clean(judge(BASE, obj))
    assert client.post("/mutate", json=body_for(obj)).json()["response"] == {
        "uid": "uid-1",
        "allowed": True,
    }
    # Emptying the label of a queued Job takes it out of the queue: SUS-005.
    old = suspended_job()
    emptied = copy.deepcopy(old)
    emptied["metadata"]["labels"][QUEUE_LABEL] = ""
    assert causes(judge(BASE, emptied, old)) == [("SUS-005", "metadata.labels", FORBIDDEN)]


# --- SUS-008: the forced suspension holds when /mutate does not answer --------------------------

CRONJOB_CONTROLLER = "system:serviceaccount:kube-system:cronjob-controller"
SUS_008_TEXT = (
    "jobs matched by policy 'queued' are created suspended by jobguard's mutating webhook, "
    "which did not suspend this one (unavailable or refused); "
    f"{CRONJOB_CONTROLLER} acts for others and cannot start it without the queue: only "
    "kueue-system:kueue-controller-manager may create it running"
)


@pytest.mark.parametrize(
    ("user", "groups"),
    [
        (CRONJOB_CONTROLLER, ("system:serviceaccounts", "system:authenticated")),
        ("system:kube-controller-manager", ("system:authenticated",)),
    ],
    ids=["cronjob-controller", "kube-controller-manager"],
)
def test_built_in_controller_cannot_create_a_forced_job_running(
    user: str, groups: tuple[str, ...]
) -> None:
    # What /validate sees when /mutate was skipped (down, slow, refused): the Job as the
    # cronjob-controller wrote it from the CronJob's template.
    verdict = judge(BASE, queued_job(), user=user, groups=groups)
    assert [(v.error.rule, v.error.path) for v in verdict.denials] == [("SUS-008", "spec.suspend")]
    assert verdict.denials[0].error.detail == SUS_008_TEXT.replace(CRONJOB_CONTROLLER, user)
    # Suspended by /mutate, or written suspended: allowed.
    assert judge(BASE, queued_job(suspend=True), user=user, groups=groups).allowed


@pytest.mark.parametrize(
    ("config", "obj", "groups"),
    [
        # Without forceSuspendOnCreate the cronjob-controller stays exempt: nothing is bypassed.
        (config_text(force_suspend=False), queued_job(), ()),
        # Jobs no policy matches, and exempt namespaces.
        (KUEUE_CONFIG, queued_job(queue=None), ()),
        (KUEUE_CONFIG, queued_job(queue=""), ()),
        (KUEUE_CONFIG, queued_job(namespace="batch"), ()),
        (KUEUE_CONFIG, queued_job(namespace="kueue-system"), ()),
        # A configured exemption of the controller itself is the administrator's choice.
        (
            config_text(exempt_service_accounts=["kube-system:cronjob-controller"]),
            queued_job(),
            (),
        ),
        # The administrators' groups are exempt from everything.
        (KUEUE_CONFIG, queued_job(), ("system:masters",)),
    ],
    ids=[
        "no-force",
        "no-label",
        "empty-label",
        "other-namespace",
        "exempt-namespace",
        "configured-exemption",
        "admin-group",
    ],
)
def test_forced_suspension_leaves_others_alone(
    config: str, obj: dict[str, Any], groups: tuple[str, ...]
) -> None:
    verdict = judge(settings_from(config), obj, user=CRONJOB_CONTROLLER, groups=groups)
    assert verdict.violations == []


def test_forced_suspension_bypass_is_denied_and_counted_over_http(client: TestClient) -> None:
    body = body_for(queued_job(), user=CRONJOB_CONTROLLER, groups=["system:serviceaccounts"])
    response = client.post("/validate", json=body).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["reason"] == "Forbidden"
    assert response["status"]["details"]["causes"] == [
        {
            "reason": FORBIDDEN,
            "message": f"SUS-008: Forbidden: {SUS_008_TEXT}",
            "field": "spec.suspend",
        }
    ]
    assert response["auditAnnotations"] == {"violations": "SUS-008=deny"}
    metrics = client.get("/metrics").text
    assert (
        'jobguard_violations_total{enforcement="deny",operation="CREATE",policy="queued",'
        'rule="SUS-008"} 1.0' in metrics
    )
    # The same review after /mutate's patch is allowed.
    patched = body_for(
        queued_job(suspend=True), user=CRONJOB_CONTROLLER, groups=["system:serviceaccounts"]
    )
    assert client.post("/validate", json=patched).json()["response"]["allowed"] is True
