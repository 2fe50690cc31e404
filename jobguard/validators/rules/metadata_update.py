"""IM-008 and OM-005 on UPDATE: object metadata rules (upstream ValidateObjectMeta /
ValidateObjectMetaUpdate).

Follows k8s.io/apimachinery `pkg/api/validation/objectmeta.go` at v0.37.2
(`ValidateObjectMetaAccessorUpdate`, `ValidateNoNewFinalizers`, `ValidateAnnotations`; metav1
`ValidateLabels` is `pod_common.validate_labels`) as the generic registry's `validateCommonFields`
(k8s.io/apiserver `pkg/registry/rest/update.go`) and core's `ValidateObjectMetaUpdate`
(k8s.io/kubernetes v1.37.2) call it; the same in v1.33-v1.36.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jobguard.validators.errors import (
    ABSENT,
    ErrorType,
    FieldChange,
    FieldError,
    forbidden,
    immutable,
    invalid,
    render_value,
)
from jobguard.validators.names import label_wording
from jobguard.validators.rules.object_names import (
    kube_finalizer_names,
    owner_references_and_finalizers,
)
from jobguard.validators.rules.pod_common import validate_labels
from jobguard.validators.semantic import normalize

_MAX_ANNOTATIONS_BYTES = 256 * 1024
_IMMUTABLE_META = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def validate_annotations(annotations: Any, path: str, version: str) -> list[FieldError]:
    """ValidateAnnotations (IM-008): keys as label keys (lower-cased), in the words of release
    `version`, and the total size."""
    key_problems = label_wording(version).key
    errors: list[FieldError] = []
    total = 0
    for key, value in (annotations or {}).items():
        for problem in key_problems(key.lower()):
            errors.append(invalid("IM-008", path, key, problem))
        total += len(key) + len(value if isinstance(value, str) else "")
    if total > _MAX_ANNOTATIONS_BYTES:
        errors.append(
            FieldError(
                "IM-008",
                path,
                ErrorType.TOO_LONG,
                f"may not be more than {_MAX_ANNOTATIONS_BYTES} bytes",
            )
        )
    return errors


def validate_labels_and_annotations(
    metadata: Mapping[str, Any], old: None, path: str, version: str
) -> list[FieldError]:
    """IM-008: ValidateLabels then ValidateAnnotations (ValidateObjectMeta's part of it), on the
    metadata as sent, in the words of release `version` (names.label_wording)."""
    errors = validate_labels("IM-008", metadata.get("labels") or {}, f"{path}.labels", version)
    return errors + validate_annotations(
        metadata.get("annotations"), f"{path}.annotations", version
    )


@dataclass(frozen=True, slots=True)
class MetadataOptions:
    syntax: bool
    """Label and annotation syntax is judged too (False: the caller already judged it)."""
    version: str
    """The release whose owner-reference checks apply (versions.RELEASES)."""


@lru_cache(maxsize=16)
def with_syntax(version: str) -> MetadataOptions:
    return MetadataOptions(syntax=True, version=version)


@lru_cache(maxsize=16)
def without_syntax(version: str) -> MetadataOptions:
    return MetadataOptions(syntax=False, version=version)


def validate_no_new_finalizers(new: Any, old: Any, path: str) -> list[FieldError]:
    """ValidateNoNewFinalizers: an object being deleted gains no finalizer."""
    old_names = {f for f in old if isinstance(f, str)} if isinstance(old, list) else set()
    new_names = {f for f in new if isinstance(f, str)} if isinstance(new, list) else set()
    extra = sorted(new_names - old_names)
    if not extra:
        return []
    # Go's %#v of a []string.
    listed = ", ".join(render_value(name) for name in extra)
    detail = (
        "no new finalizers can be added if the object is being deleted, found new finalizers "
        f"[]string{{{listed}}}"
    )
    return [forbidden("OM-005", path, detail)]


def validate_object_meta_update(
    new: Mapping[str, Any], old: Mapping[str, Any], path: str, opts: MetadataOptions
) -> list[FieldError]:
    """ValidateObjectMetaUpdate as an UPDATE reaches it: IM-008, OM-004 and OM-005 on the
    metadata as sent, in the order an UPDATE reports them first: the registry's validateCommonFields (ValidateObjectMetaAccessor: labels,
    annotations, owner references, finalizers; then ValidateObjectMetaAccessorUpdate: no new
    finalizers while deleting, the immutable members), then core's Kubernetes finalizer names.
    Without `opts.syntax` the caller already judged the create-style part."""
    errors: list[FieldError] = []
    if opts.syntax:
        errors += validate_labels_and_annotations(new, None, path, opts.version)
        errors += owner_references_and_finalizers(new, path, opts.version)
    if old.get("deletionTimestamp") is not None:
        errors += validate_no_new_finalizers(
            new.get("finalizers"), old.get("finalizers"), f"{path}.finalizers"
        )
    for key in _IMMUTABLE_META:
        new_value, old_value = new.get(key), old.get(key)
        if new_value != old_value and normalize({key: new_value}) != normalize({key: old_value}):
            change = FieldChange(f"{path}.{key}", old.get(key, ABSENT), new.get(key, ABSENT))
            errors.append(immutable("IM-008", f"{path}.{key}", new_value, (change,)))
    if opts.syntax:
        errors += kube_finalizer_names(new.get("finalizers"), f"{path}.finalizers")
    return errors
