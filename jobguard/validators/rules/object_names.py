"""OM-001..OM-003: object metadata on CREATE (upstream ValidateObjectMeta, ValidateCronJobCreate;
docs/RULES.md, "Object metadata (OM)").

Label and annotation syntax and size are IM-008 (`rules.metadata`). Name checks run on CREATE
only: on UPDATE the name is immutable and upstream does not judge its syntax again.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobguard.validators.errors import FieldError, invalid, required
from jobguard.validators.model import ObjectMeta
from jobguard.validators.names import (
    dns1123_label_problems,
    max_len_error,
    name_is_dns_subdomain,
)
from jobguard.validators.prepare import name_from_generate_name

# The CronJob controller names its Jobs `<cronjob>-<11 characters>`, within a 63-character
# label value.
MAX_CRONJOB_NAME_LENGTH = 52


def generated_name(metadata: ObjectMeta) -> str:
    """The name the API server validates: the given one, or one generated from generateName
    (the random suffix stands in as `xxxxx`)."""
    if metadata.name:
        return metadata.name
    if metadata.generate_name:
        return name_from_generate_name(metadata.generate_name)
    return ""


@dataclass(frozen=True, slots=True)
class NameOptions:
    namespace: str
    """The request's namespace, judged when the object names none (the API server sets it
    before validating); no namespace at all is left alone."""


def check_object_meta(
    metadata: ObjectMeta, old: ObjectMeta | None, path: str, opts: NameOptions
) -> list[FieldError]:
    """generateName and name as DNS subdomains, the namespace as a DNS label (create-style:
    `old` is not read)."""
    errors: list[FieldError] = []
    if metadata.generate_name:
        for problem in name_is_dns_subdomain(metadata.generate_name, True):
            errors.append(
                invalid("OM-001", f"{path}.generateName", metadata.generate_name, problem)
            )
    name = generated_name(metadata)
    if not name:
        errors.append(required("OM-001", f"{path}.name", "name or generateName is required"))
    for problem in name_is_dns_subdomain(name, False) if name else ():
        errors.append(invalid("OM-001", f"{path}.name", name, problem))
    namespace = metadata.namespace or opts.namespace
    # ValidateNamespaceName: NameIsDNSLabel, never a prefix here.
    for problem in dns1123_label_problems(namespace) if namespace else ():
        errors.append(invalid("OM-003", f"{path}.namespace", namespace, problem))
    return errors


def check_cronjob_name_length(
    metadata: ObjectMeta, old: ObjectMeta | None, path: str, opts: None
) -> list[FieldError]:
    """ValidateCronJobCreate: at most 52 characters (CREATE only, so longer old names stay)."""
    name = generated_name(metadata)
    if len(name) > MAX_CRONJOB_NAME_LENGTH:
        return [invalid("OM-002", f"{path}.name", name, max_len_error(MAX_CRONJOB_NAME_LENGTH))]
    return []
