"""OM-001..OM-005: object metadata (upstream ValidateObjectMeta, ValidateCronJobCreate;
docs/RULES.md, "Object metadata (OM)").

Follows k8s.io/apimachinery `pkg/api/validation/objectmeta.go` at v0.37.2
(`ValidateObjectMetaAccessor`, `ValidateOwnerReferences`, `validateOwnerReference`,
`ValidateFinalizers`, `ValidateFinalizerName`) and k8s.io/kubernetes
`pkg/apis/core/validation/validation.go` at v1.37.2 (`validateKubeFinalizerName`, which
`ValidateObjectMeta` and `ValidateObjectMetaUpdate` add). The finalizer checks are the same in
v1.33-v1.36; `validateOwnerReference` and `ValidateOwnerReferences` of v0.33-v0.36 are kept as
the branches `versions.CHANGES` names (OwnerReferencesByIndex, OwnerReferenceShortMessages).

Label and annotation syntax and size are IM-008 (`rules.metadata_update`). Name checks run on
CREATE only: on UPDATE the name is immutable and upstream does not judge its syntax again. The
owner references and finalizers are judged on UPDATE too: the generic registry's
`validateCommonFields` runs `ValidateObjectMetaAccessor` before every update.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobguard.validators.errors import FieldError, invalid, required
from jobguard.validators.model import ObjectMeta
from jobguard.validators.names import (
    dns1123_label_problems,
    label_wording,
    max_len_error,
    name_is_dns_subdomain,
)
from jobguard.validators.prepare import name_from_generate_name
from jobguard.validators.rules.pod_common import go_string, string_list
from jobguard.validators.versions import Release

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


def validate_object_meta_accessor(
    metadata: ObjectMeta, old: ObjectMeta | None, path: str, opts: NameOptions
) -> list[FieldError]:
    """ValidateObjectMetaAccessor's name checks (generateName and name as DNS subdomains) and
    its common part's namespace (a DNS label); create-style: `old` is not read."""
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


def validate_cron_job_create(
    metadata: ObjectMeta, old: ObjectMeta | None, path: str, opts: None
) -> list[FieldError]:
    """ValidateCronJobCreate's name length: at most 52 characters (CREATE only, so longer old
    names stay; its ValidateObjectMeta is `validate_object_meta_accessor` and
    `validate_object_meta`)."""
    name = generated_name(metadata)
    if len(name) > MAX_CRONJOB_NAME_LENGTH:
        return [invalid("OM-002", f"{path}.name", name, max_len_error(MAX_CRONJOB_NAME_LENGTH))]
    return []


# --- owner references (OM-004) and finalizers (OM-005) -------------------------------------------

BANNED_OWNERS = frozenset({("", "v1", "Event")})
"""BannedOwners: (group, version, kind) that may not own an object."""
FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
STANDARD_FINALIZERS = frozenset(
    {"kubernetes", FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS}
)
"""helper.IsStandardFinalizerName (core's FinalizerKubernetes and the two metav1 ones)."""
# metav1.OwnerReference's members in Go's order (the value an error prints).
_OWNER_REFERENCE_FIELDS = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")


def parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: (group, version), None where Go returns an error."""
    if not api_version or api_version == "/":
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return None


def _owner_reference_value(ref: Mapping[str, Any]) -> dict[str, Any]:
    """The reference as the typed metav1.OwnerReference holds it (unknown members dropped)."""
    return {key: ref[key] for key in _OWNER_REFERENCE_FIELDS if ref.get(key) is not None}


def validate_owner_reference(ref: Mapping[str, Any], path: str, version: str) -> list[FieldError]:
    """validateOwnerReference, as the API server of `version` has it (versions.CHANGES:
    OwnerReferencesByIndex, OwnerReferenceShortMessages)."""
    errors: list[FieldError] = []
    release = Release.of(version)
    api_version = go_string(ref.get("apiVersion"))
    kind, name, uid = (go_string(ref.get(key)) for key in ("kind", "name", "uid"))
    parsed = parse_group_version(api_version)
    group, version_part = parsed if parsed is not None else ("", "")
    if release.has("OwnerReferencesByIndex"):
        if not api_version:
            errors.append(required("OM-004", f"{path}.apiVersion", "must not be empty"))
        elif parsed is None or not version_part:
            detail = "must be <group>/<version> or <version>"
            errors.append(invalid("OM-004", f"{path}.apiVersion", api_version, detail))
        for key, value in (("kind", kind), ("name", name), ("uid", uid)):
            if not value:
                errors.append(required("OM-004", f"{path}.{key}", "must not be empty"))
    else:
        # schema.FromAPIVersionAndKind: an unparsable apiVersion has no version either.
        if not version_part:
            detail = "version must not be empty"
            errors.append(invalid("OM-004", f"{path}.apiVersion", api_version, detail))
        short = release.has("OwnerReferenceShortMessages")
        for key, value in (("kind", kind), ("name", name), ("uid", uid)):
            if not value:
                detail = "must not be empty" if short else f"{key} must not be empty"
                errors.append(invalid("OM-004", f"{path}.{key}", value, detail))
    if (group, version_part, kind) in BANNED_OWNERS:
        detail = f"{group}/{version_part}, Kind={kind} is disallowed from being an owner"
        errors.append(invalid("OM-004", path, _owner_reference_value(ref), detail))
    return errors


def validate_owner_references(owner_references: Any, path: str, version: str) -> list[FieldError]:
    """ValidateOwnerReferences: each reference (under its index from 1.37, under the list's
    path before), and at most one controller."""
    errors: list[FieldError] = []
    if not isinstance(owner_references, list):
        return errors  # absent, or a type the decoder names
    by_index = Release.of(version).has("OwnerReferencesByIndex")
    first_controller = ""
    for index, ref in enumerate(owner_references):
        if not isinstance(ref, Mapping):
            continue
        errors += validate_owner_reference(ref, f"{path}[{index}]" if by_index else path, version)
        if ref.get("controller") is True:
            current = f"{go_string(ref.get('kind'))}/{go_string(ref.get('name'))}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {first_controller} and {current}"
                )
                value = [
                    _owner_reference_value(r) for r in owner_references if isinstance(r, Mapping)
                ]
                errors.append(invalid("OM-004", path, value, detail))
            else:
                first_controller = current
    return errors


def validate_finalizers(finalizers: Any, path: str, version: str) -> list[FieldError]:
    """ValidateFinalizers (with ValidateFinalizerName): qualified names (in the words of
    release `version`), and not both orphan and foregroundDeletion. The errors name the list,
    not the item, as upstream's do."""
    key_problems = label_wording(version).key
    errors: list[FieldError] = []
    names = string_list(finalizers)
    for finalizer in names:
        errors += [
            invalid("OM-005", path, finalizer, problem) for problem in key_problems(finalizer)
        ]
    if FINALIZER_ORPHAN_DEPENDENTS in names and FINALIZER_DELETE_DEPENDENTS in names:
        detail = (
            f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} cannot "
            "be both set"
        )
        errors.append(invalid("OM-005", path, names, detail))
    return errors


def validate_kube_finalizer_name(value: str, path: str) -> list[FieldError]:
    """validateKubeFinalizerName: a finalizer without a domain is one of the standard ones."""
    if len(value.split("/")) == 1 and value not in STANDARD_FINALIZERS:
        detail = "name is neither a standard finalizer name nor is it fully qualified"
        return [invalid("OM-005", path, value, detail)]
    return []


def kube_finalizer_names(finalizers: Any, path: str) -> list[FieldError]:
    """core's ValidateObjectMeta and ValidateObjectMetaUpdate: validateKubeFinalizerName of
    each finalizer, by index (`path` is the list's)."""
    errors: list[FieldError] = []
    for index, finalizer in enumerate(finalizers if isinstance(finalizers, list) else ()):
        if isinstance(finalizer, str):
            errors += validate_kube_finalizer_name(finalizer, f"{path}[{index}]")
    return errors


def owner_references_and_finalizers(
    metadata: Mapping[str, Any], path: str, version: str
) -> list[FieldError]:
    """ValidateObjectMetaAccessor's part after the labels and annotations: the owner references,
    then the finalizers (apimachinery's checks only)."""
    refs = metadata.get("ownerReferences")
    errors = validate_owner_references(refs, f"{path}.ownerReferences", version)
    return errors + validate_finalizers(metadata.get("finalizers"), f"{path}.finalizers", version)


def validate_object_meta(
    metadata: Mapping[str, Any], old: None, path: str, opts: str
) -> list[FieldError]:
    """Core's ValidateObjectMeta of release `opts` on CREATE, its OM-004 and OM-005 part: the
    apimachinery checks, then validateKubeFinalizerName for each finalizer."""
    errors = owner_references_and_finalizers(metadata, path, opts)
    return errors + kube_finalizer_names(metadata.get("finalizers"), f"{path}.finalizers")
