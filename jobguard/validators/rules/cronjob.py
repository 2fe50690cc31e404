"""CronJob `spec.jobTemplate` (CJ-001..CJ-005; docs/RULES.md, "CronJob templates (CJ)").

Only the create-style Job spec checks run on the template, on CREATE and UPDATE alike; the
template is freely mutable (CJ-002) and has no status (CJ-004). The Job defaulter does not run
on a CronJob's template, so its completions and completionMode stay as written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jobguard.validators.context import CronJobContext
from jobguard.validators.errors import FieldError, invalid, not_supported
from jobguard.validators.rules.jobspec import check_job_spec

PATH = "spec.jobTemplate.spec"


def _as_cronjob_rule(error: FieldError) -> FieldError:
    rule = "CJ-001" if error.rule.startswith("SP-") else "CJ-005"
    return replace(error, rule=rule)


def check_cronjob(ctx: CronJobContext) -> list[FieldError]:
    spec = ctx.new.spec.job_template.spec
    raw_spec: Any = ctx.new_raw
    for key in ("spec", "jobTemplate", "spec"):
        raw_spec = raw_spec.get(key) if isinstance(raw_spec, dict) else None
    raw_spec = raw_spec if isinstance(raw_spec, dict) else {}
    errors = [_as_cronjob_rule(e) for e in check_job_spec(spec, raw_spec, PATH, defaulted=False)]
    if raw_spec.get("selector") is not None:
        errors.append(
            invalid(
                "CJ-003",
                f"{PATH}.selector",
                raw_spec["selector"],
                "`selector` will be auto-generated",
            )
        )
    if spec.manual_selector is True:
        errors.append(not_supported("CJ-003", f"{PATH}.manualSelector", True, ["nil", "false"]))
    return errors
