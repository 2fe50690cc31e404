"""What holds for a stored Job or CronJob on its own: the judgement `jobguard audit` gives.

The admission chain judges requests; an object at rest is not one. `judge_at_rest` builds the
requests whose verdicts say what holds for the object alone, runs them through the chain
(`chain.admit`, validating stage, as /validate would judge them), and keeps only the rules that
are properties of one object (`AT_REST`, each with the reason it holds at rest; `NOT_AT_REST`
says why every other rule does not):

* The spec as stored: an UPDATE of `jobs` (or `cronjobs`) that changes nothing, the stored object
  as both old and new. That is what the API server answers the next update of the object, so
  what it prepared is judged as it judges it: generated selectors and labels, defaults, and
  legacy objects (TM-005 requires the prefixed labels only when the stored template has them).
* The status as written: an UPDATE of `jobs/status` from an empty status to the stored one.
  Upstream runs a status check when the fields it reads change; from an empty status every
  field that is set has changed, so every check that reads one object runs.
* The suspend policies: a matched, unfinished Job that is not suspended and has no Suspended
  condition was never suspended, so it started without the queue (SUS-001 at rest). Who created
  it is not stored; the message says who may lawfully do so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobguard.validators.chain import Stage, admit
from jobguard.validators.context import JobContext, Operation, Request, Requester
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.pipeline import Verdict, Violation, resolve_violations
from jobguard.validators.rules.suspend import NE002_DETAIL
from jobguard.validators.rules.suspend_policy import job_labels
from jobguard.validators.settings import Settings

AUDITOR = Requester("system:serviceaccount:jobguard:audit", ("system:serviceaccounts",))
"""Who the built requests name: no rule judged at rest reads the requester."""

_SPEC = "the spec as stored, judged as the API server judges the next update of the object"
_STATUS = "a status invariant of one object (upstream checks it whenever its fields change)"
_UPDATE = "compares an update with the stored object; at rest there is no update"
_STATUS_UPDATE = "compares a status update with the stored status; at rest there is none"
_OLD_CONTROLLERS = (
    "Job controllers before Kubernetes 1.31 finished Jobs without the FailureTarget and "
    "SuccessCriteriaMet conditions and with pods still terminating; upstream checks this only "
    "when a terminal condition changes, so a stored Job may lawfully break it"
)
_WHO = "judges who changes a Job; a stored object does not say who changed it"

AT_REST: Mapping[str, str] = {
    "DEC-001": "an object jobguard cannot read as its kind is reported, as for a request",
    "TM-005": _SPEC,
    "TM-006": _SPEC,
    "TM-007": _SPEC,
    "IM-008": "label and annotation syntax of the stored metadata",
    **{f"JS-00{i}": _SPEC for i in range(1, 9)},
    **{f"SP-00{i}": _SPEC for i in range(1, 10)},
    **{f"ST-00{i}": _STATUS for i in range(1, 10)},
    **{f"ST-0{i}": _STATUS for i in (23, 24, 25, 26, 27, 30, 31, 32, 34, 36, 37, 38, 39, 40)},
    "NE-002": "at most one Suspended condition: with two, every later status update of the Job "
    "is denied by NE-002",
    "NE-008": "no Complete or Failed condition while Suspended=True",
    "SUS-001": "a matched, unfinished Job that is not suspended and has no Suspended condition "
    "never was suspended: it started without the queue",
    "SUS-007": "a stored CronJob whose Jobs a suspend policy matches: they are held for the queue",
    "CJ-001": "the Job spec checks on the stored jobTemplate",
    "CJ-003": "the Job spec checks on the stored jobTemplate",
    "CJ-005": "the Job spec checks on the stored jobTemplate",
    **{
        f"CS-00{i}": "the CronJob spec as stored, judged as the API server judges its next update"
        for i in range(1, 5)
    },
    **{f"POD-{i:03d}": _SPEC for i in range(1, 11)},
}
"""The rules `judge_at_rest` reports, each with why it holds for a stored object."""

NOT_AT_REST: Mapping[str, str] = {
    **{f"TM-00{i}": _UPDATE for i in range(1, 5)},
    **{f"IM-00{i}": _UPDATE for i in range(1, 8)},
    "SP-010": _UPDATE,
    **{f"ST-0{i}": _STATUS_UPDATE for i in (10, 11, 20, 21, 22, 33, 35)},
    "ST-028": _OLD_CONTROLLERS,
    "ST-029": _OLD_CONTROLLERS,
    "ST-041": _OLD_CONTROLLERS,
    "NE-001": "judges the act of suspending; a Job suspended as it finishes may lawfully end "
    "up finished with spec.suspend true",
    "NE-003": "the Suspended condition is set while the pods are being deleted; active pods "
    "with Suspended=True are a passing state",
    "NE-004": "a Job suspended after it ran keeps its startTime until it is resumed",
    "NE-005": "judges a resume",
    "NE-006": "judges a suspension",
    "NE-007": _WHO,
    "NE-009": "judges a change of the template",
    **{f"SUS-00{i}": _WHO for i in range(2, 7)},
    "SUS-008": "judges who created a Job; at rest SUS-001 reports a matched Job that never was "
    "suspended, whoever created it",
    "CJ-002": "nothing to check (as for requests)",
    "CJ-004": "nothing to check (as for requests)",
    **{
        f"OM-00{i}": "judged on CREATE only: the API server checked the stored name and namespace "
        "when the object was created"
        for i in range(1, 4)
    },
    **{
        f"SC-00{i}": "manifests only: a stored object was decoded by the API server"
        for i in (1, 2, 3)
    },
}
"""Every other rule, with why a stored object cannot tell it."""


def judge_at_rest(kind: str, obj: Any, settings: Settings) -> Verdict:
    """What holds for one stored object (`kind` Job or CronJob) under `settings`.

    The object is what the API server returns (list items need not carry apiVersion and kind).
    Never raises for bad objects: they give a DEC-001 verdict, like the chain.
    """
    stored = _with_type(kind, obj)
    spec = _validate(Request(kind, Operation.UPDATE, stored, stored, requester=AUDITOR), settings)
    if not spec.judged or spec.decode_error is not None:
        return spec
    findings = list(spec.violations)
    if kind == "Job":
        before = {**stored, "status": {}}
        status = _validate(
            Request(
                kind, Operation.UPDATE, stored, before, subresource="status", requester=AUDITOR
            ),
            settings,
        )
        findings += status.violations
        if isinstance(spec.context, JobContext):
            findings += resolve_violations(_policy_findings(spec.context, settings), settings)
    return Verdict(
        kind, spec.name, judged=True, violations=_unique_at_rest(findings), context=spec.context
    )


def _validate(request: Request, settings: Settings) -> Verdict:
    verdict = admit(request, settings, Stage.VALIDATING).verdict
    assert verdict is not None  # the validating stage was asked
    return verdict


def _with_type(kind: str, obj: Any) -> Any:
    """List items come without apiVersion and kind; the object is judged as what it is."""
    if not isinstance(obj, dict):
        return obj
    return {**obj, "apiVersion": obj.get("apiVersion") or "batch/v1", "kind": kind}


def _policy_findings(ctx: JobContext, settings: Settings) -> list[FieldError]:
    """NE-002 and SUS-001 as a stored Job shows them (no request is needed to tell)."""
    state = ctx.new_state
    findings: list[FieldError] = []
    if state.suspended_condition_count > 1:
        findings.append(forbidden("NE-002", "status.conditions", NE002_DETAIL))
    policies = settings.policies
    if not policies.policies or state.finished or state.suspend or state.has_suspended_condition:
        return findings
    if policies.exemptions.namespace_exempt(ctx.namespace):
        return findings
    policy = policies.policy_for(ctx.namespace, job_labels(ctx.new))
    if policy is not None:
        findings.append(
            forbidden(
                "SUS-001",
                "spec.suspend",
                f"a job matched by policy '{policy.name}' is not suspended and never was (no "
                "Suspended condition): it started without the queue; only "
                f"{policy.controllers.describe()} may create matched jobs running",
            )
        )
    return findings


def _unique_at_rest(violations: list[Violation]) -> list[Violation]:
    """The at-rest rules' violations, each once (the built requests repeat some)."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for violation in violations:
        error = violation.error
        key = (error.rule, error.path, error.body())
        if error.rule in AT_REST and key not in seen:
            seen.add(key)
            out.append(violation)
    return out
