"""The policy cases of the webhook's tests, judged twice: by the webhook (the admission chain's
validating stage, as /validate answers) and by the exported ValidatingAdmissionPolicies on
cel-cpp (`tests.vap_eval`). `agreement_table()` renders the comparison for docs/VAP.md.

Run `python -m tests.vap_cases` to rewrite the table in docs/VAP.md.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from jobguard.app.config import parse_config
from jobguard.validators import Operation, Request, Requester, Settings, Stage, admit
from jobguard.validators.vap import VALIDATION_ACTIONS, VapExport, export_vap
from tests.builders import LATER, START, cond, job, with_status
from tests.cases import read_review
from tests.corpus import DATA, KUEUE_SETUP
from tests.test_policy import (
    DIRECTIVES,
    KUEUE,
    OTHER_CONTROLLER,
    STRICT_POLICY,
    USER,
    _relabelled,
    _with_directive,
    changed,
    config_text,
    queued_job,
    running_job,
    suspended_job,
)
from tests.test_rules_suspend import (
    DONE,
    FAILED_JOB,
    IDLE_RUNNING,
    NEVER_STARTED_SUSPENDED,
    NOT_SUSPENDED,
    RUNNING,
    SUSPENDED,
    SUSPENDED_AFTER_RUN,
    SUSPENDING,
)
from tests.vap_eval import Call, decide, defaulted

DOCS = Path(__file__).resolve().parents[1] / "docs" / "VAP.md"
BEGIN, END = "<!-- agreement:begin -->", "<!-- agreement:end -->"
AUTHENTICATED = ("system:authenticated",)

Finding = tuple[str, str, str]
"""(rule ID, validation action, message)."""


@dataclass(frozen=True, slots=True)
class PolicyCase:
    name: str
    config: str
    call: Call


KUEUE_TEXT = KUEUE_SETUP.read_text()
USERS_MAY_SUSPEND = config_text()
ALL_NAMESPACES = config_text(
    all_namespaces=True,
    exempt_users=["root@example.com"],
    exempt_service_accounts=["ops:janitor"],
)
NE_ALL = yaml.safe_dump(
    {
        "kubernetesVersion": "1.35",
        "rules": {
            "NE-00*": {"enabled": True},
            "NE-007": {"enabled": True, "params": {"users": ["system:serviceaccount:kueue-*"]}},
        },
    }
)
WARNINGS_TEXT = (DATA / "config" / "suspend-warnings.yaml").read_text()


def _call(
    new: Any,
    old: Any = None,
    user: str = USER,
    groups: tuple[str, ...] = AUTHENTICATED,
    resource: str = "jobs",
) -> Call:
    source = new if isinstance(new, dict) else old
    operation = "CREATE" if old is None else "UPDATE"
    return Call(operation, resource, source["metadata"]["namespace"], new, old, user, groups)


def _review(path: str) -> Call:
    request = read_review(path)["request"]
    resource = request["resource"]["resource"]
    if request.get("subResource"):
        resource += "/" + request["subResource"]
    info = request["userInfo"]
    return Call(
        request["operation"],
        resource,
        request["namespace"],
        request["object"],
        request.get("oldObject"),
        info["username"],
        tuple(info.get("groups") or ()),
    )


def _policy_cases() -> list[PolicyCase]:
    cases = [
        PolicyCase(f"data: {path}", KUEUE_TEXT, _review(f"cases/sus/{path}"))
        for path in (
            "user-creates-suspended.json",
            "user-creates-running.json",
            "user-resumes.json",
            "kueue-resumes.json",
            "user-suspends.json",
            "user-replaces.json",
            "user-relabels.json",
        )
    ]
    unset = queued_job()
    del unset["spec"]["suspend"]
    cases += [
        PolicyCase("SUS-001 user creates running", USERS_MAY_SUSPEND, _call(queued_job())),
        PolicyCase("SUS-001 user creates, suspend unset", USERS_MAY_SUSPEND, _call(unset)),
        PolicyCase("SUS-001 user creates suspended", USERS_MAY_SUSPEND, _call(suspended_job())),
        PolicyCase(
            "SUS-001 controller creates running",
            USERS_MAY_SUSPEND,
            _call(queued_job(), user=KUEUE),
        ),
    ]
    exemptions = [
        ("not exempt namespace", "default", USER, AUTHENTICATED),
        ("exempt namespace", "kube-system", USER, AUTHENTICATED),
        ("exempt group", "team-a", USER, (*AUTHENTICATED, "system:masters")),
        ("exempt user", "team-a", "root@example.com", ()),
        ("exempt service account", "team-a", "system:serviceaccount:ops:janitor", ()),
        ("other service account", "team-a", "system:serviceaccount:ops:other", ()),
    ]
    cases += [
        PolicyCase(
            f"SUS-001 {name}",
            ALL_NAMESPACES,
            _call(queued_job(namespace=namespace), user=user, groups=groups),
        )
        for name, namespace, user, groups in exemptions
    ]
    unmatched = [
        ("no queue label", "team-a", None),
        ("other namespace", "default", "q"),
        ("glob is anchored", "my-team-a", "q"),
        ("no dash", "teams", "q"),
    ]
    cases += [
        PolicyCase(
            f"SUS-001 unmatched: {name}",
            USERS_MAY_SUSPEND,
            _call(queued_job(namespace=namespace, queue=queue)),
        )
        for name, namespace, queue in unmatched
    ]
    # A label with an empty value is absent, as Kueue reads it: no queue, no policy.
    empty_label_old = suspended_job(queue="")
    cases += [
        PolicyCase("SUS-001 empty queue label", USERS_MAY_SUSPEND, _call(queued_job(queue=""))),
        PolicyCase(
            "SUS-002 empty queue label, resumed",
            USERS_MAY_SUSPEND,
            _call(changed(empty_label_old, suspend=False), empty_label_old),
        ),
    ]
    # SUS-008: with no mutating webhook in the path, a built-in controller's unsuspended
    # matched CREATE is denied instead of started without the queue.
    cronjob_controller = "system:serviceaccount:kube-system:cronjob-controller"
    service_accounts = ("system:serviceaccounts", *AUTHENTICATED)
    cases += [
        PolicyCase(
            "SUS-008 cronjob-controller creates running",
            KUEUE_TEXT,
            _call(queued_job(), user=cronjob_controller, groups=service_accounts),
        ),
        PolicyCase(
            "SUS-008 cronjob-controller creates suspended",
            KUEUE_TEXT,
            _call(suspended_job(), user=cronjob_controller, groups=service_accounts),
        ),
        PolicyCase(
            "SUS-008 kube-controller-manager creates running",
            KUEUE_TEXT,
            _call(queued_job(), user="system:kube-controller-manager", groups=AUTHENTICATED),
        ),
        PolicyCase(
            "SUS-008 cronjob-controller, unmatched namespace",
            KUEUE_TEXT,
            _call(queued_job(namespace="batch"), user=cronjob_controller, groups=service_accounts),
        ),
        PolicyCase(
            "SUS-008 cronjob-controller, no forceSuspendOnCreate",
            config_text(force_suspend=False),
            _call(queued_job(), user=cronjob_controller, groups=service_accounts),
        ),
        PolicyCase(
            "SUS-008 administrators' group creates running",
            KUEUE_TEXT,
            _call(queued_job(), user="kubernetes-admin", groups=("kubeadm:cluster-admins",)),
        ),
    ]
    from_template = queued_job(queue=None)
    from_template["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "q"
    cases.append(
        PolicyCase("SUS-001 labels from the template", USERS_MAY_SUSPEND, _call(from_template))
    )
    old = suspended_job()
    resumed = changed(old, suspend=False)
    controllers = yaml.safe_load(KUEUE_TEXT)
    controllers["suspendPolicies"][0]["controllers"].update(
        users=["ops@example.com"], groups=["kueue-admins"]
    )
    controllers_text = yaml.safe_dump(controllers)
    for user, groups in (
        ("ops@example.com", ()),
        ("bob", ("kueue-admins",)),
        (KUEUE, ()),
        ("bob", AUTHENTICATED),
        ("system:serviceaccount:kueue-system:other", ()),
    ):
        cases.append(
            PolicyCase(
                f"SUS-002 resume by {user} {list(groups)}",
                controllers_text,
                _call(resumed, old, user=user, groups=groups),
            )
        )
    running = running_job()
    for users_may_suspend in (True, False):
        for user in (USER, KUEUE):
            cases.append(
                PolicyCase(
                    f"SUS-003 suspend by {user.rsplit(':', 1)[-1]}, "
                    f"usersMaySuspend {str(users_may_suspend).lower()}",
                    config_text(users_may_suspend=users_may_suspend),
                    _call(changed(running, suspend=True), running, user=user),
                )
            )
    for directive in DIRECTIVES:
        new = _with_directive(old, directive)
        cases.append(
            PolicyCase(f"SUS-004 user sets {directive}", USERS_MAY_SUSPEND, _call(new, old))
        )
    cases.append(
        PolicyCase(
            "SUS-004 controller sets nodeSelector",
            USERS_MAY_SUSPEND,
            _call(_with_directive(old, "nodeSelector"), old, user=KUEUE),
        )
    )
    image = copy.deepcopy(old)
    image["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    cases.append(
        PolicyCase("SUS-004 not for an image change", USERS_MAY_SUSPEND, _call(image, old))
    )
    ran = with_status(old, startTime=START, active=0, conditions=[SUSPENDED])
    cases.append(
        PolicyCase(
            "SUS-004 on 1.36, a suspended Job that ran",
            config_text(version="1.36"),
            _call(_with_directive(ran, "nodeSelector"), ran),
        )
    )
    admitted = changed(_with_directive(_with_directive(old, "nodeSelector"), "tolerations"))
    admitted["spec"]["suspend"] = False
    cases += [
        PolicyCase("SUS-002+004 controller admits", USERS_MAY_SUSPEND, _call(admitted, old, KUEUE)),
        PolicyCase("SUS-002+004 user admits", USERS_MAY_SUSPEND, _call(admitted, old)),
    ]
    no_labels = copy.deepcopy(old)
    del no_labels["metadata"]["labels"]
    finished = running_job()
    finished["status"] = {
        "startTime": START,
        "completionTime": LATER,
        "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
    }
    paused = _relabelled(changed(running, suspend=True), None)
    unrelated = copy.deepcopy(old)
    unrelated["metadata"]["labels"]["team"] = "a"
    cases += [
        PolicyCase(
            "SUS-005 queue label removed", USERS_MAY_SUSPEND, _call(_relabelled(old, None), old)
        ),
        PolicyCase(
            "SUS-005 queue changed", USERS_MAY_SUSPEND, _call(_relabelled(old, "other"), old)
        ),
        PolicyCase(
            "SUS-005 queue changed by the controller",
            USERS_MAY_SUSPEND,
            _call(_relabelled(old, "other"), old, user=KUEUE),
        ),
        PolicyCase("SUS-005 all Job labels removed", USERS_MAY_SUSPEND, _call(no_labels, old)),
        PolicyCase(
            "SUS-005 running Job relabelled",
            USERS_MAY_SUSPEND,
            _call(_relabelled(running, None), running),
        ),
        PolicyCase(
            "SUS-005 finished Job relabelled",
            USERS_MAY_SUSPEND,
            _call(_relabelled(finished, None), finished),
        ),
        PolicyCase(
            "SUS-005 suspend and relabel at once", USERS_MAY_SUSPEND, _call(paused, running)
        ),
        PolicyCase(
            "SUS-005 resume once unmatched",
            USERS_MAY_SUSPEND,
            _call(changed(paused, suspend=False), paused),
        ),
        PolicyCase("SUS-005 unrelated label change", USERS_MAY_SUSPEND, _call(unrelated, old)),
        PolicyCase(
            "SUS-005 queue label removed through jobs/status",
            USERS_MAY_SUSPEND,
            _call(_relabelled(old, None), old, resource="jobs/status"),
        ),
    ]
    unqueued = _relabelled(running, None)
    cases += [
        PolicyCase(
            "SUS-009 running Job relabelled into the policy",
            USERS_MAY_SUSPEND,
            _call(running, unqueued),
        ),
        PolicyCase(
            "SUS-009 relabelled in through jobs/status",
            USERS_MAY_SUSPEND,
            _call(running, unqueued, resource="jobs/status"),
        ),
        PolicyCase(
            "SUS-009 by the controller",
            USERS_MAY_SUSPEND,
            _call(running, unqueued, user=KUEUE),
        ),
        PolicyCase(
            "SUS-009 a suspended Job joins the queue",
            USERS_MAY_SUSPEND,
            _call(changed(running, suspend=True), changed(unqueued, suspend=True)),
        ),
    ]
    vip = {
        "name": "vip",
        "match": {"namespaces": ["team-*"], "labelSelector": {"matchLabels": {"tier": "vip"}}},
        "controllers": {"serviceAccounts": ["vip-system:vip-controller"]},
    }
    vip_text = config_text(policies_before=[vip])
    into_vip = copy.deepcopy(old)
    into_vip["metadata"]["labels"]["tier"] = "vip"
    cases += [
        PolicyCase("SUS-005 relabelled into an earlier policy", vip_text, _call(into_vip, old)),
        PolicyCase(
            "SUS-005 into an earlier policy, by the controller",
            vip_text,
            _call(into_vip, old, user=KUEUE),
        ),
        PolicyCase(
            "SUS-002 the earlier policy's controller resumes",
            vip_text,
            _call(
                changed(into_vip, suspend=False),
                into_vip,
                "system:serviceaccount:vip-system:vip-controller",
            ),
        ),
    ]
    strict_first = config_text(policies_before=[STRICT_POLICY])
    queued_first = config_text(policies_after=[STRICT_POLICY])
    old_b = suspended_job(namespace="team-b")
    for label, text in (("strict first", strict_first), ("queued first", queued_first)):
        for user in (KUEUE, OTHER_CONTROLLER):
            who = user.rsplit(":", 1)[-1]
            cases.append(
                PolicyCase(
                    f"first match, {label}: {who} resumes in team-a",
                    text,
                    _call(resumed, old, user),
                )
            )
            cases.append(
                PolicyCase(
                    f"first match, {label}: {who} resumes in team-b",
                    text,
                    _call(changed(old_b, suspend=False), old_b, user),
                )
            )
    scaled = changed(running, parallelism=100)
    indexed = changed(running, completionMode="Indexed", completions=4, parallelism=4)
    elastic = changed(indexed, completions=8, parallelism=8)
    cases += [
        PolicyCase(
            "SUS-006 user scales a running Job up", USERS_MAY_SUSPEND, _call(scaled, running)
        ),
        PolicyCase(
            "SUS-006 controller scales a running Job up",
            USERS_MAY_SUSPEND,
            _call(scaled, running, user=KUEUE),
        ),
        PolicyCase(
            "SUS-006 user scales a running Job down",
            USERS_MAY_SUSPEND,
            _call(running, scaled),
        ),
        PolicyCase(
            "SUS-006 user scales an elastic Indexed Job up",
            USERS_MAY_SUSPEND,
            _call(elastic, indexed),
        ),
        PolicyCase(
            "SUS-006 user scales a suspended Job up",
            USERS_MAY_SUSPEND,
            _call(changed(old, parallelism=100), old),
        ),
        PolicyCase(
            "SUS-006 user scales a finished Job up",
            USERS_MAY_SUSPEND,
            _call(changed(finished, parallelism=100), finished),
        ),
    ]
    for mode in ("warn", "dryrun"):
        cases.append(
            PolicyCase(
                f"SUS-002 enforced as {mode}",
                config_text(rules={"SUS-*": {"enforcement": mode}}),
                _call(resumed, old),
            )
        )
    return cases


def _placed(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["namespace"] = "default"
    return out


def _ne_cases() -> list[PolicyCase]:
    cases = [
        PolicyCase(f"data: {path}", "{}", _review(f"cases/ne/{path}"))
        for path in (
            "flip-suspended-condition.json",
            "suspend-finished-job.json",
            "remove-suspended-condition.json",
            "suspend-running-job.json",
        )
    ]
    cases.append(
        PolicyCase(
            "data: suspend-running-job.json (suspend-warnings)",
            WARNINGS_TEXT,
            _review("cases/ne/suspend-running-job.json"),
        )
    )
    # A Job controller of its own (spec.managedBy): the built-in job-controller is exempt from
    # every policy rule, so the status rules are shown with a writer that is not.
    controller = "system:serviceaccount:batch-system:external-job-controller"

    def status(new: dict[str, Any], old: dict[str, Any]) -> Call:
        return _call(_placed(new), _placed(old), user=controller, resource="jobs/status")

    def spec(new: dict[str, Any], old: dict[str, Any] | None, user: str = USER) -> Call:
        return _call(_placed(new), _placed(old) if old is not None else None, user=user)

    deadline = with_status(
        job(suspend=True, activeDeadlineSeconds=600), startTime=START, conditions=[SUSPENDED]
    )
    scheduled = copy.deepcopy(SUSPENDED_AFTER_RUN)
    scheduled["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    complete_while_suspended = with_status(
        SUSPENDED_AFTER_RUN,
        completionTime=LATER,
        conditions=[SUSPENDED, cond("SuccessCriteriaMet"), cond("Complete")],
    )
    ne = [
        ("NE-001 suspend a Complete Job", spec(changed(DONE, suspend=True), DONE)),
        ("NE-001 suspend a Failed Job", spec(changed(FAILED_JOB, suspend=True), FAILED_JOB)),
        ("NE-001 suspend a running Job", spec(changed(IDLE_RUNNING, suspend=True), IDLE_RUNNING)),
        (
            "NE-002 Suspended condition removed",
            status(with_status(SUSPENDED_AFTER_RUN, conditions=[]), SUSPENDED_AFTER_RUN),
        ),
        (
            "NE-002 Suspended condition twice",
            status(
                with_status(SUSPENDED_AFTER_RUN, conditions=[SUSPENDED, NOT_SUSPENDED]),
                SUSPENDED_AFTER_RUN,
            ),
        ),
        (
            "NE-003 Suspended=True with active pods",
            status(with_status(SUSPENDING, conditions=[SUSPENDED]), SUSPENDING),
        ),
        (
            "NE-003 Suspended=True once pods are gone",
            status(with_status(SUSPENDING, active=0, conditions=[SUSPENDED]), SUSPENDING),
        ),
        (
            "NE-004 startTime while suspended",
            status(with_status(NEVER_STARTED_SUSPENDED, startTime=START), NEVER_STARTED_SUSPENDED),
        ),
        (
            "NE-004 startTime in the resuming update",
            status(
                with_status(SUSPENDED_AFTER_RUN, startTime=LATER, conditions=[NOT_SUSPENDED]),
                SUSPENDED_AFTER_RUN,
            ),
        ),
        ("NE-005 resume with a deadline", spec(changed(deadline, suspend=False), deadline)),
        (
            "NE-005 resume without a deadline",
            spec(changed(SUSPENDED_AFTER_RUN, suspend=False), SUSPENDED_AFTER_RUN),
        ),
        ("NE-006 suspend with active pods", spec(changed(RUNNING, suspend=True), RUNNING)),
        ("NE-007 user creates running", spec(job(), None)),
        ("NE-007 user creates suspended", spec(job(suspend=True), None)),
        (
            "NE-007 listed controller resumes",
            spec(
                changed(SUSPENDED_AFTER_RUN, suspend=False),
                SUSPENDED_AFTER_RUN,
                "system:serviceaccount:kueue-system:kueue",
            ),
        ),
        (
            "NE-008 Complete while Suspended=True",
            status(complete_while_suspended, SUSPENDED_AFTER_RUN),
        ),
        ("NE-009 re-place a suspended Job that ran", spec(scheduled, SUSPENDED_AFTER_RUN)),
        (
            "NE-009 re-place a Job that never ran",
            spec(
                _with_directive(_placed(NEVER_STARTED_SUSPENDED), "nodeSelector"),
                NEVER_STARTED_SUSPENDED,
            ),
        ),
    ]
    cases += [PolicyCase(name, NE_ALL, call) for name, call in ne]
    return cases


@cache
def policy_cases() -> tuple[PolicyCase, ...]:
    return (*_policy_cases(), *_ne_cases())


@cache
def _settings(text: str) -> Settings:
    return parse_config(text).to_settings()


@cache
def exported(text: str) -> VapExport:
    return export_vap(_settings(text))


def webhook_findings(case: PolicyCase) -> set[Finding]:
    """The webhook's verdict on the exported rules: (rule, action, "RULE: message")."""
    settings = _settings(case.config)
    call = case.call
    kind_subresource = call.resource.partition("/")[2]
    request = Request(
        "Job",
        Operation(call.operation),
        defaulted(call.object),
        defaulted(call.old_object),
        subresource=kind_subresource,
        namespace=call.namespace,
        requester=Requester(call.username, call.groups),
    )
    verdict = admit(request, settings, Stage.VALIDATING).verdict
    assert verdict is not None and verdict.decode_error is None
    names = {e.subject for e in exported(case.config).exported}
    return {
        (
            v.error.rule,
            VALIDATION_ACTIONS[v.enforcement],
            f"{v.error.rule}: {v.error.message()}",
        )
        for v in verdict.unique()
        if v.error.rule in names
    }


def cel_findings(case: PolicyCase) -> set[Finding]:
    """The exported policies' decisions: (rule, action, message)."""
    decisions = decide(exported(case.config).objects, case.call)
    findings = set()
    for decision in decisions:
        (action,) = decision.actions
        findings.add((decision.rule, action, decision.message))
    return findings


def _cell(findings: set[Finding]) -> str:
    if not findings:
        return "allowed"
    return ", ".join(f"{rule} ({action})" for rule, action, _ in sorted(findings))


def agreement_table() -> str:
    rows = ["| case | webhook | exported CEL | agree |", "|---|---|---|---|"]
    for case in policy_cases():
        webhook, cel_side = webhook_findings(case), cel_findings(case)
        agree = "yes" if webhook == cel_side else "**no**"
        rows.append(f"| {case.name} | {_cell(webhook)} | {_cell(cel_side)} | {agree} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{agreement_table()}{END}{tail}"


if __name__ == "__main__":
    DOCS.write_text(render(DOCS.read_text()))
    sys.stdout.write(f"wrote {DOCS}\n")
