"""A model of the webhook registrations the chart renders for a configuration, which the chart
works out in Helm templates from its copy of the catalogue (`jobguard.app.chart_rules`);
tests/test_chart_webhooks.py renders the chart and compares."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from jobguard.app.chart_rules import judged_requests
from jobguard.validators import Enforcement, Settings
from jobguard.validators.registrations import per_policy


class Profile(StrEnum):
    POLICY = "policy"
    FULL = "full"


@dataclass(frozen=True, slots=True)
class Registration:
    """One webhook of the ValidatingWebhookConfiguration."""

    name: str
    """The webhook name before the domain: `<policy>.jobs`, `jobs`, `cronjobs`, `jobs-status`."""
    resource: str
    operations: tuple[str, ...]
    denies: bool
    """Some enabled rule denies these requests; otherwise they only warn and fail open."""
    policy: str | None = None
    """The suspend policy whose scope the registration has (its SUS rules on `jobs`)."""


_REGISTRATIONS = (("jobs", "jobs"), ("cronjobs", "cronjobs"), ("jobs-status", "jobs/status"))


def needed(
    settings: Settings, profile: Profile, *, for_policies: bool = False
) -> dict[str, Enforcement]:
    """Each request some enabled rule of the profile judges, with DENY when one denies it (else
    the mildest enforcement there is, WARN before DRYRUN): the rules each suspend policy's own
    registration carries (`for_policies`), or all the others."""
    out: dict[str, Enforcement] = {}
    for rule in settings.rules.values():
        if not rule.enabled or (profile is Profile.POLICY and rule.info.upstream):
            continue
        if rule.info.needs_suspend_policies and not settings.policies.policies:
            continue  # SUS rules judge nothing without a suspend policy
        if per_policy(rule.info) is not for_policies:
            continue
        for request in judged_requests(rule.info):
            current = out.get(request)
            if current is None or _rank(rule.enforcement) > _rank(current):
                out[request] = rule.enforcement
    return out


def _rank(enforcement: Enforcement) -> int:
    return {Enforcement.DRYRUN: 0, Enforcement.WARN: 1, Enforcement.DENY: 2}[enforcement]


def _operations(requests: dict[str, Enforcement], resource: str) -> tuple[tuple[str, ...], bool]:
    operations = tuple(op for op in ("CREATE", "UPDATE") if f"{resource}:{op}" in requests)
    denies = any(requests[f"{resource}:{op}"] is Enforcement.DENY for op in operations)
    return operations, denies


def plan(settings: Settings, profile: Profile) -> list[Registration]:
    """The validating webhooks a configuration needs, in the chart's order: one per suspend
    policy (its SUS rules, in its scope), then one per resource for the other rules."""
    out = []
    operations, denies = _operations(needed(settings, profile, for_policies=True), "jobs")
    if operations:
        out += [
            Registration(f"{p.name}.jobs", "jobs", operations, denies, p.name)
            for p in settings.policies.policies
        ]
    requests = needed(settings, profile)
    for name, resource in _REGISTRATIONS:
        operations, denies = _operations(requests, resource)
        if operations:
            out.append(Registration(name, resource, operations, denies))
    return out


def failure_policy(registration: Registration, configured: str = "Auto") -> str:
    """The chart's failurePolicy for a registration (`webhook.failurePolicy` is `configured`).

    A suspend policy's registration fails closed (Auto): its guarantee must hold while jobguard
    is unavailable, and it receives only the requests the policy judges. Every other
    registration fails open (Auto): the NE rules guarantee nothing that needs the write path
    closed, and the API server enforces the upstream rules itself. Status writes, and
    registrations whose rules can only warn, always fail open.
    """
    if not registration.denies or registration.resource == "jobs/status":
        return "Ignore"
    if configured != "Auto":
        return configured
    return "Fail" if registration.policy is not None else "Ignore"


def mutating_needed(settings: Settings) -> list[str]:
    """The suspend policies /mutate acts for (those forcing suspension on CREATE), each with a
    mutating registration of its own."""
    return [p.name for p in settings.policies.policies if p.force_suspend_on_create]
