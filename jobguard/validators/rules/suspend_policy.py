"""SUS rules: suspend policies (who may create running, resume, suspend and re-place Jobs).

Upstream's Suspend Jobs design leaves these restrictions to admission webhooks. Status updates
and DELETE are never judged; exempt requesters and a policy's controllers may do everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobguard.validators.context import Requester
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.lifecycle import JobState, Transition
from jobguard.validators.model import Job
from jobguard.validators.policy import PolicySet, SuspendPolicy


@dataclass(frozen=True, slots=True)
class PolicyOptions:
    """What the SUS rules need besides the Job, resolved once per request."""

    policies: PolicySet
    namespace: str
    """The namespace policies and exemptions match (resolved once, in `Request`)."""
    requester: Requester


def policy_options(policies: PolicySet, namespace: str, requester: Requester) -> PolicyOptions:
    return PolicyOptions(policies, namespace, requester)


def job_labels(job: Job) -> dict[str, str]:
    """The Job's labels; like v1 defaulting, the template's when the Job has none."""
    labels = job.metadata.labels
    if not labels:
        template = job.spec.template
        labels = template.metadata.labels if template and template.metadata else None
    return dict(labels or {})


def _matching_policy(job: Job, opts: PolicyOptions) -> SuspendPolicy | None:
    return opts.policies.policy_for(opts.namespace, job_labels(job))


def check_suspend_policy_create(new: Job, path: str, opts: PolicyOptions) -> list[FieldError]:
    """SUS-001: matched Jobs are created suspended, unless by the policy's controllers."""
    policies, requester = opts.policies, opts.requester
    if not policies.policies or policies.exemptions.exempt(opts.namespace, requester):
        return []
    policy = _matching_policy(new, opts)
    if policy is None or policy.controllers.includes(requester) or new.spec.suspend:
        return []
    who = policy.controllers.describe()
    return [
        forbidden(
            "SUS-001",
            f"{path}.suspend",
            f"jobs matched by policy '{policy.name}' must be created suspended "
            f"(spec.suspend: true); only {who} may create them running",
        )
    ]


def check_suspend_policy_update(
    new: Job, old: Job, change: Transition, path: str, opts: PolicyOptions
) -> list[FieldError]:
    """SUS-002..SUS-005: only a matched policy's controllers resume, suspend, re-place or
    relabel its Jobs (the old Job's policy governs; a newly matched one otherwise)."""
    policies, requester = opts.policies, opts.requester
    if not policies.policies or policies.exemptions.exempt(opts.namespace, requester):
        return []
    old_policy = _matching_policy(old, opts)
    new_policy = _matching_policy(new, opts)
    policy = old_policy or new_policy
    if policy is None or policy.controllers.includes(requester):
        return []
    who = policy.controllers.describe()
    name = policy.name
    errors: list[FieldError] = []
    if Transition.RESUMED in change:
        errors.append(
            forbidden(
                "SUS-002",
                f"{path}.suspend",
                f"only {who} may resume jobs matched by policy '{name}'",
            )
        )
    if Transition.SUSPENDED in change and not policy.users_may_suspend:
        errors.append(
            forbidden(
                "SUS-003",
                f"{path}.suspend",
                f"only {who} may suspend jobs matched by policy '{name}'",
            )
        )
    if Transition.SCHEDULING_DIRECTIVES_CHANGED in change:
        errors.append(
            forbidden(
                "SUS-004",
                f"{path}.template",
                f"only {who} may change scheduling directives of jobs matched by policy '{name}'",
            )
        )
    # Any unfinished matched Job: once out of the policy, suspending and resuming it are free,
    # so leaving must be as restricted as resuming (suspended or running alike).
    if (
        old_policy is not None
        and not JobState.of(old).finished
        and _leaves_policy(old_policy, new_policy, old, new)
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
    old_policy: SuspendPolicy, new_policy: SuspendPolicy | None, old: Job, new: Job
) -> bool:
    if new_policy is not old_policy:
        return True
    old_labels, new_labels = job_labels(old), job_labels(new)
    return any(old_labels.get(k) != new_labels.get(k) for k in old_policy.selected_keys())


def needs_forced_suspend(new: Job, opts: PolicyOptions) -> SuspendPolicy | None:
    """The policy that makes the mutating webhook suspend a CREATE of `new`, if any."""
    if new.spec.suspend or opts.policies.exemptions.exempt(opts.namespace, opts.requester):
        return None
    policy = _matching_policy(new, opts)
    if policy is None or not policy.force_suspend_on_create:
        return None
    if policy.controllers.includes(opts.requester):
        return None
    return policy
