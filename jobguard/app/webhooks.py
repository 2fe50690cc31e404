"""Which admission requests a configuration needs the API server to send, and the chart's copy of
the catalogue that lets Helm work the same out at render time.

The API server already runs its own Job validation before the validating webhooks, so in a live
cluster the upstream rules (TM, IM, JS, SP, ST, CJ, DEC) can only deny where jobguard's semantics
differ from the cluster's. Two profiles say which rules a webhook registration is for:

- `policy` (the chart's default): the policy rules (NE, SUS), which the API server does not
  enforce; requests no enabled policy rule judges are never sent, and exempt requesters are
  skipped by the API server (`matchConditions`).
- `full`: every rule, as defence in depth or for clusters whose version or gates lack them.

Each suspend policy has a registration of its own for its SUS rules on Jobs, scoped to the
policy and failing closed: its guarantee must hold while jobguard is unavailable, and nothing
outside the policy waits for jobguard. Every other registration fails open (`failure_policy`).
A registration whose rules can only warn (or dry-run) fails open: it can never deny. `python -m jobguard.app.webhooks FILE` writes the chart's copy
(`charts/jobguard/files/rules.yaml`, `make docs`); a test keeps it current and renders the chart
for several configurations to compare it with `plan`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from jobguard.app.config import subjects_config
from jobguard.validators import BUILT_IN_EXEMPTIONS, RULES, Enforcement, RuleInfo, Settings


class Profile(StrEnum):
    POLICY = "policy"
    FULL = "full"


JOB_CREATE = "jobs:CREATE"
JOB_UPDATE = "jobs:UPDATE"
JOB_STATUS_UPDATE = "jobs/status:UPDATE"
CRONJOB_CREATE = "cronjobs:CREATE"
CRONJOB_UPDATE = "cronjobs:UPDATE"
REQUESTS = (JOB_CREATE, JOB_UPDATE, JOB_STATUS_UPDATE, CRONJOB_CREATE, CRONJOB_UPDATE)
"""Every request jobguard judges, as `resource:OPERATION`."""

_JOBS = (JOB_CREATE, JOB_UPDATE)
_CRONJOBS = (CRONJOB_CREATE, CRONJOB_UPDATE)
POLICY_RULE_REQUESTS: dict[str, tuple[str, ...]] = {
    "NE-001": (JOB_UPDATE,),
    "NE-002": (JOB_STATUS_UPDATE,),
    "NE-003": (JOB_STATUS_UPDATE,),
    "NE-004": (JOB_STATUS_UPDATE,),
    "NE-005": (JOB_UPDATE,),
    "NE-006": (JOB_UPDATE,),
    "NE-007": (JOB_UPDATE,),
    "NE-008": (JOB_STATUS_UPDATE,),
    "NE-009": (JOB_UPDATE,),
    "SUS-001": (JOB_CREATE,),
    "SUS-002": (JOB_UPDATE,),
    "SUS-003": (JOB_UPDATE,),
    "SUS-004": (JOB_UPDATE,),
    "SUS-005": (JOB_UPDATE,),
    "SUS-006": (JOB_UPDATE,),
    "SUS-007": _CRONJOBS,
    "SUS-008": (JOB_CREATE,),
}
"""The requests each policy rule judges (docs/RULES.md says the same in words)."""

_AREA_REQUESTS: dict[str, tuple[str, ...]] = {
    "template": _JOBS,
    "jobspec": _JOBS,
    "successPolicy": _JOBS,
    "immutability": (JOB_UPDATE,),
    "status": (JOB_STATUS_UPDATE,),
    "cronjob": _CRONJOBS,
}


def judged_requests(rule: RuleInfo) -> tuple[str, ...]:
    """The requests a rule judges; every request for a rule of an area not listed here."""
    if rule.id in POLICY_RULE_REQUESTS:
        return POLICY_RULE_REQUESTS[rule.id]
    if rule.id == "IM-008":  # label syntax on CREATE too, and metadata on status updates
        return (JOB_CREATE, JOB_UPDATE, JOB_STATUS_UPDATE)
    return _AREA_REQUESTS.get(rule.area, REQUESTS)


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
        if _needs_policies(rule.info) and not settings.policies.policies:
            continue  # SUS rules judge nothing without a suspend policy
        if per_policy(rule.info) is not for_policies:
            continue
        for request in judged_requests(rule.info):
            current = out.get(request)
            if current is None or _rank(rule.enforcement) > _rank(current):
                out[request] = rule.enforcement
    return out


def _needs_policies(rule: RuleInfo) -> bool:
    return rule.area == "policy"


def per_policy(rule: RuleInfo) -> bool:
    """A rule each suspend policy's own registration carries: a SUS rule on `jobs`, which judges
    only the Jobs in a policy's scope (SUS-007 judges CronJobs, outside any Job's scope)."""
    return _needs_policies(rule) and all(
        request in (JOB_CREATE, JOB_UPDATE) for request in judged_requests(rule)
    )


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


CHART_RULES_HEADER = (
    "# Generated from jobguard/validators/catalog.py by `make docs`\n"
    "# (python -m jobguard.app.webhooks charts/jobguard/files/rules.yaml); do not edit.\n"
    "# The chart reads it to register only the webhooks a configuration needs and to check\n"
    "# rule IDs at render time (templates/_rules.tpl).\n"
)


def render_chart_rules() -> str:
    """The chart's copy of the catalogue and the built-in exemptions (JSON lines are YAML)."""
    lines = [CHART_RULES_HEADER, "builtInExemptions:"]
    built_in = subjects_config(BUILT_IN_EXEMPTIONS)
    lines += [f"  {key}: {json.dumps(value)}" for key, value in built_in.items()]
    lines.append("rules:")
    for rule in RULES:
        entry = {
            "policy": not rule.upstream,
            "needsSuspendPolicies": _needs_policies(rule),
            "perPolicy": per_policy(rule),
            "enabled": rule.enabled_by_default,
            "enforcement": rule.default_enforcement.value,
            "aliases": [r.id for r in RULES if r.alias_of == rule.id],
            "requests": list(judged_requests(rule)),
        }
        lines.append(f"  {json.dumps(rule.id)}: {json.dumps(entry)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobguard.app.webhooks",
        description="Write the chart's copy of the rule catalogue.",
    )
    parser.add_argument("file", help="charts/jobguard/files/rules.yaml")
    args = parser.parse_args(argv)
    path = Path(args.file)
    text = render_chart_rules()
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
