"""Generated labels and selectors (TM-005..TM-007) and pod template mutability (TM-001..TM-004)
for batch/v1 Jobs, on the Job as sent (`JobJson`); docs/RULES.md, "Pod template and selectors (TM)".

Upstream: `pkg/apis/batch/validation/validation.go` (validateGeneratedSelector, ValidateJobSpec's selector checks, validatePodTemplateUpdate), kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.defaults import default_pod_template
from jobguard.validators.errors import FieldChange, FieldError, immutable, invalid, required
from jobguard.validators.model import JobJson
from jobguard.validators.podtemplate import (
    equal_after_defaults,
    overlay_resources,
    overlay_scheduling_directives,
)
from jobguard.validators.prepare import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from jobguard.validators.selectors import (
    LabelSelectorOptions,
    label_selector_has_invalid_label_value,
    selector_matches,
    validate_label_selector,
    validate_selector,
)
from jobguard.validators.semantic import field_changes
from jobguard.validators.strategy import JobOptions


def validate_generated_selector(
    job: JobJson, old: JobJson | None, path: str, opts: JobOptions
) -> list[FieldError]:
    """TM-005 (upstream validateGeneratedSelector): the labels and selector the server
    generated must be intact (`path` is the Job's spec; `old` is not read)."""
    selector = job.selector
    if job.spec.get("manualSelector") is True or selector is None:
        return []
    errors: list[FieldError] = []
    uid = job.metadata.get("uid") or ""
    name = job.metadata.get("name") or ""
    if not uid:
        errors.append(required("TM-005", "metadata.uid"))  # the Job's, beside `path`
    labels = job.template_labels
    expected = [(LEGACY_CONTROLLER_UID_LABEL, uid), (LEGACY_JOB_NAME_LABEL, name)]
    if opts.require_prefixed_labels:
        expected += [(CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, name)]
    for key, value in expected:
        label_path = f"{path}.template.metadata.labels[{key}]"
        if key not in labels:
            errors.append(required("TM-005", label_path, f"must be '{value}'"))
        elif labels[key] != value:
            errors.append(invalid("TM-005", label_path, labels, f"must be '{value}'"))
    expected_selector_labels = {LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name}
    if opts.require_prefixed_labels:
        expected_selector_labels[CONTROLLER_UID_LABEL] = uid
        expected_selector_labels[JOB_NAME_LABEL] = name
    selector_path = f"{path}.selector"
    selector_parses = not validate_selector("TM-005", selector, selector_path)
    if selector_parses and not selector_matches(selector, expected_selector_labels):
        errors.append(invalid("TM-005", selector_path, selector, "`selector` not auto-generated"))
    return errors


def validate_job_spec_selector(
    job: JobJson, old: JobJson | None, path: str, allow_invalid_label_value: bool, version: str
) -> list[FieldError]:
    """TM-007 selector required and valid (ValidateLabelSelector, with upstream's
    AllowInvalidLabelValueInSelector); TM-006 it selects the template labels (`path` is the
    Job's spec)."""
    selector = job.selector
    labels = job.template_labels
    errors: list[FieldError] = []
    if selector is None:
        # A null selector selects nothing, so upstream reports the labels mismatch too.
        errors.append(required("TM-007", f"{path}.selector"))
    else:
        errors += validate_label_selector(
            "TM-007",
            selector,
            LabelSelectorOptions(version, allow_invalid_label_value),
            f"{path}.selector",
        )
        # LabelSelectorAsSelector fails on any of these (an invalid value too): no match.
        if errors or (
            allow_invalid_label_value and label_selector_has_invalid_label_value(selector)
        ):
            return errors
    if not selector_matches(selector, labels):
        errors.append(
            invalid(
                "TM-006",
                f"{path}.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        )
    return errors


def validate_pod_template_update(
    new: JobJson, old: JobJson, path: str, opts: JobOptions
) -> list[FieldError]:
    """TM-001..TM-004 (upstream validatePodTemplateUpdate): the pod template is immutable but
    for what the options relax, judged on the old Job (TM-004). `path` is the Job's spec."""
    new_template, old_template = new.template, old.template
    if opts.allow_mutable_scheduling_directives:
        old_template = overlay_scheduling_directives(old_template, new_template)
    if opts.allow_mutable_pod_resources:
        # TM-003 replaces TM-001: only the pod spec is compared (metadata is not, upstream).
        new_pod = new_template.get("spec") or {}
        old_pod = overlay_resources(old_template.get("spec") or {}, new_pod)
        if not equal_after_defaults({"spec": old_pod}, {"spec": new_pod}):
            at = f"{path}.template.spec"
            changes = _changes({"spec": old_pod}, {"spec": new_pod}, at, "spec")
            return [immutable("TM-003", at, new_pod, changes)]
        return []
    if not equal_after_defaults(old_template, new_template):
        at = f"{path}.template"
        return [immutable("TM-001", at, new_template, _changes(old_template, new_template, at))]
    return []


def _changes(old: Any, new: Any, path: str, part: str = "") -> tuple[FieldChange, ...]:
    """The fields that differ once both templates are defaulted (what is compared; relaxed
    directives are already copied over the old one)."""
    old, new = default_pod_template(old), default_pod_template(new)
    if part:
        old, new = old.get(part), new.get(part)
    return field_changes(old, new, path)
