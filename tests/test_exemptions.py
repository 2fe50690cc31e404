"""Exemptions: requesters no policy rule (NE, SUS) ever denies; the built-in defaults (the
controllers of kube-controller-manager acting as themselves, cluster administrators) and how a
configuration adds to them or turns them off."""

from __future__ import annotations

import pytest

from jobguard.app.config import load_config, parse_config
from jobguard.validators import (
    BUILT_IN_EXEMPTIONS,
    Operation,
    Request,
    Requester,
    Settings,
    Verdict,
    evaluate,
)
from tests.builders import START, causes, cond, job, with_status

JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
CRONJOB_CONTROLLER = "system:serviceaccount:kube-system:cronjob-controller"
GARBAGE_COLLECTOR = "system:serviceaccount:kube-system:generic-garbage-collector"
SHARED_IDENTITY = "system:kube-controller-manager"
FORBIDDEN = "FieldValueForbidden"

NE_ALL = """
rules:
  "NE-*": {enabled: true, enforcement: deny}
  NE-007: {params: {users: ["system:serviceaccount:kueue-system:*"]}}
"""


def test_built_in_exemptions_are_exactly_these() -> None:
    assert BUILT_IN_EXEMPTIONS.users == (SHARED_IDENTITY,)
    assert BUILT_IN_EXEMPTIONS.service_accounts == (
        "kube-system:job-controller",
        "kube-system:cronjob-controller",
        "kube-system:generic-garbage-collector",
    )
    assert BUILT_IN_EXEMPTIONS.groups == ("system:masters", "kubeadm:cluster-admins")


def test_defaults_keep_them_and_configured_lists_add_to_them() -> None:
    assert load_config(None).to_settings().policies.exemptions.built_in == BUILT_IN_EXEMPTIONS
    configured = parse_config("exemptions: {users: [ops], namespaces: [batch-*]}").to_settings()
    exemptions = configured.policies.exemptions
    assert exemptions.built_in == BUILT_IN_EXEMPTIONS
    assert (exemptions.subjects.users, exemptions.namespaces) == (("ops",), ("batch-*",))
    off = parse_config("exemptions: {builtIn: false, users: [ops]}").to_settings()
    assert off.policies.exemptions.built_in.users == ()
    assert off.policies.exemptions.subjects.users == ("ops",)
    # The library's bare value exempts nobody: only the configuration adds the defaults.
    assert Settings().policies.exemptions.built_in.users == ()


def judge(
    settings: Settings,
    new: dict,
    old: dict | None,
    user: str,
    groups: tuple[str, ...] = (),
    sub: str = "",
    namespace: str = "default",
) -> Verdict:
    operation = Operation.CREATE if old is None else Operation.UPDATE
    return evaluate(
        Request(
            "Job",
            operation,
            new,
            old,
            subresource=sub,
            namespace=namespace,
            requester=Requester(user, groups),
        ),
        settings,
    )


SUSPENDED_AFTER_RUN = with_status(
    job(suspend=True), startTime=START, active=0, conditions=[cond("Suspended")]
)
REMOVED_CONDITION = with_status(SUSPENDED_AFTER_RUN, conditions=[])
DONE = with_status(
    job(),
    startTime=START,
    completionTime="2026-01-01T11:00:00Z",
    conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
)
SUSPENDED_DONE = {**DONE, "spec": {**DONE["spec"], "suspend": True}}


@pytest.mark.parametrize(
    ("user", "groups"),
    [
        (JOB_CONTROLLER, ()),
        (CRONJOB_CONTROLLER, ()),
        (GARBAGE_COLLECTOR, ()),
        (SHARED_IDENTITY, ()),
        ("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated")),
        ("root", ("system:masters",)),
    ],
)
def test_no_policy_rule_judges_a_built_in_exempt_requester(
    user: str, groups: tuple[str, ...]
) -> None:
    settings = parse_config(NE_ALL).to_settings()
    other = Requester("system:serviceaccount:batch-system:job-manager")
    # NE-002 on a status update, NE-001 and NE-007 on an update: denied to anyone else ...
    status = judge(settings, REMOVED_CONDITION, SUSPENDED_AFTER_RUN, other.username, sub="status")
    assert causes(status) == [("NE-002", "status.conditions", FORBIDDEN)]
    update = judge(settings, SUSPENDED_DONE, DONE, other.username)
    assert [r for r, _, _ in causes(update)] == ["NE-001", "NE-007"]
    # ... and never to the exempt requester.
    assert judge(settings, REMOVED_CONDITION, SUSPENDED_AFTER_RUN, user, groups, "status").allowed
    assert judge(settings, SUSPENDED_DONE, DONE, user, groups).violations == []


def test_exempt_requesters_still_meet_upstream_rules() -> None:
    # Exemptions cover policy rules only: the API server applies its own rules to everyone.
    settings = load_config(None).to_settings()
    bad = with_status(SUSPENDED_AFTER_RUN, ready=3, active=0)
    verdict = judge(settings, bad, SUSPENDED_AFTER_RUN, JOB_CONTROLLER, sub="status")
    assert causes(verdict) == [("ST-040", "status.ready", "FieldValueInvalid")]


def test_built_in_exemptions_can_be_turned_off() -> None:
    settings = parse_config(NE_ALL + "exemptions: {builtIn: false}\n").to_settings()
    verdict = judge(settings, REMOVED_CONDITION, SUSPENDED_AFTER_RUN, JOB_CONTROLLER, sub="status")
    assert causes(verdict) == [("NE-002", "status.conditions", FORBIDDEN)]


@pytest.mark.parametrize(("namespace", "judged"), [("batch-a", False), ("default", True)])
def test_namespace_exemptions_cover_ne_rules(namespace: str, judged: bool) -> None:
    settings = parse_config(NE_ALL + "exemptions: {namespaces: [batch-*]}\n").to_settings()
    new = {**SUSPENDED_DONE, "metadata": {**SUSPENDED_DONE["metadata"], "namespace": namespace}}
    old = {**DONE, "metadata": {**DONE["metadata"], "namespace": namespace}}
    verdict = judge(settings, new, old, "alice", namespace=namespace)
    assert (verdict.violations != []) is judged
