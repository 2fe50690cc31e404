"""CronJob `spec.jobTemplate` (CJ-001..CJ-005; docs/RULES.md, "CronJob templates (CJ)").

Only the create-style Job spec checks run on the template, on CREATE and UPDATE alike; the
template is freely mutable (CJ-002) and has no status (CJ-004). The Job defaulter does not run
on a CronJob's template, so its completions and completionMode stay as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from jobguard.validators.errors import FieldError, invalid, not_supported
from jobguard.validators.model import CronJob, as_sent
from jobguard.validators.rules.jobspec import validate_job_spec
from jobguard.validators.strategy import SpecOptions


def _as_cronjob_rule(error: FieldError) -> FieldError:
    rule = "CJ-001" if error.rule.startswith("SP-") else "CJ-005"
    return replace(error, rule=rule)


def validate_job_template_spec(
    cronjob: CronJob,
    old: CronJob | None,
    path: str,
    version: str,
    template_errors: Sequence[FieldError] = (),
) -> list[FieldError]:
    """ValidateJobTemplateSpec: CJ-001..CJ-005 on the CronJob's spec at `path`, the same on
    CREATE and UPDATE (the template is freely mutable), so `old` is not read.
    `template_errors`: the pod template's errors (POD-*, kept as they are), placed where
    upstream's validateJobSpec runs ValidatePodTemplateSpec."""
    spec = cronjob.spec.job_template.spec
    spec_path = f"{path}.jobTemplate.spec"
    kept = {id(error) for error in template_errors}
    errors = [
        error if id(error) in kept else _as_cronjob_rule(error)
        for error in validate_job_spec(
            spec, None, spec_path, SpecOptions(defaulted=False, version=version), template_errors
        )
    ]
    selector = as_sent(spec.selector)
    if selector is not None:
        errors.append(
            invalid(
                "CJ-003", f"{spec_path}.selector", selector, "`selector` will be auto-generated"
            )
        )
    if spec.manual_selector is True:
        errors.append(
            not_supported("CJ-003", f"{spec_path}.manualSelector", True, ["nil", "false"])
        )
    return errors
