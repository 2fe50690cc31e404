"""SUS rules: suspend policies (who may create running, resume, suspend and re-place Jobs).

Upstream's Suspend Jobs design leaves these restrictions to admission webhooks. Status updates
and DELETE are never judged; exempt requesters and a policy's controllers may do everything.
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.context import JobContext, Operation
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.lifecycle import Transition
from jobguard.validators.policy import PolicySet, SuspendPolicy
from jobguard.validators.rules.jobs import scheduling_directives_changed


def job_labels(raw: dict[str, Any]) -> dict[str, str]:
    """The Job's labels; like v1 defaulting, the template's when the Job has none."""
    metadata = raw.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    if not labels:
        spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
        template = spec.get("template") if isinstance(spec, dict) else None
        template_meta = template.get("metadata") if isinstance(template, dict) else None
        labels = template_meta.get("labels") if isinstance(template_meta, dict) else None
    if not isinstance(labels, dict):
        return {}
    return {k: v for k, v in labels.items() if isinstance(v, str)}


def matching_policy(
    policies: PolicySet, namespace: str, raw: dict[str, Any]
) -> SuspendPolicy | None:
    return policies.policy_for(namespace, job_labels(raw))


def check_suspend_policies(ctx: JobContext, policies: PolicySet) -> list[FieldError]:
    if ctx.is_status or not policies.policies:
        return []
    namespace = ctx.namespace
    requester = ctx.requester
    if policies.exemptions.exempt(namespace, requester):
        return []
    new_policy = matching_policy(policies, namespace, ctx.new_raw)
    if ctx.operation is Operation.CREATE:
        if new_policy is None or new_policy.controllers.includes(requester):
            return []
        if ctx.new_state.suspend:
            return []
        who = new_policy.controllers.describe()
        return [
            forbidden(
                "SUS-001",
                "spec.suspend",
                f"jobs matched by policy '{new_policy.name}' must be created suspended "
                f"(spec.suspend: true); only {who} may create them running",
            )
        ]
    assert ctx.old_raw is not None and ctx.old_state is not None
    old_policy = matching_policy(policies, namespace, ctx.old_raw)
    policy = old_policy or new_policy
    if policy is None or policy.controllers.includes(requester):
        return []
    who = policy.controllers.describe()
    name = policy.name
    errors: list[FieldError] = []
    if Transition.RESUMED in ctx.transition:
        errors.append(
            forbidden(
                "SUS-002", "spec.suspend", f"only {who} may resume jobs matched by policy '{name}'"
            )
        )
    if Transition.SUSPENDED in ctx.transition and not policy.users_may_suspend:
        errors.append(
            forbidden(
                "SUS-003", "spec.suspend", f"only {who} may suspend jobs matched by policy '{name}'"
            )
        )
    if scheduling_directives_changed(ctx.old_raw, ctx.new_raw):
        errors.append(
            forbidden(
                "SUS-004",
                "spec.template",
                f"only {who} may change scheduling directives of jobs matched by policy '{name}'",
            )
        )
    # Any unfinished matched Job: once out of the policy, suspending and resuming it are free,
    # so leaving must be as restricted as resuming (suspended or running alike).
    if (
        old_policy is not None
        and not ctx.old_state.finished
        and _leaves_policy(old_policy, new_policy, ctx.old_raw, ctx.new_raw)
    ):
        errors.append(
            forbidden(
                "SUS-005",
                "metadata.labels",
                f"a job matched by policy '{name}' cannot be relabelled out of it "
                f"({', '.join(old_policy.selected_keys()) or 'its labels'}); only {who} may do that",
            )
        )
    return errors


def _leaves_policy(
    old_policy: SuspendPolicy,
    new_policy: SuspendPolicy | None,
    old_raw: dict[str, Any],
    new_raw: dict[str, Any],
) -> bool:
    if new_policy is not old_policy:
        return True
    old_labels, new_labels = job_labels(old_raw), job_labels(new_raw)
    return any(old_labels.get(k) != new_labels.get(k) for k in old_policy.selected_keys())


def needs_forced_suspend(ctx: JobContext, policies: PolicySet) -> SuspendPolicy | None:
    """The policy that makes the mutating webhook suspend this CREATE, if any."""
    if ctx.operation is not Operation.CREATE or ctx.is_status or ctx.new_state.suspend:
        return None
    namespace = ctx.namespace
    if policies.exemptions.exempt(namespace, ctx.requester):
        return None
    policy = matching_policy(policies, namespace, ctx.new_raw)
    if policy is None or not policy.force_suspend_on_create:
        return None
    if policy.controllers.includes(ctx.requester):
        return None
    return policy
