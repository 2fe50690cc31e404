"""What holds for a stored Job or CronJob on its own: the judgement `jobguard audit` gives.

The admission chain judges requests; an object at rest is not one. `judge_at_rest` builds the
requests whose verdicts say what holds for the object alone, runs them through the chain
(`chain.admit`, validating stage, as /validate would judge them), and keeps only the rules that
are properties of one object: those whose catalogue entry says they hold at rest
(`RuleInfo.at_rest`, viewed here as `AT_REST`; `NOT_AT_REST` gives why every other rule does
not):

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

from jobguard.validators.catalog import RULES
from jobguard.validators.chain import Stage, admit
from jobguard.validators.context import JobContext, Operation, Request, Requester
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.pipeline import Verdict, Violation, resolve_violations
from jobguard.validators.rules.suspend import NE002_DETAIL
from jobguard.validators.rules.suspend_policy import job_labels
from jobguard.validators.settings import Settings

AUDITOR = Requester("system:serviceaccount:jobguard:audit", ("system:serviceaccounts",))
"""Who the built requests name: no rule judged at rest reads the requester."""

AT_REST: Mapping[str, str] = {rule.id: rule.at_rest.reason for rule in RULES if rule.at_rest.holds}
"""The rules `judge_at_rest` reports, each with why it holds for a stored object (the catalogue's
`RuleInfo.at_rest`)."""

NOT_AT_REST: Mapping[str, str] = {
    rule.id: rule.at_rest.reason for rule in RULES if not rule.at_rest.holds
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
                policy.name,
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
