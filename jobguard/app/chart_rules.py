"""The chart's copy of the catalogue, which lets Helm work out at render time which admission
requests a configuration needs the API server to send.

The API server already runs its own Job validation before the validating webhooks, so in a live
cluster the upstream rules (TM, IM, JS, SP, ST, CJ, DEC) can only deny where jobguard's semantics
differ from the cluster's. Two profiles (the chart's `webhook.profile`) say which rules a webhook
registration is for:

- `policy` (the chart's default): the policy rules (NE, SUS), which the API server does not
  enforce; requests no enabled policy rule judges are never sent, and exempt requesters are
  skipped by the API server (`matchConditions`).
- `full`: every rule, as defence in depth or for clusters whose version or gates lack them.

Each suspend policy has a registration of its own for its SUS rules on Jobs (`per_policy`),
scoped to the policy and failing closed: its guarantee must hold while jobguard is unavailable,
and nothing outside the policy waits for jobguard. Every other registration fails open, and so
does a registration whose rules can only warn (or dry-run): it can never deny.

Which requests a rule judges is the catalogue's `RuleInfo.requests`. `python -m
jobguard.app.chart_rules FILE` writes the chart's copy (`charts/jobguard/files/rules.yaml`, `make
docs`); tests keep it current and render the chart for several configurations to compare its
registrations with a model of them (tests/registrations.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jobguard.app.config import subjects_config
from jobguard.validators import BUILT_IN_EXEMPTIONS, RULES, RuleInfo
from jobguard.validators.registrations import per_policy


def judged_requests(rule: RuleInfo) -> tuple[str, ...]:
    """The requests a rule judges (its catalogue entry's `requests`)."""
    return rule.requests


CHART_RULES_HEADER = (
    "# Generated from jobguard/validators/catalog.py by `make docs`\n"
    "# (python -m jobguard.app.chart_rules charts/jobguard/files/rules.yaml); do not edit.\n"
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
            "needsSuspendPolicies": rule.needs_suspend_policies,
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
        prog="python -m jobguard.app.chart_rules",
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
