"""SUS rules: suspend policies (who may create running, resume, suspend, re-place and scale Jobs,
and what becomes of the Jobs a CronJob creates).

Upstream's Suspend Jobs design leaves these restrictions to admission webhooks. Of a status
update only the labels are judged (SUS-005, SUS-009: the status strategy stores new metadata);
DELETE is never judged; a policy's controllers may do everything, and the pipeline skips
every policy rule for exempt requesters (`Exemptions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from jobguard.validators.context import Requester
from jobguard.validators.errors import FieldError, forbidden
from jobguard.validators.lifecycle import JobState, Transition
from jobguard.validators.model import INDEXED, CronJob, Job
from jobguard.validators.policy import (
    SERVICE_ACCOUNT_PREFIX,
    PolicySet,
    SuspendPolicy,
    present_labels,
)

CRONJOB_CONTROLLER = Requester(
    f"{SERVICE_ACCOUNT_PREFIX}kube-system:cronjob-controller",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)
"""Who creates a CronJob's Jobs (kube-controller-manager with its per-controller credentials)."""


# Transition's flags as ints (a Flag's `in` runs in Python).
_RESUMED = Transition.RESUMED.value
_SUSPENDED = Transition.SUSPENDED.value
_SCHEDULING_DIRECTIVES_CHANGED = Transition.SCHEDULING_DIRECTIVES_CHANGED.value


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
    """The labels policies match a Job on: like v1 defaulting, the template's when the Job has
    none; labels with empty values count as absent (`present_labels`)."""
    labels = job.metadata.labels
    if not labels:
        template = job.spec.template
        labels = template.metadata.labels if template and template.metadata else None
    return present_labels(labels or {})


def _matching_policy(job: Job, opts: PolicyOptions) -> SuspendPolicy | None:
    return opts.policies.policy_for(opts.namespace, job_labels(job))


# Not frozen: built for every UPDATE (see strategy.JobOptions). Rules only read it.
@dataclass(slots=True)
class PolicyUpdateOptions:
    """What check_suspend_policy_update reads besides the two Jobs: what the update changes,
    and the policies as they apply to the requester."""

    change: Transition
    policy: PolicyOptions


def check_suspend_policy_create(
    new: Job, old: Job | None, path: str, opts: PolicyOptions
) -> list[FieldError]:
    """SUS-001: matched Jobs are created suspended, unless by the policy's controllers."""
    policies, requester = opts.policies, opts.requester
    if not policies.policies:
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
            policy.name,
        )
    ]


def check_forced_suspend_kept(
    new: Job, old: Job | None, path: str, opts: PolicyOptions
) -> list[FieldError]:
    """SUS-008: a built-in controller (the cronjob-controller, creating a CronJob's Job for its
    author) creates a Job that a policy forces suspended, unsuspended: the mutating webhook did
    not suspend it (unavailable, too slow, or it refused the request). Created so, the Job would
    start without the queue; denied, the CronJob's run is visibly missed and retried on its
    next schedule. The pipeline asks this only for requesters exempt as built-in controllers."""
    if new.spec.suspend or not opts.policies.policies:
        return []
    policy = _matching_policy(new, opts)
    if (
        policy is None
        or not policy.force_suspend_on_create
        or policy.controllers.includes(opts.requester)
    ):
        return []
    return [
        forbidden(
            "SUS-008",
            f"{path}.suspend",
            f"jobs matched by policy '{policy.name}' are created suspended by jobguard's "
            "mutating webhook, which did not suspend this one (unavailable or refused); "
            f"{opts.requester.username or 'the requester'} acts for others and cannot start it "
            f"without the queue: only {policy.controllers.describe()} may create it running",
            policy.name,
        )
    ]


def check_suspend_policy_update(
    new: Job, old: Job, path: str, options: PolicyUpdateOptions
) -> list[FieldError]:
    """SUS-002..SUS-006: only a matched policy's controllers resume, suspend, re-place, relabel or
    scale up its Jobs (the old Job's policy governs; a newly matched one otherwise)."""
    opts, change = options.policy, options.change
    policies, requester = opts.policies, opts.requester
    if not policies.policies:
        return []
    old_policy = _matching_policy(old, opts)
    new_policy = _matching_policy(new, opts)
    policy = old_policy or new_policy
    if policy is None or policy.controllers.includes(requester):
        return []
    who = policy.controllers.describe()
    name = policy.name
    errors: list[FieldError] = []
    if change.value & _RESUMED:
        errors.append(
            forbidden(
                "SUS-002",
                f"{path}.suspend",
                f"only {who} may resume jobs matched by policy '{name}'",
                name,
            )
        )
    if change.value & _SUSPENDED and not policy.users_may_suspend:
        errors.append(
            forbidden(
                "SUS-003",
                f"{path}.suspend",
                f"only {who} may suspend jobs matched by policy '{name}'",
                name,
            )
        )
    if change.value & _SCHEDULING_DIRECTIVES_CHANGED:
        errors.append(
            forbidden(
                "SUS-004",
                f"{path}.template",
                f"only {who} may change scheduling directives of jobs matched by policy '{name}'",
                name,
            )
        )
    errors += check_policy_labels(new, old, path, opts)
    errors += _scaled_up(new, old, path, who, name)
    return errors


def check_policy_labels(new: Job, old: Job, path: str, opts: PolicyOptions) -> list[FieldError]:
    """SUS-005 and SUS-009: a label change that moves an unfinished Job out of its policy, or a
    running one into a policy, by someone other than that policy's controllers. Judged on UPDATE
    of `jobs` and of `jobs/status` alike: upstream's status strategy keeps the new metadata (it
    copies only the spec), so a relabel through `/status` is stored too."""
    if not opts.policies.policies or JobState.of(old).finished:
        return []
    old_policy = _matching_policy(old, opts)
    new_policy = _matching_policy(new, opts)
    if old_policy is not None:
        # Once out of the policy, suspending and resuming it are free: leaving is as
        # restricted as resuming (suspended or running alike).
        if old_policy.controllers.includes(opts.requester) or not _leaves_policy(
            old_policy, new_policy, old, new
        ):
            return []
        keys = ", ".join(old_policy.selected_keys()) or "its labels"
        return [
            forbidden(
                "SUS-005",
                "metadata.labels",
                f"a job matched by policy '{old_policy.name}' cannot be relabelled out of it "
                f"({keys}); only {old_policy.controllers.describe()} may do that",
                old_policy.name,
            )
        ]
    if new_policy is None or new.spec.suspend or new_policy.controllers.includes(opts.requester):
        return []
    # A running Job that comes to match a policy would run without ever having passed its
    # queue; suspended, it waits for the policy's controllers like any other.
    keys = ", ".join(new_policy.selected_keys()) or "its labels"
    return [
        forbidden(
            "SUS-009",
            "metadata.labels",
            f"a running job cannot be relabelled into policy '{new_policy.name}' ({keys}): it "
            f"would run without its controllers' admission; suspend it first, or only "
            f"{new_policy.controllers.describe()} may do that",
            new_policy.name,
        )
    ]


def _leaves_policy(
    old_policy: SuspendPolicy, new_policy: SuspendPolicy | None, old: Job, new: Job
) -> bool:
    if new_policy is not old_policy:
        return True
    old_labels, new_labels = job_labels(old), job_labels(new)
    return any(old_labels.get(k) != new_labels.get(k) for k in old_policy.selected_keys())


def _scaled_up(new: Job, old: Job, path: str, who: str, name: str) -> list[FieldError]:
    """SUS-006: more pods for an unfinished Job that runs after the update than the queue
    admitted: parallelism raised, or completions of an Indexed Job (elastic Indexed Jobs scale
    both in tandem, IM-002). A suspended Job is re-admitted before it runs again."""
    if new.spec.suspend or JobState.of(old).finished:
        return []
    before, after = old.spec.parallelism or 0, new.spec.parallelism or 0
    field, raised = "parallelism", after > before
    if not raised and new.spec.completion_mode == INDEXED:
        before, after = old.spec.completions or 0, new.spec.completions or 0
        field, raised = "completions", after > before
    if not raised:
        return []
    return [
        forbidden(
            "SUS-006",
            f"{path}.{field}",
            f"only {who} may raise {field} ({before} -> {after}) of running jobs matched by "
            f"policy '{name}'",
            name,
        )
    ]


def check_cronjob_policy(
    cronjob: CronJob, old: CronJob | None, path: str, opts: PolicyOptions
) -> list[FieldError]:
    """SUS-007 (informational): the Jobs a CronJob creates match a policy; say what becomes of
    them. They are created by the cronjob-controller from `spec.jobTemplate`, labelled as the
    template says (its pod template's labels when it has none), in the CronJob's namespace."""
    template = cronjob.spec.job_template
    labels = (template.metadata.labels if template.metadata else None) or {}
    if not labels:
        pod_template = template.spec.template
        labels = (
            pod_template.metadata.labels if pod_template and pod_template.metadata else None
        ) or {}
    policy = opts.policies.policy_for(opts.namespace, present_labels(labels))
    if policy is None or opts.policies.exemptions.namespace_exempt(opts.namespace):
        return []
    if template.spec.suspend or policy.force_suspend_on_create:
        detail = (
            f"its Jobs match policy '{policy.name}': created suspended, they run once its "
            "controllers resume them"
        )
    elif opts.policies.exemptions.exempt(opts.namespace, CRONJOB_CONTROLLER):
        detail = (
            f"its Jobs match policy '{policy.name}' but start at once (the cronjob-controller "
            "is exempt)"
        )
    else:
        detail = f"its Jobs match policy '{policy.name}' and start running: SUS-001 denies each one"
    return [forbidden("SUS-007", f"{path}.jobTemplate", detail, policy.name)]


def needs_forced_suspend(new: Job, opts: PolicyOptions) -> SuspendPolicy | None:
    """The policy that makes the mutating webhook suspend a CREATE of `new`, if any.

    Exempt requesters are never denied, but their matched Jobs are still held for the queue
    (the Jobs a CronJob spawns among them); only exempt namespaces are left alone.
    """
    if new.spec.suspend or opts.policies.exemptions.namespace_exempt(opts.namespace):
        return None
    policy = _matching_policy(new, opts)
    if policy is None or not policy.force_suspend_on_create:
        return None
    if policy.controllers.includes(opts.requester):
        return None
    return policy
