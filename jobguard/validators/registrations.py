"""The webhook registrations of a configuration: the ValidatingWebhookConfiguration and
MutatingWebhookConfiguration objects that make the API server send jobguard exactly the requests
its rules judge. Pure: no I/O.

`webhook_configurations(settings, client, ca_bundle, options) -> [VWC, MWC]` is the one place
that translates a configuration's scope for the API server: `jobguard registrations` prints it,
the leader of a running deployment applies it (and again on every reload), and the CEL it embeds
is the VAP export's (`vap.py`), built from the same globs (`globs.py`) and the same first-match
reading of the policies (`PolicySet.policy_for`).

- Each suspend policy has a validating webhook of its own, `<policy>.jobs.<domain>`, for its SUS
  rules (on `jobs`, and on `jobs/status` where a relabel is judged), failing closed (`Auto`): it
  receives exactly the requests the policy judges. The namespaceSelector and objectSelector are
  pre-filters (exact namespace names; the label selector without `DoesNotExist`, which the API
  server reads differently for empty values); the matchConditions decide exactly: the policy's
  namespace globs, not an exempt namespace or requester (but a built-in controller's CREATE
  where the policy forces suspension: SUS-008), not one of the policy's controllers, the policy
  is the one that applies (the first whose match fits; for an UPDATE the stored Job's, else the
  new one's), and a status write only when it changes the Job's labels.
- The other rules (NE; in the `full` profile the upstream ones too) by resource: `jobs`,
  `cronjobs`, `jobs-status`, failing open unless configured otherwise; status writes always
  fail open. Exempt namespaces and requesters are skipped (`policy` profile).
- One mutating webhook per policy that forces suspension, `<policy>.jobs.mutate.<domain>`, in the
  policy's scope but for its controllers (exempt requesters' Jobs are suspended too).

Nothing is left out implicitly: a policy on every namespace covers `kube-system` and jobguard's
own namespace unless the exemptions name them.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jobguard.validators.catalog import (
    JOB_CREATE,
    JOB_STATUS_UPDATE,
    JOB_UPDATE,
    Enforcement,
    RuleInfo,
)
from jobguard.validators.globs import is_glob
from jobguard.validators.policy import PolicySet, Subjects
from jobguard.validators.settings import Settings
from jobguard.validators.vap import (
    NAMESPACE_NAME_LABEL,
    _any_match,
    _any_of,
    _first_match,
    _names_match,
    _not,
    _subjects,
    _with_labels,
    job_labels,
)

API_VERSION = "admissionregistration.k8s.io/v1"
PER_POLICY_REQUESTS = (JOB_CREATE, JOB_UPDATE, JOB_STATUS_UPDATE)


class Profile(StrEnum):
    POLICY = "policy"
    """The policy rules (NE, SUS), which the API server does not enforce."""
    FULL = "full"
    """Every rule, the upstream ones too."""


class FailurePolicy(StrEnum):
    AUTO = "Auto"
    """Fail for a suspend policy's own webhook, Ignore for the others."""
    FAIL = "Fail"
    IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Where the API server reaches jobguard: a Service, or a URL (outside the cluster)."""

    url: str | None = None
    """A base URL (`https://host:8443`); the webhooks' paths are appended."""
    service_namespace: str = ""
    service_name: str = ""
    port: int = 443

    def __post_init__(self) -> None:
        if (self.url is None) == (not self.service_name):
            raise ValueError("give a URL or a Service (namespace and name), not both")
        if self.url is not None and not self.url.startswith("https://"):
            raise ValueError(f"{self.url!r}: the API server calls webhooks over https only")
        if self.service_name and not self.service_namespace:
            raise ValueError("a Service needs its namespace")

    def for_path(self, path: str, ca_bundle: bytes | None) -> dict[str, Any]:
        out: dict[str, Any]
        if self.url is not None:
            out = {"url": self.url.rstrip("/") + path}
        else:
            out = {
                "service": {
                    "namespace": self.service_namespace,
                    "name": self.service_name,
                    "path": path,
                    "port": self.port,
                }
            }
        if ca_bundle:
            out["caBundle"] = base64.b64encode(ca_bundle).decode("ascii")
        return out


@dataclass(frozen=True, slots=True)
class RegistrationOptions:
    name: str = "jobguard"
    """The two objects' name."""
    domain: str = "jobguard.io"
    """The webhooks' names end with it: `queued.jobs.jobguard.io`."""
    profile: Profile = Profile.POLICY
    failure_policy: FailurePolicy = FailurePolicy.AUTO
    mutating: bool = True
    """Register /mutate for the policies that force suspension."""
    mutating_failure_policy: FailurePolicy = FailurePolicy.IGNORE
    timeout_seconds: int = 5
    opt_in_label: str | None = None
    """Only namespaces labelled `<label>=true` are guarded."""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


def per_policy(rule: RuleInfo) -> bool:
    """A rule each suspend policy's own webhook carries: a SUS rule on Jobs (SUS-007 judges
    CronJobs, outside any Job's scope)."""
    return rule.needs_suspend_policies and all(r in PER_POLICY_REQUESTS for r in rule.requests)


_RANK = {Enforcement.DRYRUN: 0, Enforcement.WARN: 1, Enforcement.DENY: 2}


def needed(
    settings: Settings, profile: Profile, *, for_policies: bool = False
) -> dict[str, Enforcement]:
    """Each request some enabled rule of the profile judges, with the strongest enforcement
    among them: the rules each suspend policy's own webhook carries (`for_policies`), or all the
    others. SUS rules judge nothing without a suspend policy."""
    out: dict[str, Enforcement] = {}
    for rule in settings.rules.values():
        if not rule.enabled or (profile is Profile.POLICY and rule.info.upstream):
            continue
        if rule.info.needs_suspend_policies and not settings.policies.policies:
            continue
        if per_policy(rule.info) is not for_policies:
            continue
        for request in rule.info.requests:
            current = out.get(request)
            if current is None or _RANK[rule.enforcement] > _RANK[current]:
                out[request] = rule.enforcement
    return out


def _rules(requests: Mapping[str, Enforcement], resources: tuple[str, ...]) -> list[Any]:
    out = []
    for resource in resources:
        operations = [op for op in ("CREATE", "UPDATE") if f"{resource}:{op}" in requests]
        if operations:
            out.append(
                {
                    "apiGroups": ["batch"],
                    "apiVersions": ["v1"],
                    "operations": operations,
                    "resources": [resource],
                    "scope": "Namespaced",
                }
            )
    return out


def _denies(requests: Mapping[str, Enforcement], resources: tuple[str, ...]) -> bool:
    return any(
        enforcement is Enforcement.DENY
        for request, enforcement in requests.items()
        if request.partition(":")[0] in resources
    )


def _namespace_selector(
    policies: PolicySet, own: tuple[str, ...] | None, opt_in_label: str | None
) -> dict[str, Any]:
    """Exact namespace names as label requirements on `kubernetes.io/metadata.name` (globs are
    the match conditions')."""
    expressions: list[dict[str, Any]] = []
    if own is not None and not any(is_glob(n) for n in own):
        expressions.append({"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(own)})
    exempt = [n for n in policies.exemptions.namespaces if not is_glob(n)]
    if exempt:
        expressions.append({"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": exempt})
    if opt_in_label:
        expressions.append({"key": opt_in_label, "operator": "In", "values": ["true"]})
    return {"matchExpressions": expressions} if expressions else {}


def _condition(name: str, expression: str) -> dict[str, str]:
    return {"name": name, "expression": expression}


def _namespace_conditions(policies: PolicySet, own: tuple[str, ...] | None) -> list[Any]:
    out = []
    if own is not None and any(is_glob(n) for n in own):
        out.append(_condition("in-the-policy-namespaces", _names_match("request.namespace", own)))
    globs = [n for n in policies.exemptions.namespaces if is_glob(n)]
    if globs:
        expression = _not(_names_match("request.namespace", globs))
        out.append(_condition("not-in-an-exempt-namespace", expression))
    return out


def _exempt_requester(policies: PolicySet, *, forced: bool) -> str:
    """The requester is exempt (`Exemptions.exempt`); with `forced`, a built-in controller's
    CREATE is not (SUS-008 judges it: it acts for others)."""
    exemptions = policies.exemptions
    built_in = exemptions.built_in
    controllers = _subjects(Subjects(built_in.users, (), built_in.service_accounts))
    if forced and controllers != "false":
        controllers = f"(request.operation != 'CREATE' && {controllers})"
    terms = [_subjects(exemptions.subjects), _subjects(Subjects(groups=built_in.groups))]
    return _any_of([t for t in (*terms, controllers) if t != "false"])


def _policy_webhook(
    settings: Settings,
    index: int,
    requests: Mapping[str, Enforcement],
    client: dict[str, Any],
    options: RegistrationOptions,
) -> dict[str, Any] | None:
    policies = settings.policies
    policy = policies.policies[index]
    rules = _rules(requests, ("jobs", "jobs/status"))
    if not rules:
        return None
    forced = policy.force_suspend_on_create and settings.enabled("SUS-008")
    conditions = _namespace_conditions(policies, policy.namespaces)
    exempt = _exempt_requester(policies, forced=forced)
    if exempt != "false":
        conditions.append(_condition("not-an-exempt-requester", _not(exempt)))
    controllers = _subjects(policy.controllers)
    if controllers != "false":
        conditions.append(_condition("not-a-controller-of-the-policy", _not(controllers)))
    created = _with_labels("object", "labels", _first_match(policies, index, "labels"))
    updated = _with_labels(
        "oldObject",
        "old",
        _with_labels(
            "object",
            "new",
            f"({_first_match(policies, index, 'old')} || "
            f"(!{_any_match(policies, 'old')} && {_first_match(policies, index, 'new')}))",
        ),
    )
    conditions.append(
        _condition("the-policy-applies", f"request.operation == 'CREATE' ? {created} : {updated}")
    )
    if any(rule["resources"] == ["jobs/status"] for rule in rules):
        # Of a status write only a relabel is judged (SUS-005, SUS-009). The API server leaves
        # `subResource` out of `request` for the main resource: absent is not a status write.
        conditions.append(
            _condition(
                "a-relabel-if-a-status-write",
                f"!has(request.subResource) || request.subResource != 'status' || "
                f"{job_labels('object')} != {job_labels('oldObject')}",
            )
        )
    if not _denies(requests, ("jobs", "jobs/status")):
        failure = FailurePolicy.IGNORE
    elif options.failure_policy is FailurePolicy.AUTO:
        failure = FailurePolicy.FAIL
    else:
        failure = options.failure_policy
    return _webhook(
        f"{policy.name}.jobs.{options.domain}",
        client,
        rules,
        failure,
        options,
        _namespace_selector(policies, policy.namespaces, options.opt_in_label),
        policy.object_selector(),
        conditions,
    )


def _webhook(
    name: str,
    client: dict[str, Any],
    rules: list[Any],
    failure: FailurePolicy,
    options: RegistrationOptions,
    namespace_selector: dict[str, Any],
    object_selector: dict[str, Any] | None,
    conditions: list[Any],
) -> dict[str, Any]:
    # Each webhook its own copies: the objects are edited (caBundle) and dumped as plain data.
    hook: dict[str, Any] = {
        "name": name,
        "clientConfig": copy.deepcopy(client),
        "rules": copy.deepcopy(rules),
        "failurePolicy": failure.value,
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": options.timeout_seconds,
        "namespaceSelector": copy.deepcopy(namespace_selector),
    }
    if object_selector:
        hook["objectSelector"] = copy.deepcopy(object_selector)
    if conditions:
        hook["matchConditions"] = copy.deepcopy(conditions)
    return hook


_SHARED = (("jobs", "jobs"), ("cronjobs", "cronjobs"), ("jobs-status", "jobs/status"))


def _shared_webhooks(
    settings: Settings, client: dict[str, Any], options: RegistrationOptions
) -> list[dict[str, Any]]:
    """The rules that are no suspend policy's own, one webhook per resource."""
    requests = needed(settings, options.profile)
    policies = settings.policies
    conditions: list[Any] = []
    if options.profile is Profile.POLICY:
        conditions = _namespace_conditions(policies, None)
        exempt = _any_of(
            [
                t
                for t in (
                    _subjects(policies.exemptions.subjects),
                    _subjects(policies.exemptions.built_in),
                )
                if t != "false"
            ]
        )
        if exempt != "false":
            conditions.insert(0, _condition("not-an-exempt-requester", _not(exempt)))
        selector = _namespace_selector(policies, None, options.opt_in_label)
    else:
        # The upstream rules apply to everyone, as the API server applies them.
        selector = _namespace_selector(PolicySet(), None, options.opt_in_label)
    out = []
    for name, resource in _SHARED:
        rules = _rules(requests, (resource,))
        if not rules:
            continue
        failure = FailurePolicy.IGNORE
        # Status writes always fail open: a broken webhook must never stall the Job controller.
        configured = options.failure_policy is not FailurePolicy.AUTO
        if configured and _denies(requests, (resource,)) and resource != "jobs/status":
            failure = options.failure_policy
        out.append(
            _webhook(
                f"{name}.{options.domain}",
                client,
                rules,
                failure,
                options,
                selector,
                None,
                conditions,
            )
        )
    return out


def _mutating_webhooks(
    settings: Settings, client: dict[str, Any], options: RegistrationOptions
) -> list[dict[str, Any]]:
    policies = settings.policies
    out = []
    for index, policy in enumerate(policies.policies):
        if not policy.force_suspend_on_create:
            continue
        conditions = _namespace_conditions(policies, policy.namespaces)
        controllers = _subjects(policy.controllers)
        if controllers != "false":
            conditions.append(_condition("not-a-controller-of-the-policy", _not(controllers)))
        created = _with_labels("object", "labels", _first_match(policies, index, "labels"))
        conditions.append(_condition("the-policy-applies", created))
        hook = _webhook(
            f"{policy.name}.jobs.mutate.{options.domain}",
            client,
            [
                {
                    "apiGroups": ["batch"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["jobs"],
                    "scope": "Namespaced",
                }
            ],
            options.mutating_failure_policy,
            options,
            _namespace_selector(policies, policy.namespaces, options.opt_in_label),
            policy.object_selector(),
            conditions,
        )
        hook["reinvocationPolicy"] = "Never"
        out.append(hook)
    return out


def webhook_configurations(
    settings: Settings,
    client: ClientConfig,
    ca_bundle: bytes | None,
    options: RegistrationOptions | None = None,
) -> list[dict[str, Any]]:
    """The ValidatingWebhookConfiguration and the MutatingWebhookConfiguration for `settings`,
    both always (a configuration that needs none has an empty `webhooks` list, so applying the
    result also withdraws what an earlier configuration registered). `ca_bundle` is the PEM the
    API server verifies jobguard's serving certificate with (None: left out, for cert-manager's
    CA injector or a chart to fill in)."""
    options = options or RegistrationOptions()
    validate = client.for_path("/validate", ca_bundle)
    hooks: list[dict[str, Any]] = []
    policy_requests = needed(settings, options.profile, for_policies=True)
    for index in range(len(settings.policies.policies)):
        hook = _policy_webhook(settings, index, policy_requests, validate, options)
        if hook is not None:
            hooks.append(hook)
    hooks += _shared_webhooks(settings, validate, options)
    mutating: list[dict[str, Any]] = []
    if options.mutating:
        mutating = _mutating_webhooks(settings, client.for_path("/mutate", ca_bundle), options)
    out = []
    for kind, webhooks in (
        ("ValidatingWebhookConfiguration", hooks),
        ("MutatingWebhookConfiguration", mutating),
    ):
        metadata: dict[str, Any] = {"name": options.name}
        if options.labels:
            metadata["labels"] = dict(options.labels)
        if options.annotations:
            metadata["annotations"] = dict(options.annotations)
        out.append(
            {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "webhooks": webhooks}
        )
    return out
